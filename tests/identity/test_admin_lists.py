"""`GET /api/admin/organizations` and the list conventions (backend.listing) every admin list
reuses: filters, search, whitelisted sort, pagination, one SQL statement per page."""

from __future__ import annotations

import pytest

from backend.identity.models import BillingProfile
from backend.listing import ListParams, like_pattern
from tests.factories import make_organization, make_user, signed_in, siret_for

LIST = "/api/admin/organizations"


def profile(organization, siret: str) -> None:
    BillingProfile.create(
        organization=organization.id, legal_name=organization.legal_name, siret=siret, street="1 rue", postal_code="1",
        city="Paris", country="FR", signer_first_name="A", signer_last_name="B", signer_email="a@example.com",
        signer_phone="+33612345678", signer_on_registry_extract=True,
    )


@pytest.fixture
def organizations():
    """Five organizations: two share a SIRET (a conflict), one printer, various KYB statuses."""
    a = make_organization("industrial", kyb_status="approved", legal_name="Alpha Laiterie")
    b = make_organization("industrial", kyb_status="submitted", legal_name="Beta Biscuits")
    c = make_organization("distributor", kyb_status=None, legal_name="Gamma Hyper")
    d = make_organization("distributor", kyb_status="rejected", legal_name="Delta 100%_Market")
    e = make_organization("printer", legal_name="Epsilon Imprimerie")
    shared = siret_for(a.siren)
    profile(a, shared)
    profile(b, shared)  # declares another company's SIRET: flagged
    profile(c, siret_for(c.siren))
    return {"a": a, "b": b, "c": c, "d": d, "e": e}


def get(client, headers, **params):
    answer = client.simulate_get(LIST, params=params, headers=headers)
    assert answer.status_code == 200, answer.json
    return answer.json["data"]


@pytest.fixture
def headers():
    return signed_in(make_user(roles=["admin"]))


def names(page) -> list[str]:
    return [item["legalName"] for item in page["items"]]


def test_default_page_sorted_by_creation_with_siret_conflicts_flagged(client, headers, organizations):
    page = get(client, headers)
    assert (page["total"], page["page"], page["pageSize"]) == (5, 1, 25)
    assert names(page) == ["Alpha Laiterie", "Beta Biscuits", "Gamma Hyper", "Delta 100%_Market",
                           "Epsilon Imprimerie"]
    flags = {item["legalName"]: item["siretConflict"] for item in page["items"]}
    assert flags == {"Alpha Laiterie": True, "Beta Biscuits": True, "Gamma Hyper": False,
                     "Delta 100%_Market": False, "Epsilon Imprimerie": False}
    assert set(page["items"][0]) == {"id", "actorType", "siren", "legalName", "kybStatus", "siret",
                                     "siretConflict", "createdAt"}


def test_filters(client, headers, organizations):
    assert names(get(client, headers, kybStatus="approved")) == ["Alpha Laiterie"]
    assert names(get(client, headers, kybStatus="none", actorType="distributor")) == ["Gamma Hyper"]
    assert names(get(client, headers, actorType="printer")) == ["Epsilon Imprimerie"]
    assert names(get(client, headers, siretConflict="true")) == ["Alpha Laiterie", "Beta Biscuits"]
    assert get(client, headers, siretConflict="false")["total"] == 3


def test_search_on_name_siren_and_siret_with_wildcards_taken_literally(client, headers, organizations):
    assert names(get(client, headers, search="biscuit")) == ["Beta Biscuits"]
    assert names(get(client, headers, search=organizations["c"].siren)) == ["Gamma Hyper"]
    assert names(get(client, headers, search=siret_for(organizations["c"].siren))) == ["Gamma Hyper"]
    assert names(get(client, headers, search="100%_")) == ["Delta 100%_Market"]
    assert names(get(client, headers, search="%")) == ["Delta 100%_Market"]


def test_sort_and_pagination(client, headers, organizations):
    page = get(client, headers, sortBy="legalName", sortDir="desc", pageSize=2, page=2)
    assert names(page) == ["Delta 100%_Market", "Beta Biscuits"] and page["total"] == 5
    past = get(client, headers, page=9, pageSize=2)
    assert past["items"] == [] and past["total"] == 5
    assert names(get(client, headers, sortBy="kybStatus"))[:2] == ["Alpha Laiterie", "Delta 100%_Market"]


@pytest.mark.parametrize(
    "params",
    [{"sortBy": "legal_name; DROP TABLE organization"}, {"sortBy": "password"}, {"sortDir": "up"},
     {"pageSize": "101"}, {"page": "0"}, {"kybStatus": "maybe"}, {"unknown": "1"}],
)
def test_unknown_sort_and_bad_parameters_are_validation_errors(client, headers, organizations, params):
    answer = client.simulate_get(LIST, params=params, headers=headers)
    assert answer.status_code == 400 and answer.json["error"]["code"] == "VALIDATION_ERROR"


def test_a_page_is_one_sql_statement(organizations):
    from backend.identity.admin_lists import list_organizations
    from tests.support import sql_statements

    with sql_statements() as statements:
        page = list_organizations(ListParams(page_size=1, search="a"), siret_conflict=False)
    assert len(statements) == 1 and (len(page.items), page.total) == (1, 2)  # Gamma, Delta


def test_like_pattern_escapes_wildcards():
    assert like_pattern("50%_a\\b") == "%50\\%\\_a\\\\b%"


def test_admin_users_list_reuses_the_conventions(client, headers):
    make_user(name="Zoé Bloquée", blocked_at="2026-01-01T00:00:00Z")
    make_user(name="Yann Imprimeur", roles=["printer"])
    page = client.simulate_get("/api/admin/users", params={"sortBy": "name", "sortDir": "desc", "pageSize": 1},
                               headers=headers).json["data"]
    assert page["items"][0]["name"] == "Zoé Bloquée" and page["pageSize"] == 1
    printers = client.simulate_get("/api/admin/users", params={"role": "printer"}, headers=headers).json["data"]
    assert [u["name"] for u in printers["items"]] == ["Yann Imprimeur"]
    blocked = client.simulate_get("/api/admin/users", params={"blocked": "true"}, headers=headers).json["data"]
    assert [u["blocked"] for u in blocked["items"]] == [True]


def test_admin_organization_detail_shows_members_and_siret_conflicts(client, headers, organizations):
    from tests.factories import add_member

    manager = make_user(name="Gérante")
    add_member(manager, organizations["a"])
    answer = client.simulate_get(f"/api/admin/organizations/{organizations['a'].id}", headers=headers)
    assert answer.status_code == 200
    detail = answer.json["data"]["organization"]
    assert [c["id"] for c in detail["siretConflicts"]] == [organizations["b"].id]
    assert detail["members"] == [{"userId": manager.id, "email": manager.email, "name": "Gérante",
                                  "membershipRole": "manager"}]
    assert detail["billingProfile"]["siret"] == siret_for(organizations["a"].siren)
    clean = client.simulate_get(f"/api/admin/organizations/{organizations['e'].id}", headers=headers).json["data"]
    assert clean["organization"]["siretConflicts"] == [] and clean["organization"]["billingProfile"] is None
    assert client.simulate_get("/api/admin/organizations/industrial:000000000", headers=headers).status_code == 404
