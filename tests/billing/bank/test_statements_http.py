"""The statement routes over HTTP: admins only, a refused document is a 400 `VALIDATION_ERROR`
with its reason (too large included, before the body is read), the overdue list."""

from __future__ import annotations

from tests.billing.bank.statements_data import IBAN, collected, credit, statement
from tests.billing.self_billing.data import Party, admin_headers

PATH = "/api/admin/billing/bank/statements"


def industrial_headers() -> dict[str, str]:
    return Party("industrial").headers


def _post(client, body: bytes, headers: dict | None = None, **extra):
    return client.simulate_post(PATH, body=body, headers={**(headers or admin_headers()),
                                                          "Content-Type": "application/xml", **extra})


def test_only_a_billing_manager_imports_and_a_refusal_names_its_reason(bank_client):
    document = statement(credit(collected()))
    assert _post(bank_client, document, industrial_headers()).status_code == 403
    dtd = _post(bank_client, b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY e "x">]><d>&e;</d>')
    assert dtd.status_code == 400 and dtd.json["error"]["code"] == "VALIDATION_ERROR"
    assert dtd.json["error"]["details"]["reason"] == "dtd"
    large = bank_client.simulate_post(PATH, body=b"<x/>", headers={
        **admin_headers(), "Content-Type": "application/xml", "Content-Length": str(64 * 1024 * 1024)})
    assert large.status_code == 400 and large.json["error"]["details"]["reason"] == "too_large"
    created = _post(bank_client, document)
    assert created.status_code == 201 and created.json["data"]["statement"]["matched"] == 1


def test_the_overdue_list_and_the_unmatched_queue_answer_pages(bank_client):
    for path in ("/api/admin/billing/bank/overdue", "/api/admin/billing/bank/unmatched"):
        answer = bank_client.simulate_get(path, headers=admin_headers())
        assert answer.status_code == 200 and set(answer.json["data"]) == {"items", "total", "page", "pageSize"}
        assert bank_client.simulate_get(path, headers=industrial_headers()).status_code == 403


def test_vitrine_bank_import_prints_the_counts_or_the_refusal(config, monkeypatch, tmp_path, capsys):
    from ops.cli import main
    from tests.billing.bank.data import command_booting

    monkeypatch.setenv("PLATFORM_LEGAL_IBAN", IBAN)
    order = collected()
    document = tmp_path / "camt053.xml"
    document.write_bytes(statement(credit(order)))
    with command_booting(config):
        assert main(["bank", "import", str(document)]) == 0
        assert ": 1 lines, 1 matched, 0 returned, 0 unmatched" in capsys.readouterr().out
        assert main(["bank", "import", str(document)]) == 0
        assert "already imported: nothing changed" in capsys.readouterr().out
        document.write_bytes(b"<x/>")
        assert main(["bank", "import", str(document)]) == 1
    assert "(not_camt)" in capsys.readouterr().err


def test_only_an_xml_content_type_is_imported(bank_client):
    document = statement(credit(collected()))
    for content_type in ("text/plain", "application/json", "application/octet-stream", ""):
        refused = bank_client.simulate_post(PATH, body=document,
                                            headers={**admin_headers(), "Content-Type": content_type})
        assert refused.status_code == 415, content_type
        assert refused.json["error"]["code"] == "UNSUPPORTED_MEDIA_TYPE"
    accepted = _post(bank_client, document, **{"Content-Type": "text/xml; charset=utf-8"})
    assert accepted.status_code == 201, accepted.json
