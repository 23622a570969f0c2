"""The document-template and PDF-style routes of Specification A, as an admin uses them."""

from __future__ import annotations

import pytest

from backend.audit import SecurityEvent
from backend.documents.catalog import load_catalog
from tests.documents.conftest import pdf_pages
from tests.factories import make_admin, make_user, signed_in

BASE = "/api/admin/document-templates"
KEY = "cgu_acceptance"


@pytest.fixture
def admin_user():
    return make_admin()


@pytest.fixture
def as_admin(admin_user):
    return signed_in(admin_user)


def test_routes_require_an_admin_holding_kyb_review(client, seeded):
    assert client.simulate_get(f"{BASE}/catalog").status_code == 401
    answer = client.simulate_get(f"{BASE}/catalog", headers=signed_in(make_user(roles=["industrial"])))
    assert (answer.status_code, answer.json["error"]["code"]) == (403, "FORBIDDEN")


def test_catalog_and_template_list(client, seeded, as_admin):
    catalog = client.simulate_get(f"{BASE}/catalog", headers=as_admin).json["data"]
    entry = next(t for t in catalog["templates"] if t["templateKey"] == "sepa_mandate")
    assert entry["category"] == "billing" and entry["isRequiredForKyb"] is True
    assert {"name": "signatureDate", "type": "date"}.items() <= entry["variables"][-1].items()
    assert "headerLines" in catalog["frameKeys"]

    listing = client.simulate_get(BASE, headers=as_admin).json["data"]
    assert [t["templateKey"] for t in listing["templates"]] == list(load_catalog())
    contract = next(t for t in listing["templates"] if t["templateKey"] == "framework_contract")
    assert (contract["status"], contract["currentVersion"], contract["hasDraft"]) == ("published", 1, False)
    assert listing["pdfStyle"]["templateKey"] == "pdf_style" and listing["pdfStyle"]["currentVersion"] == 1


def test_edit_preview_publish_and_history(client, seeded, as_admin, admin_user):
    content = "# CGU révisées\n\nAcceptées par {{ organizationName }} le {{ acceptanceDate }}.\n\n" \
              "{{signer|signature|180|60}}\n"
    created = client.simulate_post(f"{BASE}/{KEY}/draft", json={"content": content}, headers=as_admin)
    assert created.status_code == 201
    draft = created.json["data"]
    assert (draft["status"], draft["version"], draft["content"]) == ("draft", None, content)
    assert draft["createdByUserId"] == admin_user.id and draft["titleSnapshot"]
    updated = client.simulate_post(f"{BASE}/{KEY}/draft", json={"content": content + "\nFin.\n"}, headers=as_admin)
    assert (updated.status_code, updated.json["data"]["id"]) == (200, draft["id"])

    preview = client.simulate_post(f"{BASE}/{KEY}/preview", json={"context": {"organizationName": "Lait & Co"}},
                                   headers=as_admin)
    assert preview.status_code == 200
    assert preview.headers["content-type"] == "application/pdf"
    assert 'filename="cgu_acceptance-draft-preview.pdf"' in preview.headers["content-disposition"]
    (page,) = pdf_pages(preview.content)
    assert "CGU révisées" in page and "Lait & Co" in page and "22 novembre 2026" in page
    assert "{{signer|signature|180|60}}" in page and "1 / 1" in page

    published = client.simulate_post(f"{BASE}/{KEY}/publish", headers=as_admin)
    assert published.status_code == 201
    assert (published.json["data"]["version"], published.json["data"]["updatedByUserId"]) == (2, admin_user.id)
    assert published.json["data"]["publishedAt"].endswith("Z")
    again = client.simulate_post(f"{BASE}/{KEY}/publish", headers=as_admin)
    assert (again.status_code, again.json["error"]["code"]) == (404, "NOT_FOUND")

    history = client.simulate_get(f"{BASE}/{KEY}/versions", headers=as_admin).json["data"]
    assert history["draft"] is None and [v["version"] for v in history["versions"]] == [2, 1]

    first = client.simulate_post(f"{BASE}/{KEY}/preview?version=1", headers=as_admin)
    (page,) = pdf_pages(first.content)
    assert "conditions générales d'utilisation" in page and "CGU révisées" not in page


def test_preview_errors(client, seeded, as_admin):
    missing = client.simulate_post(f"{BASE}/{KEY}/preview", json={"context": {"organizationName": None}},
                                   headers=as_admin)
    assert (missing.status_code, missing.json["error"]["code"]) == (400, "VALIDATION_ERROR")
    assert "organizationName" in missing.json["error"]["message"]
    assert client.simulate_post(f"{BASE}/{KEY}/preview?version=9", headers=as_admin).status_code == 404
    assert client.simulate_post(f"{BASE}/nope/preview", headers=as_admin).status_code == 404
    assert client.simulate_post(f"{BASE}/{KEY}/preview?version=zero", headers=as_admin).status_code == 400


def test_draft_validation_errors(client, seeded, as_admin):
    for body in ({}, {"content": ""}, {"content": "{{ __import__('os') }}"}, {"content": "{% for %}"}):
        answer = client.simulate_post(f"{BASE}/{KEY}/draft", json=body, headers=as_admin)
        assert (answer.status_code, answer.json["error"]["code"]) == (400, "VALIDATION_ERROR"), body
    assert client.simulate_delete(f"{BASE}/{KEY}/draft", headers=as_admin).status_code == 404


def test_sandbox_refusals_are_validation_errors_over_http(client, seeded, as_admin):
    macro = client.simulate_post(f"{BASE}/{KEY}/draft", headers=as_admin,
                                 json={"content": "{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}"})
    assert (macro.status_code, macro.json["error"]["code"]) == (400, "VALIDATION_ERROR")
    assert "macros are not allowed" in macro.json["error"]["message"]
    saved = client.simulate_post(f"{BASE}/{KEY}/draft", headers=as_admin,
                                 json={"content": "# CGU\n\n{{ organizationName.__class__.__mro__ }}\n"})
    # The names are declared; the attribute is refused when rendering, and the draft is rendered
    # once with the catalog's examples when saved.
    assert (saved.status_code, saved.json["error"]["code"]) == (400, "VALIDATION_ERROR")
    assert saved.json["error"]["details"]["reason"] == "template_limit"
    assert "<class" not in saved.json["error"]["message"]


def test_version_deletion_rules_and_journal(client, seeded, as_admin, admin_user):
    path = f"{BASE}/{KEY}/versions/1"
    last = client.simulate_delete(path, json={"reason": "obsolète"}, headers=as_admin)
    assert (last.status_code, last.json["error"]["code"]) == (409, "TEMPLATE_LAST_ACTIVE_VERSION")

    client.simulate_post(f"{BASE}/{KEY}/draft", json={"content": "# CGU v2\n"}, headers=as_admin)
    client.simulate_post(f"{BASE}/{KEY}/publish", headers=as_admin)
    for body in (None, {}, {"reason": ""}, {"reason": "   "}):
        answer = client.simulate_delete(path, json=body, headers=as_admin)
        assert (answer.status_code, answer.json["error"]["code"]) == (400, "VALIDATION_ERROR"), body
    deleted = client.simulate_delete(path, json={"reason": "remplacée par la v2"}, headers=as_admin)
    assert deleted.status_code == 200
    assert deleted.json["data"] == {"templateKey": KEY, "kind": "markdown", "status": "published", "version": 1,
                                    "deleted": True}
    assert client.simulate_delete(path, json={"reason": "encore"}, headers=as_admin).status_code == 404
    malformed = client.simulate_delete(f"{BASE}/{KEY}/versions/v2", json={"reason": "x"}, headers=as_admin)
    assert (malformed.status_code, malformed.json["error"]["code"]) == (400, "VALIDATION_ERROR")
    (row,) = SecurityEvent.select().where(SecurityEvent.event == "document_template.version_deleted")
    assert (row.actor_user_id, row.target_type, row.target_id) == (admin_user.id, "document_template", KEY)
    assert row.details == {"templateKey": KEY, "kind": "markdown", "version": 1, "reason": "remplacée par la v2"}


def test_pdf_style_cycle(client, seeded, as_admin):
    source = client.simulate_get(f"{BASE}/pdf-style/source", headers=as_admin).json["data"]
    assert source["version"] == 1 and "DejaVu Sans" in source["content"]

    css = source["content"] + "\nmain::after { content: 'STYLE-EN-BROUILLON'; }\n"
    assert client.simulate_post(f"{BASE}/pdf-style/draft", json={"content": css}, headers=as_admin).status_code == 201
    preview = client.simulate_post(f"{BASE}/{KEY}/preview?style=draft", headers=as_admin)
    assert "STYLE-EN-BROUILLON" in pdf_pages(preview.content)[0]

    published = client.simulate_post(f"{BASE}/pdf-style/publish", headers=as_admin)
    assert (published.status_code, published.json["data"]["kind"], published.json["data"]["version"]) == (
        201, "pdf_css", 2)
    assert client.simulate_get(f"{BASE}/pdf-style/source", headers=as_admin).json["data"]["content"] == css
    history = client.simulate_get(f"{BASE}/pdf-style/versions", headers=as_admin).json["data"]
    assert [v["version"] for v in history["versions"]] == [2, 1]

    client.simulate_post(f"{BASE}/pdf-style/draft", json={"content": "h1 { color: red; }"}, headers=as_admin)
    deleted = client.simulate_delete(f"{BASE}/pdf-style/draft", json={"reason": "essai"}, headers=as_admin)
    assert (deleted.status_code, deleted.json["data"]["kind"]) == (200, "pdf_css")
    assert client.simulate_post(f"{BASE}/pdf-style/publish", headers=as_admin).status_code == 404


def test_shapes_are_in_the_openapi_document(client):
    document = client.simulate_get("/api/openapi.json").json
    draft = document["paths"][f"{BASE}/{{templateKey}}/draft"]["post"]
    assert draft["x-access"] == "admin + kyb.review"
    assert draft["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith("/DraftIn")
    preview = document["paths"][f"{BASE}/{{templateKey}}/preview"]["post"]
    assert "application/pdf" in preview["responses"]["200"]["content"]
    for name in ("VersionOut", "HistoryOut", "CatalogEntryOut", "DeleteVersionIn", "StyleSourceOut"):
        assert name in document["components"]["schemas"]
