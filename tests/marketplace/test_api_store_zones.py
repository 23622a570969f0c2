"""Store-zone admin routes (Specification A): permission, tree, 409s with details."""

from __future__ import annotations

from tests.factories import add_member, make_admin, make_organization, make_user, signed_in


def test_store_zone_routes_need_an_admin(client):
    user = make_user()
    assert client.simulate_get("/api/admin/store-zones").status_code == 401
    assert client.simulate_get("/api/admin/store-zones", headers=signed_in(user)).status_code == 403


def test_tree_duplicates_and_referenced_deletion(client):
    admin = signed_in(make_admin())
    post = client.simulate_post
    frais = post("/api/admin/store-zones/universes", headers=admin, json={"label": "Frais", "isTransversal": False})
    assert frais.status_code == 201 and frais.json["data"]["universe"]["code"] == "UNIV_FRAIS"
    universe_id = frais.json["data"]["universe"]["id"]
    duplicate = post("/api/admin/store-zones/universes", headers=admin, json={"label": " FRAIS "})
    assert duplicate.status_code == 409 and duplicate.json["error"]["code"] == "CONFLICT"
    rayon = post("/api/admin/store-zones/rayons", headers=admin, json={"universeId": universe_id, "label": "Crèmerie"})
    assert rayon.json["data"]["rayon"]["code"] == "RAYON_CREMERIE"

    tree = client.simulate_get("/api/admin/store-zones", headers=admin).json["data"]["universes"]
    ours = next(u for u in tree if u["id"] == universe_id)
    assert [r["label"] for r in ours["rayons"]] == ["Crèmerie"]

    refused = client.simulate_delete(f"/api/admin/store-zones/universes/{universe_id}", headers=admin)
    assert refused.status_code == 409
    assert refused.json["error"]["details"] == {"referencedBy": {"rayons": 1}}

    archived = client.simulate_patch(f"/api/admin/store-zones/universes/{universe_id}", headers=admin,
                                     json={"archived": True, "label": "Produits frais"})
    assert archived.json["data"]["universe"]["archivedAt"].endswith("Z")
    assert archived.json["data"]["universe"]["code"] == "UNIV_FRAIS"
    rayon_id = rayon.json["data"]["rayon"]["id"]
    assert client.simulate_delete(f"/api/admin/store-zones/rayons/{rayon_id}", headers=admin).status_code == 200
    assert client.simulate_delete(f"/api/admin/store-zones/universes/{universe_id}", headers=admin).status_code == 200


def test_campaign_reference_blocks_deletion_over_http(client):
    admin = signed_in(make_admin())
    universe = client.simulate_post("/api/admin/store-zones/universes", headers=admin,
                                    json={"label": "Ciblé"}).json["data"]["universe"]
    industrial = make_organization("industrial", kyb_status="approved")
    user = make_user()
    add_member(user, industrial)
    created = client.simulate_post("/api/campaigns", headers=signed_in(user, industrial), json={
        "name": "C", "startsAt": "2026-01-01T00:00:00Z", "endsAt": "2026-01-31T00:00:00Z",
        "universeIds": [universe["id"]]})
    assert created.status_code == 201
    refused = client.simulate_delete(f"/api/admin/store-zones/universes/{universe['id']}", headers=admin)
    assert refused.status_code == 409 and refused.json["error"]["details"] == {"referencedBy": {"campaigns": 1}}


def test_marketplace_shapes_are_in_the_openapi_document(client):
    document = client.simulate_get("/api/openapi.json").json
    schemas = document["components"]["schemas"]
    for name in ("CartOut", "CartItemOut", "ReservationOut", "FurnitureTypeIn", "AdSpaceIn", "UniversePatch",
                 "StoreZoneTreeOut", "ReviewIn"):
        assert name in schemas, name
    assert "totalIndustrialPayableCents" in schemas["CartOut"]["properties"]
    assert document["paths"]["/api/campaigns/cart/checkout"]["post"]["x-access"] == "industrial + KYB approved"
