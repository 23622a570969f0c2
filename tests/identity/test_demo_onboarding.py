"""The demo distributor was onboarded as a real one: its envelope is signed, with its documents
stored, so an admin can approve it again once an IBAN change sent its KYB back to review (the
walk of docs/bank.md)."""

from __future__ import annotations

from backend.identity.demo import seed_demo_identity
from backend.identity.models import Organization, User
from backend.onboarding.demo import DEMO_DISTRIBUTOR, seed_demo_onboarding
from backend.onboarding.documents import SIGNED_CONTEXT
from backend.onboarding.models import SignatureDocument, SignatureRequest
from backend.runtime import current_runtime
from tests.billing.self_billing.data import admin_headers
from tests.factories import signed_in


def test_the_demo_distributor_is_approved_again_after_its_manager_changed_the_iban(client):
    seed_demo_identity()
    runtime = current_runtime()
    assert "recorded" in seed_demo_onboarding(storage=runtime.storage, config=runtime.config)
    [envelope] = SignatureRequest.select().where(SignatureRequest.organization == DEMO_DISTRIBUTOR)
    assert (envelope.status, envelope.signer_on_registry_extract) == ("signed", True)
    documents = SignatureDocument.select().where(SignatureDocument.signature_request == envelope.id)
    assert sorted(d.document_type for d in documents) == ["cgu_acceptance", "framework_contract", "sepa_mandate"]
    for document in documents:
        assert runtime.storage.read_bytes(SIGNED_CONTEXT, document.signed_storage_key).startswith(b"%PDF")
    manager = signed_in(User.get(User.email == "distributeur@vitrine.example"))
    path = f"/api/organizations/{DEMO_DISTRIBUTOR}"
    profile = client.simulate_get(path, headers=manager).json["data"]["organization"]["billingProfile"]
    body = {key: profile[key] for key in ("legalName", "siret", "vatNumber", "address", "signer", "billingEmail")}
    changed = client.simulate_put(f"{path}/billing-profile", headers=manager,
                                  json={**body, "iban": "FR1420041010050500013M02606"})
    assert changed.status_code == 200, changed.json
    assert Organization.get_by_id(DEMO_DISTRIBUTOR).kyb_status == "submitted"
    approved = client.simulate_post(f"/api/admin/organizations/{DEMO_DISTRIBUTOR}/review", headers=admin_headers(),
                                    json={"status": "approved", "note": "nouvel IBAN confirmé"})
    assert approved.status_code == 200, approved.json
    assert "already" in seed_demo_onboarding(storage=runtime.storage, config=runtime.config)  # seeded once
    assert SignatureRequest.select().where(SignatureRequest.organization == DEMO_DISTRIBUTOR).count() == 1

