"""The VAT of a month from the books (per rate; 0 % posts nothing to a VAT account; equal to the
trial balance), and the accounting and bank routes over HTTP: the bank reconciliation, the VAT
of a month, an unmatched line resolved; the `reconcile` and `vat` commands."""

from __future__ import annotations

from datetime import date
from types import SimpleNamespace

import falcon.testing

from backend.billing.accounting import entries, reports
from backend.billing.accounting.chart import Account, Journal
from backend.billing.accounting.entries import Entry, Line, Party
from backend.billing.accounting.vat_return import RateLine, month_bounds, vat_return
from backend.billing.bank import statements
from backend.billing.models import Invoice, PaymentMethod
from ops import accounting_commands
from ops.simulators.bank_store import entry_xml
from tests.billing.accounting.books import validate_now
from tests.billing.bank.statements_data import DAY, IBAN, collected, config, number_of, statement
from tests.billing.self_billing.data import Party as Caller
from tests.billing.self_billing.data import admin_headers

CUSTOMER = Party("552100554", "Client SAS")


def _sale(day: date, excl: int, vat: int) -> None:
    entries.post(Entry(journal=Journal.SALES, event="test", day=day, label="Vente", lines=(
        Line(Account.CUSTOMERS, debit_cents=excl + vat, party=CUSTOMER, letter_group="g"),
        Line(Account.SERVICES_SOLD, credit_cents=excl), Line(Account.VAT_COLLECTED, credit_cents=vat))))


def _vat_and_balance(month: str):
    validate_now()
    start, end = month_bounds(month)
    balance = {line.account: line.balance_cents for line in reports.trial_balance(start=start, end=end).accounts}
    return vat_return(month), balance


def test_the_vat_of_a_month_is_per_rate_and_equals_the_trial_balance():
    order = collected(PaymentMethod.BANK_TRANSFER)  # a sale at the platform's rate, this month, not paid yet
    invoice = Invoice.get_by_id(order.invoice_id)
    vat = order.amount_cents - invoice.amount_excl_tax_cents
    month = f"{DAY:%Y-%m}"
    start, _ = month_bounds(month)
    _sale(date(start.year, start.month, 2), 10_000, 0)  # a reverse-charged sale: 0 % VAT, no VAT line
    report, balance = _vat_and_balance(month)
    assert balance["44574"] == -vat and "44571" not in balance  # due when paid: not in the return yet
    assert report.collected == [RateLine(None, 10_000, 0)]  # the 0 % sale: its base, no tax
    statements.import_statement(statement(entry_xml("paid", True, order.amount_cents, DAY,
                                                    remittance=f"Facture {number_of(order)}")),
                                config=config(), user_id=None)
    report, balance = _vat_and_balance(month)
    assert report.collected_cents == -balance["44571"] == vat and balance.get("44574", 0) == 0
    assert report.deductible_cents == balance.get("44566", 0)
    [sale] = [line for line in report.collected if line.rate_bps is not None]
    assert (sale.rate_bps, sale.vat_cents) == (invoice.vat_rate_bps, vat)
    assert abs(sale.base_cents - invoice.amount_excl_tax_cents) <= 3  # the VAT over its rate: the price paid
    assert report.due_cents == report.collected_cents - report.deductible_cents
    assert vat_return("2001-02").collected == []


def test_the_reconciliation_the_vat_and_a_resolution_over_http(make_app, capsys, monkeypatch, tmp_path):
    client = falcon.testing.TestClient(make_app(platform_legal_iban=IBAN))
    order = collected(PaymentMethod.BANK_TRANSFER)
    statements.import_statement(statement(entry_xml("stranger", True, 5_000, DAY, name="Inconnu")), config=config(),
                                user_id=None)
    answer = client.simulate_get("/api/admin/accounting/bank-reconciliation", params={"date": DAY.isoformat()},
                                 headers=admin_headers())
    assert answer.status_code == 200, answer.json
    data = answer.json["data"]
    assert (data["bankBalanceCents"], data["bookBalanceCents"], data["differenceCents"]) == (5_000, 5_000, 0)
    assert [(item["kind"], item["amountCents"], item["explainsDifference"]) for item in data["items"]] == [
        ("waiting_line", 5_000, False)]
    assert client.simulate_get("/api/admin/accounting/bank-reconciliation", params={"date": "x"},
                               headers=admin_headers()).status_code == 400
    assert client.simulate_get("/api/admin/accounting/bank-reconciliation", params={"date": DAY.isoformat()},
                               headers=Caller("industrial").headers).status_code == 403
    vat = client.simulate_get("/api/admin/accounting/vat", params={"month": f"{DAY:%Y-%m}"}, headers=admin_headers())
    assert vat.status_code == 200 and vat.json["data"]["dueCents"] == vat.json["data"]["collectedCents"]
    assert client.simulate_get("/api/admin/accounting/vat", params={"month": "2026-13"},
                               headers=admin_headers()).status_code == 400
    [line] = client.simulate_get("/api/admin/billing/bank/unmatched", headers=admin_headers()).json["data"]["items"]
    assert line["ageDays"] >= 0
    resolved = client.simulate_post(f"/api/admin/billing/bank/unmatched/{line['id']}/resolve", headers=admin_headers(),
                                    json={"how": "applied", "invoiceNumber": number_of(order), "note": "sans ref"})
    assert resolved.status_code == 200, resolved.json
    assert resolved.json["data"]["resolution"] == {"lineId": line["id"], "how": "applied", "otherLineId": None,
                                                   "invoiceNumber": number_of(order)}
    again = client.simulate_post(f"/api/admin/billing/bank/unmatched/{line['id']}/resolve", headers=admin_headers(),
                                 json={"how": "applied", "invoiceNumber": number_of(order), "note": "encore"})
    assert again.status_code == 409 and again.json["error"]["details"]["reason"] == "line_matched"
    # the commands print the same figures
    monkeypatch.setattr(accounting_commands, "_boot", lambda: SimpleNamespace(config=config()))
    assert accounting_commands.cmd_reconcile(SimpleNamespace(date=DAY, pdf=str(tmp_path / "rapprochement.pdf"))) == 0
    assert (tmp_path / "rapprochement.pdf").read_bytes().startswith(b"%PDF-")  # printable, the platform's renderer
    assert accounting_commands.cmd_vat(SimpleNamespace(month=f"{DAY:%Y-%m}")) == 0
    printed = capsys.readouterr().out
    assert "difference (bank - books)" in printed and "0 item(s)" in printed and "due (credit when negative)" in printed
