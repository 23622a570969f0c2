"""Organizations: creation, isolation, billing profile checks, KYB submission, invitations,
printer provisioning and admin-created users."""

from __future__ import annotations

from datetime import timedelta

import pytest

from backend import clock
from backend.identity.models import BillingProfile, Membership, Organization, User
from tests.factories import add_member, make_organization, make_user, random_siren, signed_in, siret_for
from tests.identity.helpers import last_email, token_in


def billing_body(siren: str, **overrides) -> dict:
    body = {
        "legalName": "Laiterie Test SA",
        "siret": siret_for(siren),
        "vatNumber": None,
        "address": {"street": "1 rue de la Paix", "postalCode": "75002", "city": "Paris", "country": "fr"},
        "iban": "FR76 3000 6000 0112 3456 7890 189",
        "signer": {"firstName": "Inès", "lastName": "Martin", "email": "Ines@Example.com",
                   "phone": "06 12 34 56 78", "onRegistryExtract": True},
    }
    body.update(overrides)
    return body


def manager_of(actor_type="industrial", kyb_status=None):
    user, organization = make_user(), make_organization(actor_type, kyb_status=kyb_status)
    add_member(user, organization)
    return user, organization


def test_creating_an_organization_makes_the_caller_its_manager_with_the_role(client):
    user = make_user()
    headers = signed_in(user)
    siren = random_siren()
    answer = client.simulate_post("/api/organizations", headers=headers,
                                  json={"actorType": "industrial", "siren": siren, "legalName": "Laiterie"})
    assert answer.status_code == 201
    organization = answer.json["data"]["organization"]
    assert organization["id"] == f"industrial:{siren}" and organization["kybStatus"] is None
    assert Membership.get(Membership.user == user.id).role == "manager"
    session = client.simulate_get("/api/auth/session", headers=headers).json["data"]
    assert session["roles"] == ["industrial"] and "billing.collect" in session["permissions"]
    assert session["activeOrganizationId"] == organization["id"]
    assert session["organizations"][0]["membershipRole"] == "manager"
    assert session["workspace"] == {"home": "/industrial", "redirectTo": "/onboarding"}


def test_an_existing_organization_id_is_a_conflict(client):
    existing = make_organization()
    answer = client.simulate_post("/api/organizations", headers=signed_in(make_user()),
                                  json={"actorType": "industrial", "siren": existing.siren, "legalName": "Copie"})
    assert answer.status_code == 409 and answer.json["error"]["code"] == "CONFLICT"


@pytest.mark.parametrize(
    "body",
    [
        {"actorType": "industrial", "siren": "552100555", "legalName": "Mauvaise clé"},
        {"actorType": "industrial", "siren": "55210055", "legalName": "Huit chiffres"},
        {"actorType": "printer", "siren": "552100554", "legalName": "Imprimeur"},
        {"actorType": "industrial", "siren": "552100554"},
    ],
)
def test_organization_creation_refuses_bad_bodies(client, body):
    answer = client.simulate_post("/api/organizations", json=body, headers=signed_in(make_user()))
    assert answer.status_code == 400 and answer.json["error"]["code"] == "VALIDATION_ERROR"


def test_a_member_of_one_organization_gets_404_on_another(client):
    user, mine = manager_of()
    _, theirs = manager_of()
    headers = signed_in(user)
    assert client.simulate_get(f"/api/organizations/{mine.id}", headers=headers).status_code == 200
    for answer in (
        client.simulate_get(f"/api/organizations/{theirs.id}", headers=headers),
        client.simulate_put(f"/api/organizations/{theirs.id}/billing-profile", headers=headers,
                            json=billing_body(theirs.siren)),
        client.simulate_post(f"/api/organizations/{theirs.id}/kyb/submit", headers=headers),
        client.simulate_post(f"/api/organizations/{theirs.id}/invitations", headers=headers,
                             json={"email": "x@example.com", "role": "member"}),
        client.simulate_get("/api/organizations/industrial:000000000", headers=headers),
    ):
        assert answer.status_code == 404 and answer.json["error"]["code"] == "NOT_FOUND"
    admin = make_user(roles=["admin"])
    assert client.simulate_get(f"/api/organizations/{theirs.id}", headers=signed_in(admin)).status_code == 200


def test_billing_profile_is_checked_and_normalized(client):
    user, organization = manager_of()
    body = billing_body(organization.siren, vatNumber=f"fr {_vat_key(organization.siren)} {organization.siren}")
    answer = client.simulate_put(f"/api/organizations/{organization.id}/billing-profile", json=body,
                                 headers=signed_in(user))
    assert answer.status_code == 200
    profile = answer.json["data"]["billingProfile"]
    assert profile["signer"]["phone"] == "+33612345678"
    assert profile["signer"]["email"] == "ines@example.com"
    assert profile["vatNumber"] == f"FR{_vat_key(organization.siren)}{organization.siren}"
    assert profile["iban"] == "FR7630006000011234567890189" and profile["address"]["country"] == "FR"
    again = client.simulate_put(f"/api/organizations/{organization.id}/billing-profile", headers=signed_in(user),
                                json=billing_body(organization.siren, legalName="Nouveau nom"))
    assert again.json["data"]["billingProfile"]["legalName"] == "Nouveau nom"
    assert BillingProfile.select().where(BillingProfile.organization == organization.id).count() == 1
    detail = client.simulate_get(f"/api/organizations/{organization.id}", headers=signed_in(user)).json["data"]
    assert detail["organization"]["billingProfile"]["siret"] == siret_for(organization.siren)


def test_billing_profile_names_where_invoices_go(client):
    """`billingEmail` (issue 32): where the organization's invoices are e-mailed; none: its managers."""
    user, organization = manager_of()
    path = f"/api/organizations/{organization.id}/billing-profile"
    answer = client.simulate_put(path, json=billing_body(organization.siren), headers=signed_in(user))
    assert answer.json["data"]["billingProfile"]["billingEmail"] is None
    answer = client.simulate_put(path, json=billing_body(organization.siren, billingEmail="Compta@Example.com"),
                                 headers=signed_in(user))
    assert answer.status_code == 200 and answer.json["data"]["billingProfile"]["billingEmail"] == "compta@example.com"
    refused = client.simulate_put(path, json=billing_body(organization.siren, billingEmail="pas une adresse"),
                                  headers=signed_in(user))
    assert refused.status_code == 400 and "billingEmail" in refused.json["error"]["details"]["fields"]


def _vat_key(siren: str) -> str:
    return f"{(12 + 3 * (int(siren) % 97)) % 97:02d}"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda siren: {"siret": siret_for(siren)[:-1] + str((int(siret_for(siren)[-1]) + 1) % 10)}, "siret"),
        (lambda siren: {"siret": siret_for("552100554")}, "siret"),
        (lambda siren: {"vatNumber": f"FR{(int(_vat_key(siren)) + 1) % 97:02d}{siren}"}, "vatNumber"),
        (lambda siren: {"iban": "FR76 3000 6000 0112 3456 7890 188"}, "iban"),
        (lambda siren: {"signer": {**billing_body(siren)["signer"], "phone": "12"}}, "signer.phone"),
        (lambda siren: {"siret": "123"}, "siret"),
    ],
)
def test_billing_profile_refuses_inconsistent_identifiers(client, change, field):
    user, organization = manager_of()
    answer = client.simulate_put(f"/api/organizations/{organization.id}/billing-profile", headers=signed_in(user),
                                 json=billing_body(organization.siren, **change(organization.siren)))
    assert answer.status_code == 400
    assert field in answer.json["error"]["details"]["fields"]


def test_a_plain_member_may_not_edit_billing_submit_kyb_or_invite(client):
    _, organization = manager_of()
    member = make_user()
    add_member(member, organization, "member")
    headers = signed_in(member)
    for answer in (
        client.simulate_put(f"/api/organizations/{organization.id}/billing-profile", headers=headers,
                            json=billing_body(organization.siren)),
        client.simulate_post(f"/api/organizations/{organization.id}/kyb/submit", headers=headers),
        client.simulate_post(f"/api/organizations/{organization.id}/invitations", headers=headers,
                             json={"email": "x@example.com", "role": "member"}),
    ):
        assert answer.status_code == 403 and answer.json["error"]["code"] == "FORBIDDEN"
    billing = make_user()
    add_member(billing, organization, "billing")
    answer = client.simulate_put(f"/api/organizations/{organization.id}/billing-profile",
                                 headers=signed_in(billing), json=billing_body(organization.siren))
    assert answer.status_code == 200


def test_kyb_submission_needs_a_billing_profile_and_happens_once(client):
    user, organization = manager_of()
    headers = signed_in(user)
    path = f"/api/organizations/{organization.id}/kyb/submit"
    assert client.simulate_post(path, headers=headers).status_code == 409
    client.simulate_put(f"/api/organizations/{organization.id}/billing-profile", headers=headers,
                        json=billing_body(organization.siren))
    answer = client.simulate_post(path, headers=headers)
    assert answer.status_code == 200 and answer.json["data"]["organization"]["kybStatus"] == "submitted"
    assert client.simulate_post(path, headers=headers).status_code == 409
    Organization.update(kyb_status="rejected").where(Organization.id == organization.id).execute()
    assert client.simulate_post(path, headers=headers).json["data"]["organization"]["kybStatus"] == "submitted"


def test_invitation_is_mailed_accepted_once_by_the_invited_address(client):
    manager, organization = manager_of("distributor")
    answer = client.simulate_post(f"/api/organizations/{organization.id}/invitations", headers=signed_in(manager),
                                  json={"email": "Collegue@Example.com", "role": "billing"})
    assert answer.status_code == 201
    invitation = answer.json["data"]["invitation"]
    assert invitation["email"] == "collegue@example.com" and invitation["role"] == "billing"
    message = last_email("collegue@example.com", "invitation")
    assert organization.legal_name in message.body_text and "7 jours" in message.body_text
    assert "« facturation »" in message.body_text  # the role as the French e-mail names it
    token = token_in(message)
    stranger = make_user()
    refused = client.simulate_post(f"/api/invitations/{token}/accept", headers=signed_in(stranger))
    assert refused.status_code == 403
    colleague = make_user(email="collegue@example.com")
    headers = signed_in(colleague)
    accepted = client.simulate_post(f"/api/invitations/{token}/accept", headers=headers)
    assert accepted.status_code == 200 and accepted.json["data"]["organization"]["id"] == organization.id
    assert Membership.get(Membership.user == colleague.id).role == "billing"
    assert User.get_by_id(colleague.id).roles == ["distributor"]
    session = client.simulate_get("/api/auth/session", headers=headers).json["data"]
    assert session["activeOrganizationId"] == organization.id
    reused = client.simulate_post(f"/api/invitations/{token}/accept", headers=headers)
    assert reused.status_code == 404


def test_an_expired_invitation_is_not_found(client):
    manager, organization = manager_of()
    client.simulate_post(f"/api/organizations/{organization.id}/invitations", headers=signed_in(manager),
                         json={"email": "tard@example.com", "role": "member"})
    token = token_in(last_email("tard@example.com", "invitation"))
    late = make_user(email="tard@example.com")
    with clock.frozen_at(clock.now() + timedelta(days=7, seconds=1)):
        headers = signed_in(late)
        assert client.simulate_post(f"/api/invitations/{token}/accept", headers=headers).status_code == 404
    assert client.simulate_post("/api/invitations/unknown-token/accept", headers=signed_in(late)).status_code == 404


def test_printers_are_provisioned_by_admins_only(client):
    admin = make_user(roles=["admin"])
    siren = random_siren()
    body = {"actorType": "printer", "siren": siren, "legalName": "Imprimerie"}
    answer = client.simulate_post("/api/admin/organizations", json=body, headers=signed_in(admin))
    assert answer.status_code == 201 and answer.json["data"]["organization"]["id"] == f"printer:{siren}"
    assert Membership.select().where(Membership.organization == f"printer:{siren}").count() == 0
    assert client.simulate_post("/api/admin/organizations", json=body, headers=signed_in(admin)).status_code == 409
    wrong = client.simulate_post("/api/admin/organizations", headers=signed_in(admin),
                                 json={**body, "actorType": "industrial"})
    assert wrong.status_code == 400


def test_admin_creates_a_printer_user_who_can_sign_in(client):
    admin = make_user(roles=["admin"])
    printer = make_organization("printer")
    answer = client.simulate_post("/api/admin/users", headers=signed_in(admin), json={
        "email": "imprimeur@example.com", "name": "Irène", "password": "mot-de-passe-1", "role": "printer",
        "organizationId": printer.id, "membershipRole": "manager",
    })
    assert answer.status_code == 201 and answer.json["data"]["user"]["roles"] == ["printer"]
    signed = client.simulate_post("/api/auth/sign-in", json={"email": "imprimeur@example.com",
                                                              "password": "mot-de-passe-1"})
    session = client.simulate_get("/api/auth/session", headers={"Cookie": signed.headers["set-cookie"]}).json
    assert session["data"]["workspace"] == {"home": "/printer", "redirectTo": None}
    assert session["data"]["activeOrganizationId"] == printer.id
    duplicate = client.simulate_post("/api/admin/users", headers=signed_in(admin), json={
        "email": "imprimeur@example.com", "name": "Bis", "role": "printer"})
    assert duplicate.status_code == 409
    unknown = client.simulate_post("/api/admin/users", headers=signed_in(admin), json={
        "email": "autre@example.com", "name": "X", "role": "printer", "organizationId": "printer:000000000"})
    assert unknown.status_code == 404


def test_admin_updates_roles_and_permissions_and_assign_role_adds_one(client):
    admin, user = make_user(roles=["admin"]), make_user(roles=["industrial"])
    headers = signed_in(admin)
    updated = client.simulate_patch(f"/api/admin/users/{user.id}", headers=headers,
                                    json={"name": "Renommé", "roles": ["distributor"], "permissions": ["kyb.review"]})
    data = updated.json["data"]["user"]
    assert (data["name"], data["roles"], data["permissions"]) == ("Renommé", ["distributor"], ["kyb.review"])
    assigned = client.simulate_post("/api/auth/assign-role", headers=headers,
                                    json={"userId": user.id, "role": "printer"})
    assert assigned.status_code == 200 and assigned.json["data"]["user"]["roles"] == ["distributor", "printer"]
    bad = client.simulate_post("/api/auth/assign-role", headers=headers, json={"userId": user.id, "role": "boss"})
    assert bad.status_code == 400
    missing = client.simulate_post("/api/auth/assign-role", headers=headers, json={"userId": "nope", "role": "admin"})
    assert missing.status_code == 404
    refused = client.simulate_post("/api/auth/assign-role", headers=signed_in(user),
                                   json={"userId": user.id, "role": "admin"})
    assert refused.status_code == 403
    self_block = client.simulate_patch(f"/api/admin/users/{admin.id}", headers=headers, json={"blocked": True})
    assert self_block.status_code == 400
