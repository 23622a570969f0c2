"""Admins see the delegation documents they must check before approving: listed in the admin
organization detail, each downloadable (permission kyb.review), never by anyone else."""

from __future__ import annotations

import urllib3

from tests.factories import make_admin, make_user, signed_in


def _upload(client, organization, user, document_type: str, content: bytes, filename: str):
    body, content_type = urllib3.encode_multipart_formdata(
        {"type": document_type, "file": (filename, content, "application/octet-stream")})
    answer = client.simulate_post(f"/api/organizations/{organization.id}/kyb/documents", body=body,
                                  headers={**signed_in(user, organization), "Content-Type": content_type})
    assert answer.status_code == 201, answer.json


def test_the_admin_detail_lists_the_delegation_documents_and_each_downloads(client, onboarding_org):
    organization, manager = onboarding_org(on_registry=False)
    _upload(client, organization, manager, "delegation_letter", b"%PDF-1.4 lettre de delegation", "lettre.pdf")
    _upload(client, organization, manager, "delegator_id_document", b"\x89PNG\r\n\x1a\npiece", "id.png")
    admin = signed_in(make_admin())
    detail = client.simulate_get(f"/api/admin/organizations/{organization.id}", headers=admin)
    assert detail.status_code == 200
    documents = detail.json["data"]["organization"]["kybDocuments"]
    assert [(d["type"], d["contentType"]) for d in documents] == [
        ("delegation_letter", "application/pdf"), ("delegator_id_document", "image/png")]
    base = f"/api/admin/organizations/{organization.id}/kyb/documents"
    assert documents[0]["downloadUrl"] == f"{base}/delegation_letter"

    letter = client.simulate_get(f"{base}/delegation_letter", headers=admin)
    assert letter.status_code == 200 and letter.headers["content-type"] == "application/pdf"
    assert letter.content == b"%PDF-1.4 lettre de delegation"
    assert 'filename="delegation_letter.pdf"' in letter.headers["content-disposition"]
    image = client.simulate_get(f"{base}/delegator_id_document", headers=admin)
    assert image.headers["content-type"] == "image/png" and image.content.startswith(b"\x89PNG")

    missing = client.simulate_get(f"{base}/delegate_id_document", headers=admin)
    assert missing.status_code == 404 and missing.json["error"]["code"] == "NOT_FOUND"
    assert client.simulate_get(f"{base}/passport", headers=admin).status_code == 404
    assert client.simulate_get(f"{base}/delegation_letter",
                               headers=signed_in(manager, organization)).status_code == 403
    assert client.simulate_get(f"{base}/delegation_letter", headers=signed_in(make_user())).status_code == 403
