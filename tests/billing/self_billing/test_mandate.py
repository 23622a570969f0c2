"""The self-billing mandate (spec C): request through the e-signature simulator, state views,
refusals, a provider failure leaving nothing behind, revocation with its audit entry, the access
matrix of the four routes, and the signed PDF download."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from pypdf import PdfReader

from backend import clock
from backend.billing.invoicing.post_invoice_hook import signed_self_billing_mandate
from backend.billing.models import AuditEntry, SelfBillingMandate
from backend.billing.self_billing.mandate import DRAFT_IN_FLIGHT_SECONDS
from backend.billing.self_billing.mandate_document import STORAGE_CONTEXT
from backend.billing.self_billing.mandate_events import apply_provider_event
from backend.identity.models import BillingProfile
from backend.marketplace.demo import DISTRIBUTOR
from backend.runtime import current_runtime
from ops.seed import seed_demo
from tests.billing.self_billing.mandate_fixtures import (  # noqa: F401  (fixtures)
    app,
    distributor,
    make_simulator,
    provider,
    runtime,
    simulator,
)
from tests.factories import make_organization, make_user, signed_in


def _request(client, distributor):
    return client.simulate_post(distributor.path, headers=distributor.admin)


def test_an_admin_requests_the_mandate_at_the_electronic_level_for_the_billing_profile_signer(
        client, distributor, simulator):
    answer = _request(client, distributor)
    assert answer.status_code == 201, answer.text
    data = answer.json["data"]
    mandate = data["mandate"]
    assert mandate["status"] == "pending_signature" and mandate["requestedAt"].endswith("Z")
    assert mandate["signatureLevel"] == "electronic_signature" and mandate["documentAvailable"] is False
    pid = mandate["esignRequestRef"]
    assert data["signatureLink"] == f"{simulator.url}/sign/{pid}"
    remote = simulator.store.requests[pid]
    assert remote["status"] == "ongoing" and remote["external_id"] == mandate["id"]
    [signer] = remote["signers"]
    assert signer["signature_level"] == "electronic_signature"
    assert signer["signature_authentication_mode"] == "otp_email"
    assert signer["info"]["email"] == "alice@example.com" and signer["info"]["last_name"] == "Martin"
    [document] = remote["documents"]
    assert document["content"].startswith(b"%PDF-")
    row = SelfBillingMandate.get_by_id(mandate["id"])
    assert row.organization_id == distributor.organization.id and row.esign_request_ref == pid


def test_the_mandate_pdf_states_every_mention_spec_c_lists(client, distributor, simulator):
    """Both parties (platform agent, distributor supplier), the object, tacit or express
    acceptance with a 30-day contestation delay, unlimited duration, revocable at any time by
    notification, electronic signature by the distributor's legal signatory."""
    pid = _request(client, distributor).json["data"]["mandate"]["esignRequestRef"]
    pdf = simulator.store.requests[pid]["documents"][0]["content"]
    text = " ".join(" ".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages).split())
    organization = distributor.organization
    for mention in (f"{organization.legal_name} SAS, SIREN {organization.siren}", "12 rue des Lilas, 74000 Annecy",
                    "représentée par Alice Martin", "« le Fournisseur »", "« le Mandataire »", "article 289",
                    "(autofacturation)", "délai de 30 jours", "réputée acceptée tacitement",
                    "l'accepter expressément", "durée indéterminée", "révocable à tout moment",
                    "notification écrite", "signé électroniquement par le signataire légal du Fournisseur"):
        assert mention in text, mention


def test_a_second_request_while_one_is_active_is_409_before_any_write(client, distributor, simulator):
    assert _request(client, distributor).status_code == 201
    before = len(simulator.store.requests)
    again = _request(client, distributor)
    assert again.status_code == 409 and again.json["error"]["code"] == "CONFLICT"
    assert again.json["error"]["details"]["reason"] == "mandate_active"
    assert len(simulator.store.requests) == before  # the provider was not called
    assert SelfBillingMandate.select().where(
        SelfBillingMandate.organization_id == distributor.organization.id).count() == 1


def test_request_refusals(client, distributor, simulator):
    industrial = make_organization("industrial", kyb_status="approved")
    answer = client.simulate_post(f"/api/billing/organizations/{industrial.id}/self-billing-mandate",
                                  headers=distributor.admin)
    assert answer.status_code == 409 and answer.json["error"]["details"]["reason"] == "not_a_distributor"
    BillingProfile.delete().where(BillingProfile.organization == distributor.organization.id).execute()
    answer = _request(client, distributor)
    assert answer.status_code == 409 and answer.json["error"]["details"]["reason"] == "billing_profile_missing"
    unknown = client.simulate_post("/api/billing/organizations/distributor:000000000/self-billing-mandate",
                                   headers=distributor.admin)
    assert unknown.status_code == 404
    assert SelfBillingMandate.select().count() == 0 and simulator.store.requests == {}


def test_a_provider_failure_leaves_nothing_behind_and_a_retry_succeeds(client, distributor, simulator, log_lines):
    simulator.store.faults.update({"reject_uploads": True})
    failed = _request(client, distributor)
    assert failed.status_code == 502 and failed.json["error"]["code"] == "ESIGN_PROVIDER_FAILED"
    [abandoned] = SelfBillingMandate.select()  # kept, marked: no billing row is deleted
    assert abandoned.status == "abandoned" and abandoned.abandoned_at is not None
    [orphan] = simulator.store.requests.values()
    assert orphan["status"] == "canceled"  # the provider request cannot be signed
    assert [line for line in log_lines() if line.get("scope") == "billing.self_billing_mandate.request_failed"]
    simulator.store.faults.update({"reject_uploads": False})
    retried = _request(client, distributor)
    assert retried.status_code == 201 and retried.json["data"]["mandate"]["status"] == "pending_signature"


def test_a_draft_in_flight_is_409_and_a_stale_draft_is_taken_over(client, distributor, simulator):
    draft = SelfBillingMandate.create(organization_id=distributor.organization.id, status="draft",
                                      signer={"firstName": "A", "lastName": "B", "email": "a@example.com"})
    busy = _request(client, distributor)
    assert busy.status_code == 409 and busy.json["error"]["details"]["reason"] == "mandate_request_in_progress"
    with clock.frozen_at(draft.created_at + timedelta(seconds=DRAFT_IN_FLIGHT_SECONDS + 60)):
        assert _request(client, distributor).status_code == 201
    assert SelfBillingMandate.get_by_id(draft.id).status == "abandoned"


def _signed(distributor, provider, simulator, runtime) -> SelfBillingMandate:
    mandate = SelfBillingMandate.get(SelfBillingMandate.organization_id == distributor.organization.id)
    simulator.store.act(mandate.esign_request_ref, "sign")
    assert apply_provider_event(mandate.id, "evt-done", "signature_request.done", provider=provider,
                                storage=runtime.storage) == "signed"
    return SelfBillingMandate.get_by_id(mandate.id)


def test_get_shows_statuses_and_dates_to_members_and_the_provider_fields_to_admins_only(
        client, distributor, simulator, provider, runtime):
    assert client.simulate_get(distributor.path, headers=distributor.admin).status_code == 404
    assert _request(client, distributor).status_code == 201
    mandate = _signed(distributor, provider, simulator, runtime)
    full = client.simulate_get(distributor.path, headers=distributor.admin).json["data"]["mandate"]
    assert full["status"] == "signed" and full["esignRequestRef"] == mandate.esign_request_ref
    assert full["documentStorageKey"] == mandate.document_storage_key and full["documentAvailable"] is True
    for headers in distributor.members.values():
        seen = client.simulate_get(distributor.path, headers=headers).json["data"]["mandate"]
        assert set(seen) == {"status", "documentAvailable", "createdAt", "requestedAt", "signedAt", "declinedAt",
                             "revokedAt"}
        assert seen["status"] == "signed" and seen["signedAt"].endswith("Z")


def test_revocation_needs_a_reason_and_a_signed_mandate_and_is_audited(
        client, distributor, simulator, provider, runtime):
    path, admin = distributor.path, distributor.admin
    none = client.simulate_delete(path, headers=admin, json={"reason": "fin du contrat"})
    assert none.status_code == 409 and none.json["error"]["details"]["reason"] == "no_signed_mandate"
    assert _request(client, distributor).status_code == 201
    pending = client.simulate_delete(path, headers=admin, json={"reason": "fin du contrat"})
    assert pending.status_code == 409  # only a signed mandate is revoked
    mandate = _signed(distributor, provider, simulator, runtime)
    for body in ({}, {"reason": ""}, {"reason": "   "}):
        missing = client.simulate_delete(path, headers=admin, json=body)
        assert missing.status_code == 400 and missing.json["error"]["code"] == "VALIDATION_ERROR"
    assert client.simulate_delete(path, headers=admin).status_code == 400  # no body at all
    assert SelfBillingMandate.get_by_id(mandate.id).status == "signed"
    revoked = client.simulate_delete(path, headers=admin, json={"reason": "fin du contrat"})
    assert revoked.status_code == 200, revoked.text
    data = revoked.json["data"]["mandate"]
    assert data["status"] == "revoked" and data["revokeReason"] == "fin du contrat" and data["revokedAt"]
    [entry] = AuditEntry.select().where(AuditEntry.action == "self_billing_mandate.revoked")
    assert entry.reason == "fin du contrat" and entry.actor_user_id == distributor.admin_user.id
    assert entry.details == {"organizationId": distributor.organization.id, "mandateId": mandate.id}
    again = client.simulate_delete(path, headers=admin, json={"reason": "encore"})
    assert again.status_code == 409
    assert _request(client, distributor).status_code == 201  # a revoked mandate frees the organization


def test_the_signed_pdf_downloads_once_stored(client, distributor, simulator, provider, runtime):
    document = f"{distributor.path}/document"
    assert client.simulate_get(document, headers=distributor.admin).status_code == 404
    assert _request(client, distributor).status_code == 201
    not_ready = client.simulate_get(document, headers=distributor.members["member"])
    assert not_ready.status_code == 404 and not_ready.json["error"]["code"] == "BILLING_PDF_NOT_READY"
    mandate = _signed(distributor, provider, simulator, runtime)
    for headers in (distributor.admin, *distributor.members.values()):
        answer = client.simulate_get(document, headers=headers)
        assert answer.status_code == 200 and answer.headers["content-type"] == "application/pdf"
        assert answer.content == runtime.storage.read_bytes(STORAGE_CONTEXT, mandate.document_storage_key)
        assert b"signed at esign simulator" in answer.content
        assert "attachment" in answer.headers["content-disposition"]


@pytest.mark.parametrize("route", ["post", "get", "delete", "document"])
def test_access_matrix(client, distributor, simulator, route):
    """Admin only for POST and DELETE (403 for every other role); GET for an admin or a member
    (404 for another distributor: never leak existence); the document for an admin or a member,
    else 403; no session 401."""
    assert _request(client, distributor).status_code == 201
    path = distributor.path + ("/document" if route == "document" else "")
    method = {"post": client.simulate_post, "get": client.simulate_get, "delete": client.simulate_delete,
              "document": client.simulate_get}[route]
    kwargs = {"json": {"reason": "test"}} if route == "delete" else {}
    expected_member = {"post": 403, "delete": 403, "get": 200, "document": 404}[route]  # 404: PDF not ready
    expected_outsider = {"post": 403, "delete": 403, "get": 404, "document": 403}[route]
    for headers in distributor.members.values():
        assert method(path, headers=headers, **kwargs).status_code == expected_member
    assert method(path, headers=distributor.outsider, **kwargs).status_code == expected_outsider
    assert method(path, headers=distributor.industrial, **kwargs).status_code == 403
    assert method(path, **kwargs).status_code == 401
    no_org = make_user(roles=["distributor"])
    assert method(path, headers=signed_in(no_org), **kwargs).status_code == expected_outsider


def test_the_demo_distributor_has_a_signed_mandate_with_its_pdf_and_seeding_twice_adds_nothing(client):
    seed_demo(current_runtime())
    [mandate] = SelfBillingMandate.select().where(SelfBillingMandate.organization_id == DISTRIBUTOR)
    assert mandate.status == "signed" and mandate.signed_at is not None
    pdf = current_runtime().storage.read_bytes(STORAGE_CONTEXT, mandate.document_storage_key)
    assert pdf.startswith(b"%PDF-") and len(pdf) > 1000
    seed_demo(current_runtime())
    assert SelfBillingMandate.select().where(SelfBillingMandate.organization_id == DISTRIBUTOR).count() == 1
    assert signed_self_billing_mandate(DISTRIBUTOR)
