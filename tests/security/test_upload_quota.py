"""Uploads count against a per-organization quota (`UPLOAD_QUOTA_BYTES`): 413 past it, and
nothing is kept of the refused file."""

from __future__ import annotations

import falcon.testing

from backend.config import load_config
from backend.printing.files import PRINT_ASSETS_CONTEXT
from backend.printing.models import PrintAsset
from tests.factories import add_member, make_organization, make_user, signed_in
from tests.printing.test_print_assets_http import post


def test_uploads_past_the_organization_quota_are_413(make_app):
    assert load_config({}).upload_quota_bytes == 10 * 1024**3
    app = make_app(upload_quota_bytes=5000)
    client = falcon.testing.TestClient(app)
    organization, other = make_organization(kyb_status="approved"), make_organization(kyb_status="approved")
    user, colleague = make_user(), make_user()
    add_member(user, organization, "member")
    add_member(colleague, other, "member")
    headers = signed_in(user, organization)
    file = b"%PDF-1.7\n" + b"x" * 1991  # 2000 bytes
    assert post(client, headers, data=file).status_code == 201
    assert post(client, headers, data=file).status_code == 201
    refused = post(client, headers, data=file)  # 6000 > 5000
    assert refused.status_code == 413
    assert refused.json["error"]["code"] == "PAYLOAD_TOO_LARGE"
    assert refused.json["error"]["details"]["reason"] == "upload_quota_exceeded"
    assert PrintAsset.select().where(PrintAsset.organization_id == organization.id).count() == 2
    folder = app.deps.config.data_dir / "storage" / PRINT_ASSETS_CONTEXT / organization.id.replace(":", "_")
    assert len(list(folder.iterdir())) == 2  # the refused file was not kept
    assert post(client, headers, data=file[:900]).status_code == 201  # what fits still goes in
    assert post(client, signed_in(colleague, other), data=file).status_code == 201  # per organization
    first = PrintAsset.select().where(PrintAsset.organization_id == organization.id).first()
    assert client.simulate_delete(f"/api/print-assets/{first.id}", headers=headers).status_code in (200, 204)
    assert post(client, headers, data=file).status_code == 201  # a deleted visual frees its room
