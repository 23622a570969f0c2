"""From the HTTP API: a distributor publishes ad spaces, an industrial builds a cart, sees the
commission breakdown, checks out; the distributor approves one reservation and counter-proposes
another, which the industrial accepts."""

from __future__ import annotations

import pytest

from backend.outbox import OutboxMessage
from tests.factories import add_member, make_admin, make_organization, make_user, signed_in

RESERVATION_APPROVED = "announce_reservation_approved"  # one subscriber of reservation.approved


@pytest.fixture
def party():
    """A signed-in member of a new organization: returns (organization, headers)."""

    def make(actor_type: str, kyb_status: str | None = "approved"):
        organization = make_organization(actor_type, kyb_status=kyb_status)
        user = make_user()
        add_member(user, organization)
        return organization, signed_in(user, organization)

    return make


@pytest.fixture
def admin_headers():
    return signed_in(make_admin())


def _ok(answer, status=200):
    assert answer.status_code == status, answer.json
    return answer.json["data"]


def _catalog(client, admin_headers):
    universe = _ok(client.simulate_post("/api/admin/store-zones/universes", headers=admin_headers,
                                        json={"label": "Épicerie salée"}), 201)["universe"]
    rayon = _ok(client.simulate_post("/api/admin/store-zones/rayons", headers=admin_headers,
                                     json={"universeId": universe["id"], "label": "Conserves"}), 201)["rayon"]
    furniture = _ok(client.simulate_post("/api/admin/furniture-types", headers=admin_headers, json={
        "name": "Tête de gondole",
        "zones": [{"code": "front", "label": "Fronton", "faceQuantity": 2, "printable": True,
                   "widthMm": 1200, "heightMm": 300}],
    }), 201)["furnitureType"]
    assert furniture["zones"][0]["id"] and furniture["version"] == 1
    return universe, rayon, furniture


def test_marketplace_journey(client, party, admin_headers):
    universe, rayon, furniture = _catalog(client, admin_headers)
    industrial_org, industrial = party("industrial")

    distributor_org, distributor = party("distributor")
    # The distributor finds the zone and furniture ids without admin rights.
    tree = {u["id"]: u for u in _ok(client.simulate_get("/api/store-zones", headers=distributor))["universes"]}
    assert rayon["id"] in [r["id"] for r in tree[universe["id"]]["rayons"]]
    types = _ok(client.simulate_get("/api/furniture-types", headers=distributor))["items"]
    assert furniture["id"] in [t["id"] for t in types]

    store = _ok(client.simulate_post("/api/distributor/stores", headers=distributor, json={
        "name": "Hyper Lyon", "address": {"street": "1 rue Neuve", "postalCode": "69001", "city": "Lyon",
                                          "country": "FR"}}), 201)["store"]
    assert store["createdAt"].endswith("Z")
    spaces = [
        _ok(client.simulate_post("/api/distributor/ad-spaces", headers=distributor, json={
            "storeId": store["id"], "name": f"Gondole {n}", "promoFurnitureTypeId": furniture["id"],
            "placementUniverseId": universe["id"], "placementRayonId": rayon["id"], "priceCents": price,
        }), 201)["adSpace"]
        for n, price in ((1, 12_345), (2, 333))
    ]
    assert all(space["createdAt"].endswith("Z") for space in spaces)
    mine = _ok(client.simulate_get("/api/ad-spaces", headers=distributor,
                                   params={"organizationId": distributor_org.id, "sortBy": "name"}))
    assert [s["id"] for s in mine["items"]] == [spaces[0]["id"], spaces[1]["id"]]
    found = _ok(client.simulate_get("/api/ad-spaces", headers=industrial,
                                    params={"rayonId": rayon["id"], "city": "LYON", "sortBy": "priceCents"}))
    assert [s["id"] for s in found["items"]] == [spaces[1]["id"], spaces[0]["id"]] and found["total"] == 2

    campaign = _ok(client.simulate_post("/api/campaigns", headers=industrial, json={
        "name": "Été", "startsAt": "2026-06-01T00:00:00Z", "endsAt": "2026-06-30T00:00:00Z",
        "universeIds": [universe["id"]]}), 201)["campaign"]
    assert campaign["startsAt"] == "2026-06-01T00:00:00.000Z" and campaign["createdAt"].endswith("Z")
    for space in spaces:
        item = _ok(client.simulate_post("/api/campaigns/cart/items", headers=industrial,
                                        json={"campaignId": campaign["id"], "adSpaceId": space["id"]}), 201)["item"]
        assert item["createdAt"].endswith("Z") and item["industrialTotalPayableCents"] > space["priceCents"]
    cart = _ok(client.simulate_get("/api/campaigns/cart", headers=industrial))
    assert {k: cart[k] for k in ("totalNetDistributorCents", "totalPlatformCommissionCents",
                                 "totalIndustrialPayableCents", "commissionRateBps")} == {
        "totalNetDistributorCents": 12_678, "totalPlatformCommissionCents": 2_536,
        "totalIndustrialPayableCents": 15_214, "commissionRateBps": 2000}
    first = next(i for i in cart["items"] if i["adSpace"]["id"] == spaces[0]["id"])
    assert (first["netDistributorAmountCents"], first["platformCommissionAmountCents"],
            first["industrialTotalPayableCents"], first["reservationTotalCents"]) == (12_345, 2469, 14_814, 12_345)

    created = _ok(client.simulate_post("/api/campaigns/cart/checkout", headers=industrial), 201)["reservations"]
    assert {(r["status"], r["billingModel"]) for r in created} == {("pending_review", "principal_seller")}
    assert _ok(client.simulate_get("/api/campaigns/cart", headers=industrial))["items"] == []
    by_space = {r["adSpace"]["id"]: r for r in created}
    to_approve, to_counter = by_space[spaces[0]["id"]], by_space[spaces[1]["id"]]

    listed = _ok(client.simulate_get("/api/reservations", headers=distributor, params={"sortBy": "totalAmountCents"}))
    assert [r["id"] for r in listed["items"]] == [to_counter["id"], to_approve["id"]]
    assert {(r["impressionStatus"], r["batchCode"], r["printOrderStatus"]) for r in listed["items"]} == {
        (None, None, None)}

    approved = _ok(client.simulate_post(f"/api/distributor/reservations/{to_approve['id']}/review",
                                        headers=distributor, json={"status": "approved"}))["reservation"]
    assert approved["status"] == "approved" and approved["approvedAt"]
    countered = _ok(client.simulate_post(f"/api/distributor/reservations/{to_counter['id']}/review",
                                         headers=distributor,
                                         json={"status": "counter_proposal", "priceCents": 500, "note": "Mieux"}))
    assert countered["reservation"]["status"] == "counter_proposed"
    assert countered["reservation"]["counterProposalPriceCents"] == 500

    accepted = _ok(client.simulate_post(f"/api/reservations/{to_counter['id']}/counter-proposal/accept",
                                        headers=industrial))["reservation"]
    assert (accepted["status"], accepted["billingModel"], accepted["netDistributorAmountCents"],
            accepted["platformCommissionAmountCents"], accepted["industrialTotalPayableCents"]) == (
        "approved", "principal_seller", 500, 100, 600)
    assert accepted["printOrder"] is None
    events = OutboxMessage.select().where(OutboxMessage.actor_name == RESERVATION_APPROVED)
    assert sorted(m.args[0] for m in events) == sorted([to_approve["id"], to_counter["id"]])

    seen = _ok(client.simulate_get(f"/api/reservations/{to_counter['id']}", headers=industrial))
    assert seen["reservation"]["industrialOrganizationId"] == industrial_org.id
    again = client.simulate_post(f"/api/reservations/{to_counter['id']}/counter-proposal/decline", headers=industrial)
    assert again.status_code == 409 and again.json["error"]["code"] == "CONFLICT"


def test_the_business_workspace_is_blocked_until_kyb_is_approved(client, party, admin_headers):
    """Specification A: every business route of an industrial or distributor refuses (403,
    `kyb_not_approved`) until KYB approval; session, organization and KYB routes stay open."""
    universe, _, furniture = _catalog(client, admin_headers)
    _, distributor = party("distributor", kyb_status="submitted")
    _, industrial = party("industrial", kyb_status=None)
    store_body = {"name": "Super", "address": {"street": "2 rue", "postalCode": "75001", "city": "Paris",
                                               "country": "FR"}}
    refused = [
        client.simulate_post("/api/distributor/stores", headers=distributor, json=store_body),
        client.simulate_get("/api/distributor/stores", headers=distributor),
        client.simulate_post("/api/distributor/ad-spaces", headers=distributor, json={
            "storeId": "x", "name": "G", "promoFurnitureTypeId": furniture["id"],
            "placementUniverseId": universe["id"], "priceCents": 100}),
        client.simulate_get("/api/reservations", headers=distributor),
        client.simulate_get("/api/ad-spaces", headers=industrial),
        client.simulate_get("/api/furniture-types", headers=industrial),
        client.simulate_get("/api/store-zones", headers=industrial),
        client.simulate_post("/api/campaigns", headers=industrial, json={
            "name": "Printemps", "startsAt": "2027-03-01T00:00:00Z", "endsAt": "2027-03-31T00:00:00Z"}),
        client.simulate_get("/api/campaigns/cart", headers=industrial),
        client.simulate_post("/api/campaigns/cart/checkout", headers=industrial),
    ]
    for answer in refused:
        assert answer.status_code == 403, answer.json
        assert answer.json["error"]["code"] == "FORBIDDEN"
        assert answer.json["error"]["details"]["reason"] == "kyb_not_approved"
    for headers in (distributor, industrial):
        assert client.simulate_get("/api/auth/session", headers=headers).status_code == 200


def test_other_organizations_see_nothing(client, party, admin_headers):
    _, distributor = party("distributor")
    store = _ok(client.simulate_post("/api/distributor/stores", headers=distributor, json={
        "name": "Mien", "address": {"street": "3 rue", "postalCode": "13001", "city": "Marseille",
                                    "country": "FR"}}), 201)["store"]
    _, stranger = party("distributor")
    assert _ok(client.simulate_get("/api/distributor/stores", headers=stranger))["total"] == 0
    assert _ok(client.simulate_get("/api/distributor/stores", headers=distributor))["items"][0]["id"] == store["id"]
    _, industrial = party("industrial")
    assert client.simulate_post("/api/distributor/stores", headers=industrial, json={}).status_code == 403
    assert client.simulate_get("/api/reservations/unknown", headers=industrial).status_code == 404
    assert client.simulate_get("/api/ad-spaces", params={"sortBy": "nope"}, headers=industrial).status_code == 400
