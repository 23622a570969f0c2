"""What the company registry decides in KYB (billing profile, onboarding start, review), its cache
and the admin "registry cache" list, through the API against the registry simulator."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import falcon.testing
import pytest
import time_machine

from backend import clock
from backend.identity.models import BillingProfile, Organization
from backend.onboarding import registry_cache
from backend.onboarding.models import RegistryCompany, SignatureRequest
from backend.onboarding.registry_client import RegistryClient
from tests.factories import add_member, make_admin, make_organization, make_user, signed_in, siret_for
from tests.onboarding.conftest import register_company

DUPONT = ("Jean-Marc", "Dupont", "Président de SAS")


@pytest.fixture
def fast_client(make_app, registry_sim):
    """The API with a registry client that retries without waiting."""
    return falcon.testing.TestClient(make_app(registry=RegistryClient(
        registry_sim.url, backoff_seconds=0.01, max_backoff_seconds=0.02)))


@pytest.fixture
def manager_of(registry_sim):
    def make(*, representatives=(DUPONT,), register: bool = True):
        organization = make_organization("industrial")
        manager = make_user()
        add_member(manager, organization, "manager")
        if register:
            register_company(registry_sim, organization, representatives=representatives)
        return organization, manager

    return make


def _put_profile(client, organization, manager, *, first="Jean Marc", last="DUPONT", claim=False,
                 legal_name=None, postal_code="74000"):
    return client.simulate_put(f"/api/organizations/{organization.id}/billing-profile", headers=signed_in(
        manager, organization), json={
        "legalName": legal_name or organization.legal_name, "siret": siret_for(organization.siren),
        "address": {"street": "12 rue des Lilas", "postalCode": postal_code, "city": "Annecy", "country": "FR"},
        "iban": "FR7630006000011234567890189",
        "signer": {"firstName": first, "lastName": last, "email": "signer@example.com", "phone": "0612345678",
                   "onRegistryExtract": claim}})


def _start(client, organization, manager, delegator=None):
    return client.simulate_post(f"/api/organizations/{organization.id}/onboarding/start", headers=signed_in(
        manager, organization), json={"delegator": delegator} if delegator else {})


DELEGATOR = {"firstName": "Jean-Marc", "lastName": "Dupont", "role": "Président"}


def _document_types(answer) -> list[str]:
    return [d["type"] for d in answer.json["data"]["signatureRequest"]["documents"]]


def _review(client, organization):
    return client.simulate_post(f"/api/admin/organizations/{organization.id}/review",
                                json={"status": "approved", "note": "vu"}, headers=signed_in(make_admin()))


def test_the_registry_decides_on_registry_extract_when_the_profile_is_saved(client, manager_of):
    organization, manager = manager_of()
    listed = _put_profile(client, organization, manager, first="jean-marc", last="Dupont", claim=False)
    assert listed.status_code == 200 and listed.json["data"]["billingProfile"]["signer"]["onRegistryExtract"] is True
    homonym = _put_profile(client, organization, manager, first="Marie", last="Dupont", claim=True)
    assert homonym.json["data"]["billingProfile"]["signer"]["onRegistryExtract"] is False


def test_a_listed_signer_needs_no_delegation_proof_and_the_match_is_recorded_for_the_reviewer(client, manager_of):
    organization, manager = manager_of()
    _put_profile(client, organization, manager, first="Marc Jean", last="dupont")
    started = _start(client, organization, manager)
    assert started.status_code == 201
    assert _document_types(started) == ["framework_contract", "cgu_acceptance", "sepa_mandate"]
    envelope = started.json["data"]["signatureRequest"]
    assert (envelope["signerOnRegistryExtract"], envelope["registryChecked"]) == (True, True)
    check = envelope["registryCheck"]
    assert check["representative"] == {"firstNames": "JEAN-MARC", "lastName": "DUPONT", "role": "Président de SAS"}
    assert (check["reason"], check["state"], check["extractDate"], check["warnings"]) == (
        None, "active", "2026-01-15", [])
    detail = client.simulate_get(f"/api/admin/organizations/{organization.id}", headers=signed_in(make_admin()))
    registry = detail.json["data"]["organization"]["registry"]
    assert registry["extract"]["siren"] == organization.siren and registry["extract"]["representativesCount"] == 1
    assert registry["registryChecked"] is True and registry["check"]["representative"]["lastName"] == "DUPONT"
    SignatureRequest.update(status="signed").execute()
    assert _review(client, organization).status_code == 200  # no delegation document needed


def test_a_client_claiming_on_registry_extract_for_an_unlisted_signer_still_needs_the_delegation_documents(
        client, manager_of):
    organization, manager = manager_of()
    saved = _put_profile(client, organization, manager, first="Camille", last="Martin", claim=True)
    assert saved.json["data"]["billingProfile"]["signer"]["onRegistryExtract"] is False
    missing = _start(client, organization, manager)
    assert missing.status_code == 400 and "delegator" in missing.json["error"]["details"]["fields"]
    started = _start(client, organization, manager, DELEGATOR)
    assert started.status_code == 201 and "delegation_proof" in _document_types(started)
    assert started.json["data"]["signatureRequest"]["registryCheck"]["reason"] == "signer_not_listed"
    SignatureRequest.update(status="signed").execute()
    refused = _review(client, organization)
    assert refused.status_code == 409 and refused.json["error"]["details"]["reason"] == "delegation_documents_missing"


def test_a_ceased_company_or_a_siren_unknown_to_the_registry_cannot_start(client, manager_of, registry_sim):
    ceased, ceased_manager = manager_of()
    _put_profile(client, ceased, ceased_manager)
    registry_cache.RegistryCompany.delete().execute()  # the cached extract predates the switch
    registry_sim.set_faults(ceased=[ceased.siren])
    refused = _start(client, ceased, ceased_manager)
    assert refused.status_code == 409 and refused.json["error"]["details"]["reason"] == "company_ceased"
    unknown, unknown_manager = manager_of(register=False)
    assert _put_profile(client, unknown, unknown_manager).status_code == 200  # the profile is still saved
    refused = _start(client, unknown, unknown_manager, DELEGATOR)
    assert refused.status_code == 409 and refused.json["error"]["code"] == "CONFLICT"
    assert refused.json["error"]["details"]["reason"] == "siren_unknown_to_registry"
    assert SignatureRequest.select().count() == 0


def test_when_the_registry_cannot_answer_onboarding_starts_with_the_delegation_documents_and_a_refresh_lifts_them(
        fast_client, manager_of, registry_sim):
    organization, manager = manager_of()
    registry_sim.set_faults(unavailable=100)
    assert _put_profile(fast_client, organization, manager).json["data"]["billingProfile"]["signer"][
        "onRegistryExtract"] is False
    assert _start(fast_client, organization, manager).status_code == 400  # the delegator is required
    started = _start(fast_client, organization, manager, DELEGATOR)
    assert started.status_code == 201 and "delegation_proof" in _document_types(started)
    envelope = started.json["data"]["signatureRequest"]
    assert (envelope["registryChecked"], envelope["registryCheck"]["reason"]) == (False, "registry_unavailable")
    admin = signed_in(make_admin())
    down = fast_client.simulate_post(f"/api/admin/registry-cache/{organization.siren}/refresh", headers=admin)
    assert down.status_code == 503 and down.json["error"]["code"] == "REGISTRY_UNAVAILABLE"
    SignatureRequest.update(status="signed").execute()
    assert _review(fast_client, organization).json["error"]["details"]["reason"] == "delegation_documents_missing"
    registry_sim.clear_faults()
    refreshed = fast_client.simulate_post(f"/api/admin/registry-cache/{organization.siren}/refresh", headers=admin)
    assert refreshed.status_code == 200 and refreshed.json["data"]["company"]["state"] == "active"
    after = SignatureRequest.get_by_id(envelope["id"])
    assert (after.registry_checked, after.signer_on_registry_extract) == (True, True)
    assert BillingProfile.get(BillingProfile.organization == organization.id).signer_on_registry_extract
    assert _review(fast_client, organization).status_code == 200


def test_a_legal_name_or_postcode_far_from_the_registry_is_a_warning_not_a_refusal(client, manager_of):
    organization, manager = manager_of()
    _put_profile(client, organization, manager, legal_name="Boulangerie Tout Autre", postal_code="75001")
    started = _start(client, organization, manager)
    assert started.status_code == 201
    warnings = started.json["data"]["signatureRequest"]["registryCheck"]["warnings"]
    assert [w["code"] for w in warnings] == ["legal_name_differs", "postal_code_differs"]
    assert warnings[1] == {"code": "postal_code_differs", "ours": "75001", "registry": "74000"}


def test_an_extract_is_reused_for_the_cache_days_then_fetched_again(runtime_registry, registry_sim):
    organization = make_organization()
    register_company(registry_sim, organization)
    searches = registry_sim.store.searches
    with time_machine.travel(datetime(2027, 3, 1, 9, 0, tzinfo=UTC), tick=False):
        first = registry_cache.company_extract(organization.siren, registry=runtime_registry, cache_days=30)
        again = registry_cache.company_extract(organization.siren, registry=runtime_registry, cache_days=30)
        assert registry_sim.store.searches == searches + 1 and again.fetched_at == first.fetched_at
    with time_machine.travel(datetime(2027, 3, 31, 8, 59, tzinfo=UTC), tick=False):
        registry_cache.company_extract(organization.siren, registry=runtime_registry, cache_days=30)
        assert registry_sim.store.searches == searches + 1
    with time_machine.travel(datetime(2027, 3, 31, 9, 0, tzinfo=UTC), tick=False):
        expired = registry_cache.company_extract(organization.siren, registry=runtime_registry, cache_days=30)
        assert registry_sim.store.searches == searches + 2 and expired.fetched_at == clock.now()


def test_an_unknown_siren_is_stored_but_asked_again(runtime_registry, registry_sim):
    organization = make_organization()
    searches = registry_sim.store.searches
    assert registry_cache.company_extract(organization.siren, registry=runtime_registry, cache_days=30).state == (
        "unknown")
    register_company(registry_sim, organization)
    assert registry_cache.company_extract(organization.siren, registry=runtime_registry, cache_days=30).state == (
        "active")
    assert registry_sim.store.searches == searches + 2


@pytest.fixture
def runtime_registry(registry_sim):
    return RegistryClient(registry_sim.url, backoff_seconds=0.01, max_backoff_seconds=0.02)


def _cached(siren: str, name: str | None, state: str, people: int, age_days: int) -> None:
    RegistryCompany.create(siren=siren, legal_name=name, state=state, fetched_at=clock.now() - timedelta(days=age_days),
                           representatives=[{"first_names": "A", "last_name": f"B{i}", "role": None}
                                            for i in range(people)])


def test_the_registry_cache_list_is_paginated_searched_sorted_and_admin_only(client):
    _cached("552100554", "LAITERIE DEMO", "active", 2, 3)
    _cached("385347927", "HYPER DEMO", "active", 1, 10)
    _cached("802312454", "ANCIENNE FROMAGERIE", "ceased", 0, 40)
    _cached("123456782", None, "unknown", 0, 0)
    admin = signed_in(make_admin())

    def listed(query: str):
        return client.simulate_get("/api/admin/registry-cache", query_string=query, headers=admin)

    page = listed("pageSize=2&sortBy=age&sortDir=desc").json["data"]
    assert (page["total"], page["page"], page["pageSize"]) == (4, 1, 2)
    assert [c["siren"] for c in page["items"]] == ["802312454", "385347927"]
    assert page["items"][0]["ageDays"] == 40 and page["items"][0]["state"] == "ceased"
    assert [c["siren"] for c in listed("page=2&pageSize=2&sortBy=age&sortDir=desc").json["data"]["items"]] == [
        "552100554", "123456782"]
    assert [c["representativesCount"] for c in listed("sortBy=representativesCount&sortDir=desc&state=active")
            .json["data"]["items"]] == [2, 1]
    assert [c["legalName"] for c in listed("search=demo&sortBy=legalName").json["data"]["items"]] == [
        "HYPER DEMO", "LAITERIE DEMO"]
    assert [c["siren"] for c in listed("search=3853").json["data"]["items"]] == ["385347927"]
    assert listed("sortBy=password").status_code == 400
    outsider = make_user()
    assert client.simulate_get("/api/admin/registry-cache", headers=signed_in(outsider)).status_code == 403
    assert client.simulate_post("/api/admin/registry-cache/552100554/refresh",
                                headers=signed_in(outsider)).status_code == 403
    assert client.simulate_post("/api/admin/registry-cache/552100555/refresh", headers=admin).status_code == 400


def test_a_registry_outage_keeps_the_earlier_answer_for_the_same_signer_and_never_reopens_an_approved_kyb(
        fast_client, manager_of, registry_sim):
    organization, manager = manager_of()
    assert _put_profile(fast_client, organization, manager).json["data"]["billingProfile"]["signer"][
        "onRegistryExtract"] is True
    organization.kyb_status = "approved"
    organization.save()
    registry_cache.RegistryCompany.delete().execute()
    registry_sim.set_faults(unavailable=100)
    same = _put_profile(fast_client, organization, manager, legal_name=f"{organization.legal_name} ")
    assert same.json["data"]["billingProfile"]["signer"]["onRegistryExtract"] is True
    assert Organization.get_by_id(organization.id).kyb_status == "approved"
    other = _put_profile(fast_client, organization, manager, first="Camille", last="Martin")
    assert other.json["data"]["billingProfile"]["signer"]["onRegistryExtract"] is False
