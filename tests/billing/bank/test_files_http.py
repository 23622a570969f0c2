"""The bank file routes over HTTP: 201 with the file, 409 when nothing is due, the list, the
download (the stored XML, a private attachment), 403 without `billing.manage.all`; the payment
order's `settlement` in the reservation summary; `vitrine bank` writes the same file."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

import pytest
import time_machine

from backend.billing.bank import files
from backend.billing.models import AuditEntry, BankFile
from backend.runtime import current_runtime
from ops.cli import main
from tests.billing.bank.data import (
    CREDITOR_ID,
    PLATFORM_BIC,
    PLATFORM_IBAN,
    bank_config,
    collect,
    command_booting,
    read_debits,
    sign_sepa_mandate,
)
from tests.billing.helpers import Market, approved_org
from tests.billing.self_billing.data import Party, admin_headers
from tests.factories import make_admin, signed_in

BASE = "/api/admin/billing/bank"
TUESDAY = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def bank_client(make_app, config):
    import falcon.testing

    return falcon.testing.TestClient(make_app(**{
        name: getattr(bank_config(config), name) for name in (
            "platform_sepa_creditor_id", "platform_legal_iban", "platform_legal_bic", "platform_legal_company_name")}))


@pytest.fixture
def due_debit():
    industrial = approved_org("industrial")
    sign_sepa_mandate(industrial)
    return collect(Market(), industrial)


def test_an_admin_makes_lists_and_downloads_the_direct_debit_file(bank_client, due_debit):
    admin = make_admin()
    with time_machine.travel(TUESDAY, tick=False):
        made = bank_client.simulate_post(f"{BASE}/direct-debits", headers=signed_in(admin))
        assert made.status_code == 201
        answer = made.json["data"]["file"]
        assert set(answer) == {"id", "kind", "messageId", "count", "controlSumCents", "createdAt"}
        assert (answer["kind"], answer["count"], answer["controlSumCents"], answer["createdAt"]) == (
            "direct_debit", 1, 144_000, "2026-12-01T09:00:00.000Z")
        again = bank_client.simulate_post(f"{BASE}/direct-debits", headers=signed_in(admin))
        assert (again.status_code, again.json["error"]["code"], again.json["error"]["details"]["reason"]) == (
            409, "CONFLICT", "nothing_due")
        nothing = bank_client.simulate_post(f"{BASE}/transfers", headers=signed_in(admin))
        assert (nothing.status_code, nothing.json["error"]["details"]["reason"]) == (409, "nothing_due")
        listed = bank_client.simulate_get(f"{BASE}/files", headers=signed_in(admin)).json["data"]
        download = bank_client.simulate_get(f"{BASE}/files/{answer['id']}", headers=signed_in(admin))
        summary = bank_client.simulate_get(f"/api/billing/reservations/{due_debit.reservation_id}/summary",
                                           headers=signed_in(admin)).json["data"]
    assert (listed["total"], listed["items"][0]["id"], listed["items"][0]["status"]) == (1, answer["id"], "live")
    assert (listed["items"][0]["requestedOn"], listed["items"][0]["createdByUserId"]) == ("2026-12-02", admin.id)
    assert download.status_code == 200 and download.headers["content-type"] == "application/xml"
    assert download.headers["cache-control"] == "private, no-store"
    assert f"pain.008.001.08-{answer['messageId']}.xml" in download.headers["content-disposition"]
    assert hashlib.sha256(download.content).hexdigest() == listed["items"][0]["sha256"]
    header, _ = read_debits(download.content)
    assert (header["creditorId"], header["creditorIban"], header["creditorBic"]) == (
        CREDITOR_ID, PLATFORM_IBAN, PLATFORM_BIC)
    assert [(o["status"], o["settlement"]) for o in summary["paymentOrders"]] == [("paid", "in_file")]
    assert AuditEntry.get(AuditEntry.action == "billing.bank.file").actor_user_id == admin.id
    assert bank_client.simulate_get(f"{BASE}/files/unknown", headers=signed_in(admin)).status_code == 404
    assert bank_client.simulate_get(f"{BASE}/files?sortBy=sha256", headers=signed_in(admin)).status_code == 400


def test_the_bank_routes_need_billing_manage_all(bank_client, due_debit):
    member = Party("industrial").headers
    for method, path in (("POST", "direct-debits"), ("POST", "transfers"), ("GET", "files"), ("GET", "files/x")):
        assert bank_client.simulate_request(method, f"{BASE}/{path}", headers=member).status_code == 403
    assert bank_client.simulate_post(f"{BASE}/direct-debits").status_code == 401
    assert BankFile.select().count() == 0
    assert bank_client.simulate_get(f"{BASE}/files", headers=admin_headers()).status_code == 200


def test_vitrine_bank_direct_debits_writes_the_stored_file(due_debit, config, monkeypatch, tmp_path, capsys):
    with command_booting(config):
        for name, value in (("PLATFORM_SEPA_CREDITOR_ID", CREDITOR_ID), ("PLATFORM_LEGAL_IBAN", PLATFORM_IBAN),
                            ("PLATFORM_LEGAL_BIC", PLATFORM_BIC)):
            monkeypatch.setenv(name, value)
        target = tmp_path / "debits.xml"
        assert main(["bank", "direct-debits", "-o", str(target)]) == 0
        file = BankFile.get()
        assert target.read_bytes() == current_runtime().storage.read_bytes(files.STORAGE_CONTEXT, file.storage_key)
        assert f"{target}: 1 transaction(s), 1440.00 EUR" in capsys.readouterr().out
        assert read_debits(target.read_bytes())[0]["controlSumCents"] == 144_000
        audit = AuditEntry.get(AuditEntry.action == "billing.bank.file")
        assert audit.actor_user_id is None and "command line (vitrine bank direct-debits" in audit.reason
        assert main(["bank", "direct-debits", "-o", str(tmp_path / "again.xml")]) == 1
        assert "no payment order is due" in capsys.readouterr().err and not (tmp_path / "again.xml").exists()
