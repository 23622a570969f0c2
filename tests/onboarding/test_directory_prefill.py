"""The billing profile's legal form pre-filled from the company directory's legal category, through
the API against the registry simulator over HTTP; share capital and registration, which the
directory does not publish, are never pre-filled."""

from __future__ import annotations

import pytest

from backend.onboarding.legal_forms import legal_form_of
from tests.factories import add_member, make_organization, make_user, signed_in, siret_for


def _organization(registry_sim, legal_category: str | None):
    organization, manager = make_organization("industrial"), make_user()
    add_member(manager, organization, "manager")
    registry_sim.add_company({
        "siren": organization.siren, "legalName": organization.legal_name, "state": "active",
        "address": {"street": "12 rue des Lilas", "postalCode": "74000", "city": "Annecy"},
        "representatives": [{"firstName": "Camille", "lastName": "Martin", "role": "Gérant"}],
        **({"legalCategory": legal_category} if legal_category else {})})
    return organization, manager


def _put(client, organization, manager, **mentions):
    answer = client.simulate_put(f"/api/organizations/{organization.id}/billing-profile", headers=signed_in(
        manager, organization), json={
        "legalName": organization.legal_name, "siret": siret_for(organization.siren),
        "address": {"street": "12 rue des Lilas", "postalCode": "74000", "city": "Annecy", "country": "FR"},
        "signer": {"firstName": "Camille", "lastName": "Martin", "email": "camille@example.com",
                   "phone": "0612345678"}, **mentions})
    assert answer.status_code == 200, answer.json
    return answer.json["data"]["billingProfile"]


@pytest.mark.parametrize(("category", "form"), [("5499", "SARL"), ("5498", "EURL"), ("5710", "SAS")])
def test_a_profile_without_a_legal_form_gets_the_directorys(client, registry_sim, category, form):
    organization, manager = _organization(registry_sim, category)
    profile = _put(client, organization, manager)
    assert (profile["legalForm"], profile["shareCapitalCents"], profile["registration"]) == (form, None, None)


def test_a_legal_form_given_or_stored_is_never_replaced(client, registry_sim):
    organization, manager = _organization(registry_sim, "5499")
    assert _put(client, organization, manager, legalForm="SARL à capital variable")["legalForm"] == \
        "SARL à capital variable"
    assert _put(client, organization, manager)["legalForm"] == "SARL à capital variable"  # left out: kept
    assert _put(client, organization, manager, legalForm=None)["legalForm"] is None  # cleared by the client


def test_a_category_the_table_does_not_name_prefills_nothing(client, registry_sim):
    organization, manager = _organization(registry_sim, "9220")  # an association
    assert _put(client, organization, manager)["legalForm"] is None


def test_the_categories_read_as_their_legal_form():
    assert [legal_form_of(code) for code in ("5720", "5458", "5599", "5699", "1000", "x", None, "57101")] == [
        "SASU", "SARL", "SA à conseil d'administration", "SA à directoire", "Entrepreneur individuel",
        None, None, None]
