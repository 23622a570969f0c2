"""Migration 141 on a database made by the previous release (migrations up to 102): what was
issued and paid then is posted, balanced, numbered in chronological order and lettered; and
migration 150 freezes on those invoices the template and style versions current at their issue."""

from __future__ import annotations

import json
import logging
import os
import uuid
from urllib.parse import urlsplit

import pytest
from peewee import PostgresqlDatabase
from peewee_migrate import Router

from backend.embedded import drop_database, ensure_database
from backend.migrate import MIGRATIONS_DIR
from tests.conftest import _with_database

INDUSTRIAL, STORE = ("industrial:552100554", "552100554", "Client SAS"), ("distributor:385347927", "385347927",
                                                                            "Magasin SAS")


@pytest.fixture
def previous_release():
    """A database of its own migrated up to the release before the books."""
    test_url = os.environ["DATABASE_OWNER_URL"]  # the session's database, as its owner (tests/conftest.py)
    admin_url = _with_database(test_url, "postgres")
    name = f"{urlsplit(test_url).path.lstrip('/')}_carry_{uuid.uuid4().hex[:6]}"
    ensure_database(admin_url, name, recreate=True)
    parts = urlsplit(_with_database(admin_url, name))
    db = PostgresqlDatabase(name, dsn=f"{parts.scheme}://{parts.netloc}{parts.path}?{parts.query}")
    router = Router(db, migrate_dir=MIGRATIONS_DIR, logger=logging.getLogger("migrate"))
    router.run("102_billing_idempotency_hold")
    try:
        yield db, router
    finally:
        db.close()
        drop_database(admin_url, name)


def _party(org):
    return json.dumps({"organizationId": org[0], "siren": org[1], "legalName": org[2]})


def _invoice(db, number, kind, excl, at, *, issuer, customer, credited=None):
    series = number.rsplit("-", 1)[0]
    db.execute_sql("INSERT INTO billing_number_counter (series, last_value) VALUES (%s, 1)"
                   " ON CONFLICT (series) DO UPDATE SET last_value = billing_number_counter.last_value + 1", (series,))
    invoice_id = str(uuid.uuid4())
    db.execute_sql(
        "INSERT INTO billing_invoice (id, number, series, sequence, kind, issuer_organization_id,"
        " customer_organization_id, issuer, customer, amount_excl_tax_cents, vat_rate_bps, issued_at, due_at,"
        " credited_invoice_id) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, 2000, %s, %s, %s)",
        (invoice_id, number, series, int(number.rsplit("-", 1)[1]), kind, issuer and issuer[0],
         customer and customer[0], _party(issuer or ("", "", "Plateforme")), _party(customer or ("", "", "Plateforme")),
         excl, at, at, credited))
    return invoice_id


def _paid(db, invoice_id, kind, cents, at, organization):
    db.execute_sql("INSERT INTO billing_payment_order (id, invoice_id, organization_id, kind, method, status,"
                   " amount_cents, paid_at) VALUES (%s, %s, %s, %s, 'bank_transfer', 'paid', %s, %s)",
                   (str(uuid.uuid4()), invoice_id, organization[0], kind, cents, at))


def test_the_carry_over_posts_what_the_previous_release_issued_and_paid(previous_release):
    db, router = previous_release
    with db.atomic():
        for org, actor in ((INDUSTRIAL, "industrial"), (STORE, "distributor")):
            db.execute_sql("INSERT INTO organization (id, actor_type, siren, legal_name) VALUES (%s, %s, %s, %s)",
                           (org[0], actor, org[1], org[2]))
        sale = _invoice(db, "FAC-RES-2026-000001", "platform_sale", 100_000, "2026-03-02T10:00:00Z",
                        issuer=None, customer=INDUSTRIAL)
        _paid(db, sale, "reservation_total", 120_000, "2026-03-02T10:00:00Z", INDUSTRIAL)
        credit = _invoice(db, "AV-RES-2026-000001", "platform_credit_note", 25_000, "2026-04-01T10:00:00Z",
                          issuer=None, customer=INDUSTRIAL, credited=sale)
        _paid(db, credit, "refund", 30_000, "2026-04-01T10:00:00Z", INDUSTRIAL)
        bought = _invoice(db, "FAC-SUP-385347927-2026-000001", "supplier_self_billed", 60_000, "2026-04-10T10:00:00Z",
                          issuer=STORE, customer=None)
        _paid(db, bought, "supplier_payout", 72_000, "2026-04-20T10:00:00Z", STORE)
        # A sale of 3 cents credited in two notes (1 then 2 cents): VAT 0 then 1, the cumulative
        # difference, so the notes give back the sale's 1 cent of VAT (each alone would round to 0).
        small = _invoice(db, "FAC-RES-2026-000002", "platform_sale", 3, "2026-05-01T10:00:00Z",
                         issuer=None, customer=INDUSTRIAL)
        for n, cents in ((2, 1), (3, 2)):
            _invoice(db, f"AV-RES-2026-00000{n}", "platform_credit_note", cents, f"2026-05-0{n}T10:00:00Z",
                     issuer=None, customer=INDUSTRIAL, credited=small)
        db.execute_sql("INSERT INTO billing_ledger_entry (journal_id, account, direction, amount_cents, description)"
                       " VALUES ('old', 'a', 'debit', 1, 'old'), ('old', 'b', 'credit', 1, 'old')")
        for key, kind, version, published in (("invoice", "markdown", 1, "2026-03-10"),
                                              ("invoice", "markdown", 2, "2026-04-05"),
                                              ("pdf_style", "pdf_css", 1, "2026-04-15")):
            db.execute_sql("INSERT INTO document_template_version (id, template_key, kind, status, version,"
                           " content_key, content_sha256, published_at) VALUES (%s, %s, %s, 'published', %s,"
                           " 'k', repeat('0', 64), %s)", (str(uuid.uuid4()), key, kind, version, published))
    assert {"140_accounting_books", "141_accounting_carry_over", "150_invoice_document_versions"} <= set(router.run())
    # migration 150: each earlier invoice frozen on the versions current at its issue (none before the first)
    assert db.execute_sql("SELECT number, pdf_template_version, pdf_style_version FROM billing_invoice"
                          " ORDER BY issued_at").fetchall() == [
        ("FAC-RES-2026-000001", None, None), ("AV-RES-2026-000001", 1, 0),
        ("FAC-SUP-385347927-2026-000001", 2, 0), ("FAC-RES-2026-000002", 2, 1), ("AV-RES-2026-000002", 2, 1),
        ("AV-RES-2026-000003", 2, 1)]
    rows = db.execute_sql(
        "SELECT e.journal_code, e.number, e.event, e.entry_date::text, e.piece_ref, l.account, l.debit_cents,"
        " l.credit_cents, lt.code FROM accounting_entry e JOIN accounting_line l ON l.entry_id = e.id"
        " LEFT JOIN accounting_lettered_line ll ON ll.line_id = l.id"
        " LEFT JOIN accounting_lettering lt ON lt.id = ll.lettering_id ORDER BY e.validation_seq, l.line_no").fetchall()
    events = []
    for journal, number, event, day, piece, *_ in rows:
        if (journal, number, event, day, piece) not in events:
            events.append((journal, number, event, day, piece))
    assert events == [
        ("VE", 1, "sale_invoice", "2026-03-02", "FAC-RES-2026-000001"),
        ("BQ", 1, "collection", "2026-03-02", "FAC-RES-2026-000001"),
        ("VE", 2, "customer_credit_note", "2026-04-01", "AV-RES-2026-000001"),
        ("BQ", 2, "refund", "2026-04-01", "AV-RES-2026-000001"),
        ("AC", 1, "self_billed_invoice", "2026-04-10", "FAC-SUP-385347927-2026-000001"),
        ("BQ", 3, "payout", "2026-04-20", "FAC-SUP-385347927-2026-000001"),
        ("VE", 3, "sale_invoice", "2026-05-01", "FAC-RES-2026-000002"),
        ("VE", 4, "customer_credit_note", "2026-05-02", "AV-RES-2026-000002"),
        ("VE", 5, "customer_credit_note", "2026-05-03", "AV-RES-2026-000003")]
    credit_note_vat = {piece: debit for _j, _n, _e, _d, piece, account, debit, _c, _l in rows
                       if account == "44571" and piece.startswith("AV-RES-2026-00000") and piece[-1] in "23"}
    assert credit_note_vat == {"AV-RES-2026-000003": 1}  # the first note's VAT is 0: no line is written
    balances = {}
    for *_, account, debit, credit, _letter in rows:
        balances[account] = balances.get(account, 0) + debit - credit
    assert balances == {"411": 0, "706": -75_000, "44571": -15_000, "512": 120_000 - 30_000 - 72_000,
                        "604": 60_000, "44566": 12_000, "401": 0}
    assert all(letter for *_, account, _d, _c, letter in rows if account in ("411", "401"))
    assert db.execute_sql("SELECT count(*) FROM billing_ledger_entry").fetchone()[0] == 2  # still readable
