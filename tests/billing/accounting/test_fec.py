"""The FEC parsed back, each rule of docs/accounting.md "The FEC" checked; the trial balance and
ledger routes and command; lettering as the file shows it."""

from __future__ import annotations

import io
import re
from collections import defaultdict
from datetime import date

import falcon.testing
import pytest

from backend.billing import corrections
from backend.billing.accounting import entries, fec, reports
from backend.billing.accounting.chart import Account, Journal
from backend.billing.accounting.entries import Entry, Line, Party
from backend.billing.models import Invoice, PaymentMethod, PaymentOrder
from backend.db import database
from ops.accounting_commands import format_trial_balance
from tests.billing.accounting.books import validate_now
from tests.billing.bank.statements_data import booked
from tests.billing.helpers import Market, approved_org, booted_config
from tests.billing.self_billing.data import Party as Caller
from tests.billing.self_billing.data import admin_headers, collected

DAY = re.compile(r"^\d{4}(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])$")
AMOUNT = re.compile(r"^\d+,\d{2}$")
PREVIOUS_YEAR = Party("552100554", "Clïent d'hier & Cie €")


def _books_over_two_years() -> Invoice:
    """A sale of 2025 left unpaid (carried over), then a 2026 collection refunded in part."""
    entries.post(Entry(journal=Journal.SALES, event="test", day=date(2025, 6, 2),
                       label="Vente\tancienne\r\nC:\\dossier",
                       piece_ref="OLD-1", piece_date=date(2025, 6, 2), lines=(
                           Line(Account.CUSTOMERS, debit_cents=1_200, party=PREVIOUS_YEAR, letter_group="old"),
                           Line(Account.SERVICES_SOLD, credit_cents=1_000),
                           Line(Account.VAT_COLLECTED, credit_cents=200))))
    industrial, distributor = approved_org("industrial"), approved_org("distributor")
    reservation = collected(Market(), industrial, distributor)
    invoice = Invoice.get(Invoice.reservation_id == reservation.id)
    corrections.refund(invoice_number=invoice.number, amount_cents=10_001, reason="geste", user_id=None,
                       method=PaymentMethod.BANK_TRANSFER, config=booted_config())
    booked(*PaymentOrder.select().where(PaymentOrder.reservation_id == reservation.id))  # the bank moved both
    validate_now()
    return invoice


def _parse(year: int) -> tuple[bytes, list[dict]]:
    out = io.BytesIO()
    fec.write_fec(year, out)
    raw = out.getvalue()
    text = raw.decode("iso8859_15")  # rule: ISO 8859-15
    records = text.split("\n")
    assert records[-1] == "" and "\r" not in text  # rule: records end with LF
    rows = [record.split("\t") for record in records[:-1]]
    assert rows[0] == list(fec.FIELDS)  # rule: the 18 field names in their legal order
    assert all(len(row) == 18 for row in rows)  # rule: one separator, never inside a value
    return raw, [dict(zip(fec.FIELDS, row, strict=True)) for row in rows[1:]]


def test_the_fec_follows_every_rule_of_article_a47_a_1():
    invoice = _books_over_two_years()
    raw, lines = _parse(2026)
    assert fec.file_name("552100554", 2026) == "552100554FEC20261231.txt"
    # rule: the opening balances first, from the second fiscal year on: 411 of the unpaid 2025 sale,
    # the 2025 result on 120, balanced
    opening = [line for line in lines if line["JournalCode"] == "AN"]
    assert lines[:len(opening)] == opening and {line["EcritureDate"] for line in opening} == {"20260101"}
    assert {(line["CompteNum"], line["CompAuxNum"], line["Debit"], line["Credit"]) for line in opening} >= {
        ("411", "552100554", "12,00", "0,00"), ("120", "", "0,00", "10,00")}
    assert "Clïent d'hier & Cie €".encode("iso8859_15") in raw  # accents and the euro sign in ISO 8859-15
    for line in lines:
        for field in ("EcritureDate", "PieceDate", "ValidDate"):
            assert DAY.match(line[field]), (field, line)  # rule: dates YYYYMMDD
        assert not line["DateLet"] or DAY.match(line["DateLet"])
        assert AMOUNT.match(line["Debit"]) and AMOUNT.match(line["Credit"])  # rule: comma, 2 decimals, no 1 000
        assert (line["Debit"] == "0,00") != (line["Credit"] == "0,00")
        assert line["CompteNum"][:3].isdigit() and line["CompteLib"] and line["EcritureLib"] and line["PieceRef"]
        assert line["Montantdevise"] == line["Idevise"] == ""
        assert bool(line["EcritureLet"]) == bool(line["DateLet"])
    # rule: every EcritureNum balanced; numbers gapless per journal; validation order
    totals, numbers = defaultdict(int), defaultdict(list)
    for line in lines:
        totals[line["EcritureNum"]] += _cents(line["Debit"]) - _cents(line["Credit"])
        journal, number = line["EcritureNum"].split("-")
        if not numbers[journal] or numbers[journal][-1] != int(number):
            numbers[journal].append(int(number))
    assert set(totals.values()) == {0}
    for journal, seen in numbers.items():
        if journal != "AN":
            assert seen == list(range(seen[0], seen[0] + len(seen))), journal
    validated = [line["ValidDate"] for line in lines[len(opening):]]
    assert validated == sorted(validated)
    # the 2026 sale and its collection are lettered together; the partial refund's pair too
    receivable = [line for line in lines if line["CompteNum"] == "411" and line["PieceRef"] == invoice.number]
    assert receivable and all(line["EcritureLet"] for line in receivable)
    # a tab, CR, LF or backslash in a label became a space
    assert _parse(2025)[1][0]["EcritureLib"].startswith("Vente ancienne  C: dossier")
    assert not [line for line in _parse(2025)[1] if line["JournalCode"] == "AN"]  # the first year has none


def _cents(amount: str) -> int:
    euros, cents = amount.split(",")
    return int(euros) * 100 + int(cents)


def test_the_trial_balance_totals_are_equal_and_the_ledger_lists_an_account():
    invoice = _books_over_two_years()
    balance = reports.trial_balance(start=date(2026, 1, 1), end=date(2026, 12, 31))
    assert balance.totals.debit_cents == balance.totals.credit_cents and balance.totals.balance_cents == 0
    by_account = {line.account: line for line in balance.accounts}
    assert by_account["706"].credit_cents - by_account["706"].debit_cents == 120_000 - 10_001
    assert by_account["512"].balance_cents == 144_000 - by_account["512"].credit_cents
    printed = format_trial_balance(balance)
    assert printed[-1].split()[0] == "Total" and len(printed) == len(balance.accounts) + 2
    lines = reports.account_ledger("411", start=date(2026, 1, 1))
    assert {line.piece_ref for line in lines} >= {invoice.number} and all(line.aux_account for line in lines)


def test_the_routes_are_for_billing_admins_and_stream_the_fec(make_app):
    client = falcon.testing.TestClient(make_app(platform_legal_siret="73282932000074"))
    assert client.simulate_get("/api/admin/accounting/fec", params={"fiscalYear": "2026"},
                               headers=Caller("industrial").headers).status_code == 403
    admin = admin_headers()
    answer = client.simulate_get("/api/admin/accounting/fec", params={"fiscalYear": "2026"}, headers=admin)
    assert answer.status_code == 200 and answer.headers["content-type"] == fec.CONTENT_TYPE
    assert answer.headers["cache-control"] == "private, no-store"  # the books: no cache keeps them
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert 'filename="732829320FEC20261231.txt"' in answer.headers["content-disposition"]
    assert answer.content.split(b"\n")[0].decode().split("\t") == list(fec.FIELDS)
    assert client.simulate_get("/api/admin/accounting/fec", headers=admin).status_code == 400
    balance = client.simulate_get("/api/admin/accounting/trial-balance", params={"from": "2026-01-01"}, headers=admin)
    assert balance.status_code == 200 and set(balance.json["data"]) == {"accounts", "totals"}
    ledger = client.simulate_get("/api/admin/accounting/ledger", params={"account": "411"}, headers=admin)
    assert ledger.status_code == 200 and ledger.json["data"]["label"] == "Clients"
    assert client.simulate_get("/api/admin/accounting/ledger", params={"account": "999"},
                               headers=admin).status_code == 400


def test_without_the_platform_siret_there_is_no_fec_to_name(make_app, config, monkeypatch, capsys):
    """The administration reads the SIREN from the file's name: no placeholder SIREN, a clear refusal."""
    client = falcon.testing.TestClient(make_app(platform_legal_siret=None))
    answer = client.simulate_get("/api/admin/accounting/fec", params={"fiscalYear": "2026"}, headers=admin_headers())
    assert answer.status_code == 409 and answer.json["error"]["code"] == "CONFLICT"
    assert answer.json["error"]["details"]["reason"] == "platform_siren_missing"
    assert "PLATFORM_LEGAL_SIRET" in answer.json["error"]["message"]
    # the command too, unless -o names the file (the records hold no SIREN)
    from dataclasses import replace
    from types import SimpleNamespace

    from ops import accounting_commands

    unnamed = SimpleNamespace(config=replace(config, platform_legal_siret=None))
    monkeypatch.setattr(accounting_commands, "_boot", lambda: unnamed)
    assert accounting_commands.cmd_fec(SimpleNamespace(year=2026, output=None)) == 1
    assert re.search(r"set PLATFORM_LEGAL_SIRET .*, or name the file with -o", capsys.readouterr().err)


@pytest.mark.parametrize("stored, written", [
    ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"),
    ("+33 1", "'+33 1"), ("-1", "'-1"), ("@SUM(A1)", "'@SUM(A1)"),
    ("\t=1", " =1"), ("Acme\r\nBcc: x", "Acme  Bcc: x"), ("Café du Port", "Café du Port"),
])
def test_a_label_that_would_run_in_a_spreadsheet_is_neutralised(stored, written):
    """A name stored before the validators (or by hand) still never starts a formula in the FEC."""
    assert database.execute_sql(f"SELECT {fec.neutralised('%s::text')}", (stored,)).fetchone() == (written,)
