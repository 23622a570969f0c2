"""`/api/print-assets` through HTTP: multipart upload, list, read, stream, delete, access."""

import tracemalloc

import falcon.testing
import pytest

from backend.identity.models import Organization
from backend.printing.files import PRINT_ASSETS_CONTEXT
from backend.printing.models import PrintAsset
from tests.factories import add_member, make_organization, make_user, signed_in

PDF = b"%PDF-1.7\n" + b"0123456789" * 300
BOUNDARY = "vitrine-test-boundary"


def multipart(data: bytes, *, field="file", filename="Affiche Été.pdf", extra_fields=()):
    parts = [
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        for name, value in extra_fields
    ]
    parts.append(
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{field}"; filename="{filename}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n".encode() + data + b"\r\n"
    )
    body = b"".join(parts) + f"--{BOUNDARY}--\r\n".encode()
    return {"body": body, "headers": {"Content-Type": f"multipart/form-data; boundary={BOUNDARY}"}}


@pytest.fixture
def member(setting):
    return signed_in(setting.industrial_user, setting.industrial)


def post(client, headers, data=PDF, **kwargs):
    request = multipart(data, **kwargs)
    return client.simulate_post("/api/print-assets", body=request["body"], headers={**request["headers"], **headers})


def test_upload_answers_201_with_the_visual(client, member, setting):
    resp = post(client, member)
    assert resp.status_code == 201, resp.json
    data = resp.json["data"]
    assert data["originalName"] == "Affiche Été.pdf" and data["technicalName"] == "affiche-ete.pdf"
    assert (data["contentType"], data["sizeBytes"]) == ("application/pdf", len(PDF))
    assert data["uploadedByUserId"] == setting.industrial_user.id
    assert data["createdAt"].endswith("Z") and data["contentUrl"] == f"/api/print-assets/{data['id']}/content"
    assert PrintAsset.get_by_id(data["id"]).organization_id == setting.industrial.id


def test_an_upload_is_streamed_not_held_in_memory(client, member):
    size = 30 * 1024 * 1024
    request = multipart(b"%PDF-1.7" + bytes(size - 8))
    headers = {**request["headers"], **member}
    tracemalloc.start()
    try:
        resp = client.simulate_post("/api/print-assets", body=request["body"], headers=headers)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert resp.status_code == 201 and resp.json["data"]["sizeBytes"] == size
    assert peak < 8 * 1024 * 1024, f"peak allocations {peak} bytes for a {size}-byte upload"


def test_the_file_part_is_found_among_other_fields(client, member):
    assert post(client, member, extra_fields=[("note", "hello")]).status_code == 201


def test_a_visual_can_be_read_listed_streamed_and_deleted(client, member, app):
    asset_id = post(client, member).json["data"]["id"]
    one = client.simulate_get(f"/api/print-assets/{asset_id}", headers=member)
    assert one.status_code == 200 and one.json["data"]["id"] == asset_id

    page = client.simulate_get("/api/print-assets", params={"pageSize": 10}, headers=member).json["data"]
    assert (page["total"], page["page"], page["pageSize"]) == (1, 1, 10)
    assert [item["id"] for item in page["items"]] == [asset_id]

    content = client.simulate_get(f"/api/print-assets/{asset_id}/content", headers=member)
    assert content.status_code == 200 and content.content == PDF
    assert content.headers["content-type"] == "application/pdf"
    assert content.headers["content-length"] == str(len(PDF))
    assert 'filename="affiche-ete.pdf"' in content.headers["content-disposition"]
    assert content.headers["x-content-type-options"] == "nosniff"

    deleted = client.simulate_delete(f"/api/print-assets/{asset_id}", headers=member)
    assert deleted.status_code == 200 and deleted.json["data"] == {"id": asset_id, "deleted": True}
    assert client.simulate_get(f"/api/print-assets/{asset_id}", headers=member).status_code == 404


@pytest.mark.parametrize("data", [b"GIF89a-not-accepted", b"plain text, not a visual"])
def test_other_content_is_a_validation_error(client, member, data):
    resp = post(client, member, data=data)
    assert resp.status_code == 400 and resp.json["error"]["code"] == "VALIDATION_ERROR"
    assert "file" in resp.json["error"]["details"]["fields"]
    assert PrintAsset.select().count() == 0


def test_a_body_without_the_file_part_is_a_validation_error(client, member):
    resp = post(client, member, field="document")
    assert resp.status_code == 400 and resp.json["error"]["details"]["fields"] == {"file": ["required"]}


def test_a_malformed_multipart_body_is_a_validation_error(client, member):
    headers = {"Content-Type": f"multipart/form-data; boundary={BOUNDARY}", **member}
    resp = client.simulate_post("/api/print-assets", body=b"no boundary anywhere", headers=headers)
    assert resp.status_code == 400 and resp.json["error"]["code"] == "VALIDATION_ERROR"


def test_a_json_body_is_unsupported(client, member):
    resp = client.simulate_post("/api/print-assets", json={"file": "x"}, headers=member)
    assert resp.status_code == 415 and resp.json["error"]["code"] == "UNSUPPORTED_MEDIA_TYPE"


@pytest.mark.parametrize("size", [1001, 200_000])
def test_a_file_over_the_limit_is_413_and_nothing_is_kept(make_app, setting, size):
    """1001 bytes passes BodyLimit and is stopped by the storage; 200 kB is refused by its
    declared Content-Length before anything is read."""
    app = make_app(print_asset_max_bytes=1000)
    client = falcon.testing.TestClient(app)
    member = signed_in(setting.industrial_user, setting.industrial)
    resp = post(client, member, data=b"%PDF-1.7" + b"x" * (size - 8))
    assert resp.status_code == 413 and resp.json["error"]["code"] == "PAYLOAD_TOO_LARGE"
    assert PrintAsset.select().count() == 0
    root = app.deps.config.data_dir / "storage" / PRINT_ASSETS_CONTEXT / setting.industrial.id.replace(":", "_")
    assert not root.exists() or not any(root.iterdir())


def test_another_organizations_visual_is_not_found(client, member, setting):
    asset_id = post(client, member).json["data"]["id"]
    other_org = make_organization("industrial", kyb_status="approved")
    other_user = make_user()
    add_member(other_user, other_org)
    other = signed_in(other_user, other_org)
    for method, path in [("GET", ""), ("GET", "/content"), ("DELETE", "")]:
        resp = client.simulate_request(method, f"/api/print-assets/{asset_id}{path}", headers=other)
        assert resp.status_code == 404 and resp.json["error"]["code"] == "NOT_FOUND"
    assert client.simulate_get("/api/print-assets", headers=other).json["data"]["total"] == 0
    assert PrintAsset.get_by_id(asset_id).deleted_at is None


def test_a_visual_used_by_a_print_order_is_a_conflict(client, member, setting, make_print_order):
    asset_id = post(client, member).json["data"]["id"]
    make_print_order(lines=[{"zone": setting.zones[0], "quantity": 2, "asset_id": asset_id}])
    resp = client.simulate_delete(f"/api/print-assets/{asset_id}", headers=member)
    assert resp.status_code == 409 and resp.json["error"]["code"] == "CONFLICT"


def test_an_unknown_sort_key_is_a_validation_error(client, member):
    resp = client.simulate_get("/api/print-assets", params={"sortBy": "storage_key"}, headers=member)
    assert resp.status_code == 400 and "sortBy" in resp.json["error"]["details"]["fields"]


def test_anonymous_callers_are_unauthenticated(client):
    assert client.simulate_get("/api/print-assets").status_code == 401


def test_printers_are_forbidden(client, setting):
    resp = client.simulate_get("/api/print-assets", headers=signed_in(setting.printer_user, setting.printer))
    assert resp.status_code == 403 and resp.json["error"]["code"] == "FORBIDDEN"


def test_an_industrial_user_acting_for_another_kind_of_organization_is_forbidden(client, setting):
    add_member(setting.industrial_user, setting.distributor, "member")
    resp = client.simulate_get("/api/print-assets", headers=signed_in(setting.industrial_user, setting.distributor))
    assert resp.status_code == 403
    assert resp.json["error"]["details"]["reason"] == "industrial_organization_required"


def test_an_industrial_organization_without_approved_kyb_is_forbidden(client, setting):
    Organization.update(kyb_status="submitted").where(Organization.id == setting.industrial.id).execute()
    resp = client.simulate_get("/api/print-assets", headers=signed_in(setting.industrial_user, setting.industrial))
    assert resp.status_code == 403


def test_the_routes_and_shapes_are_in_the_openapi_document(client):
    document = client.simulate_get("/api/openapi.json").json
    paths = document["paths"]
    assert set(paths["/api/print-assets"]) >= {"get", "post"}
    assert set(paths["/api/print-assets/{asset_id}"]) >= {"get", "delete"}
    assert "get" in paths["/api/print-assets/{asset_id}/content"]
    upload = paths["/api/print-assets"]["post"]
    assert "file" in upload["requestBody"]["content"]["multipart/form-data"]["schema"]["properties"]
    assert {"PrintAssetOut", "PrintAssetEnvelope", "PrintAssetPageEnvelope"} <= set(document["components"]["schemas"])
    params = {p["name"] for p in paths["/api/print-assets"]["get"]["parameters"]}
    assert {"page", "pageSize", "search", "sortBy", "sortDir"} <= params
