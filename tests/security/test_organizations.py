"""KYB data frozen after approval, printer organizations provisioned by admins only, and the
admin answer to organization squatting."""

from __future__ import annotations

import urllib3

from backend import events
from backend.audit import SecurityEvent
from backend.identity.models import BillingProfile, Membership, Organization, User
from backend.outbox import OutboxMessage
from tests.factories import add_member, make_admin, make_organization, make_user, signed_in, siret_for
from tests.identity.test_organizations import billing_body

PDF = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"


def _approved(client):
    manager, organization = make_user(), make_organization(kyb_status=None)
    add_member(manager, organization)
    headers = signed_in(manager, organization)
    put = client.simulate_put(f"/api/organizations/{organization.id}/billing-profile", headers=headers,
                              json=billing_body(organization.siren))
    assert put.status_code == 200
    Organization.update(kyb_status="approved").where(Organization.id == organization.id).execute()
    return organization, headers


def _put(client, organization, headers, **changes):
    return client.simulate_put(f"/api/organizations/{organization.id}/billing-profile", headers=headers,
                               json=billing_body(organization.siren, **changes))


def _status(organization) -> str | None:
    return Organization.get_by_id(organization.id).kyb_status


def test_a_new_iban_reopens_kyb_blocks_the_workspace_and_ends_the_mandate(client, monkeypatch):
    monkeypatch.setitem(events.SUBSCRIBERS, events.ORGANIZATION_IBAN_CHANGED, ("probe_end_mandate",))
    organization, headers = _approved(client)
    assert _put(client, organization, headers, iban="FR14 2004 1010 0505 0001 3M02 606").status_code == 200
    assert _status(organization) == "submitted"
    workspace = client.simulate_get("/api/auth/session", headers=headers).json["data"]["workspace"]
    assert workspace["redirectTo"] == "/onboarding"
    audit = SecurityEvent.get(SecurityEvent.event == "kyb.reopened")
    assert audit.target_id == organization.id and audit.details["changed"] == ["iban"]
    sent = list(OutboxMessage.select().where(OutboxMessage.actor_name == "probe_end_mandate"))
    assert [row.args for row in sent] == [[organization.id]]


def test_legal_name_siret_and_signer_changes_reopen_kyb(client):
    for changes in ({"legalName": "Autre Nom SA"},
                    {"signer": {"firstName": "Paul", "lastName": "Martin", "email": "paul@example.com",
                                "phone": "06 12 34 56 78", "onRegistryExtract": True}}):
        organization, headers = _approved(client)
        assert _put(client, organization, headers, **changes).status_code == 200
        assert _status(organization) == "submitted", changes
    organization, headers = _approved(client)
    assert _put(client, organization, headers, siret=siret_for(organization.siren, "0002")).status_code == 200
    assert _status(organization) == "submitted"


def test_an_unchanged_profile_keeps_the_approval(client):
    organization, headers = _approved(client)
    assert _put(client, organization, headers).status_code == 200
    same = {**billing_body("")["address"], "country": "FR"}  # upper-cased as stored
    assert _put(client, organization, headers, address=same).status_code == 200
    assert _status(organization) == "approved"
    assert not SecurityEvent.select().where(SecurityEvent.event == "kyb.reopened").exists()


def test_address_country_and_vat_number_changes_reopen_kyb(client):
    """They say where invoices go and which VAT number they carry: an approved KYB vouched for them."""
    address = billing_body("")["address"]
    for changes, field in (({"address": {**address, "street": "2 rue Neuve"}}, "street"),
                           ({"address": {**address, "postalCode": "69001"}}, "postal_code"),
                           ({"address": {**address, "city": "Lyon"}}, "city"),
                           ({"address": {**address, "country": "BE"}}, "country"),
                           ({"vatNumber": "vat"}, "vat_number")):
        organization, headers = _approved(client)
        if field == "vat_number":
            changes = {"vatNumber": f"FR{(12 + 3 * (int(organization.siren) % 97)) % 97:02d}{organization.siren}"}
        assert _put(client, organization, headers, **changes).status_code == 200, changes
        assert _status(organization) == "submitted", changes
        audit = SecurityEvent.select().where(SecurityEvent.event == "kyb.reopened",
                                             SecurityEvent.target_id == organization.id).get()
        assert audit.details["changed"] == [field]


def test_a_new_kyb_document_reopens_kyb(client):
    organization, headers = _approved(client)
    body, content_type = urllib3.encode_multipart_formdata(
        {"type": "delegation_letter", "file": ("doc.pdf", PDF, "application/octet-stream")})
    answer = client.simulate_post(f"/api/organizations/{organization.id}/kyb/documents", body=body,
                                  headers={**headers, "Content-Type": content_type})
    assert answer.status_code in (200, 201), answer.json
    assert _status(organization) == "submitted"


def test_only_admins_invite_into_a_printer_organization(client):
    manager, printer = make_user(), make_organization("printer")
    add_member(manager, printer)
    body = {"email": "nouveau@example.com", "role": "manager"}
    refused = client.simulate_post(f"/api/organizations/{printer.id}/invitations", headers=signed_in(manager),
                                   json=body)
    assert refused.status_code == 403
    assert refused.json["error"]["details"]["reason"] == "printer_invitation_admin_only"
    admin = make_admin()
    assert client.simulate_post(f"/api/organizations/{printer.id}/invitations", headers=signed_in(admin),
                                json=body).status_code == 201


def test_an_admin_reassigns_a_squatted_organization(client):
    squatter, organization = make_user(), make_organization(kyb_status="submitted")
    add_member(squatter, organization)
    assert client.simulate_put(f"/api/organizations/{organization.id}/billing-profile", headers=signed_in(squatter),
                               json=billing_body(organization.siren)).status_code == 200
    owner, admin = make_user(), make_admin()
    answer = client.simulate_post(f"/api/admin/organizations/{organization.id}/reassign", headers=signed_in(admin),
                                  json={"userId": owner.id, "note": "Kbis reçu du vrai dirigeant"})
    assert answer.status_code == 200, answer.json
    members = {(m.user_id, m.role) for m in Membership.select().where(Membership.organization == organization.id)}
    assert members == {(owner.id, "manager")}
    assert _status(organization) is None
    assert not BillingProfile.select().where(BillingProfile.organization == organization.id).exists()
    audit = SecurityEvent.get(SecurityEvent.event == "admin.organization.reassigned")
    assert audit.actor_user_id == admin.id and audit.details["previousMemberIds"] == [squatter.id]
    unverified = make_user(email_verified_at=None)
    refused = client.simulate_post(f"/api/admin/organizations/{organization.id}/reassign",
                                   headers=signed_in(admin), json={"userId": unverified.id, "note": "x"})
    assert refused.status_code == 403
    assert client.simulate_post(f"/api/admin/organizations/{organization.id}/reassign", headers=signed_in(squatter),
                                json={"userId": squatter.id, "note": "x"}).status_code == 403


def test_a_squatters_cookie_acts_for_nothing_once_the_organization_is_reassigned(client):
    squatter, organization = make_user(), make_organization(kyb_status="approved")
    add_member(squatter, organization)
    cookie = signed_in(squatter, organization)
    assert client.simulate_get("/api/billing/invoices", headers=cookie).status_code == 200
    owner, admin = make_user(), make_admin()
    assert client.simulate_post(f"/api/admin/organizations/{organization.id}/reassign", headers=signed_in(admin),
                                json={"userId": owner.id, "note": "Kbis reçu"}).status_code == 200
    for path in ("/api/billing/invoices", "/api/billing/invoices/x/download",
                 "/api/billing/reservations/x/incident"):
        assert client.simulate_get(path, headers=cookie).status_code in (401, 403), path
    assert client.simulate_post("/api/billing/reservations/x/incident", headers=cookie,
                                json={"reason": "x"}).status_code in (401, 403)


def test_a_removed_membership_is_checked_by_the_session_itself(client):
    """Whatever removes a membership, the session that still names the organization acts for none."""
    member, organization = make_user(), make_organization(kyb_status="approved")
    add_member(member, organization)
    cookie = signed_in(member, organization)
    Membership.delete().where(Membership.user == member.id).execute()
    assert client.simulate_get("/api/billing/invoices", headers=cookie).status_code == 403


def test_an_admin_deletes_a_squatted_organization(client):
    squatter, organization = make_user(), make_organization()
    add_member(squatter, organization)
    admin = make_admin()
    answer = client.simulate_delete(f"/api/admin/organizations/{organization.id}", headers=signed_in(admin),
                                    json={"note": "SIREN usurpé"})
    assert answer.status_code == 200
    assert not Organization.select().where(Organization.id == organization.id).exists()
    assert User.get_by_id(squatter.id)  # the account stays; only its membership went
    audit = SecurityEvent.get(SecurityEvent.event == "admin.organization.deleted")
    assert audit.target_id == organization.id and audit.details["memberIds"] == [squatter.id]
    assert client.simulate_delete(f"/api/admin/organizations/{organization.id}", headers=signed_in(admin),
                                  json={"note": "x"}).status_code == 404
