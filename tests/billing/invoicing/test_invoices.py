"""Invoice issuing, numbering series, and what the database refuses (immutability)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from peewee import DatabaseError

from backend import clock
from backend.billing.invoicing import numbering
from backend.billing.invoicing.invoices import Amounts, InvoiceDraft, Line, amounts, issue_invoice
from backend.billing.models import Invoice, InvoiceKind
from backend.db import database, transaction
from backend.events import INVOICE_ISSUED, SUBSCRIBERS
from backend.outbox import OutboxMessage
from tests.billing.helpers import approved_org, booted_config


def _sale(customer, **overrides) -> Invoice:
    values = {"kind": InvoiceKind.PLATFORM_SALE, "lines": (Line("Emplacement", 100_000), Line("Commission", 20_000)),
              "issuer_organization_id": None, "customer_organization_id": customer.id}
    values.update(overrides)
    return issue_invoice(InvoiceDraft(**values), config=booted_config())


def test_sale_numbers_follow_each_other_in_the_year_series_with_frozen_rate_and_parties(config):
    industrial = approved_org("industrial")
    with clock.frozen_at(datetime(2026, 11, 23, 10, tzinfo=UTC)):
        first, second = _sale(industrial), _sale(industrial)
    assert (first.series, first.sequence) == ("FAC-RES-2026", first.sequence)
    assert second.sequence == first.sequence + 1
    assert second.number == f"FAC-RES-2026-{second.sequence:06d}"
    assert first.vat_rate_bps == 2000 and first.tax_amount_cents == 0
    assert first.customer["legalName"].endswith("SAS") and first.customer["siren"] == industrial.siren
    assert first.issuer["organizationId"] is None and first.issuer["legalName"]
    assert amounts(first) == Amounts(amount_excl_tax_cents=120_000, vat_rate_percent=20.0, vat_amount_cents=24_000,
                                     amount_incl_tax_cents=144_000)


def test_issue_times_never_go_back_along_the_numbers_even_when_the_clock_does():
    industrial = approved_org("industrial")
    later, earlier = datetime(2026, 11, 23, 10, tzinfo=UTC), datetime(2026, 11, 23, 9, 59, tzinfo=UTC)
    with clock.frozen_at(later):
        first = _sale(industrial)
    with clock.frozen_at(earlier):  # a clock read before the lock, by a request that got it second
        second = _sale(industrial)
    assert second.sequence == first.sequence + 1
    assert first.issued_at == later and second.issued_at == later and second.due_at == later
    assert Invoice.get_by_id(second.id).issued_at == later


def test_numbers_past_six_digits_keep_every_digit():
    industrial = approved_org("industrial")
    with clock.frozen_at(datetime(2026, 11, 23, 10, tzinfo=UTC)):
        _sale(industrial)
        database.execute_sql("UPDATE billing_number_counter SET last_value = 999999 WHERE series = 'FAC-RES-2026'")
        invoice = _sale(industrial)
    assert invoice.number == "FAC-RES-2026-1000000"
    assert Invoice.get_by_id(invoice.id).number == invoice.number


def test_the_year_is_the_paris_year_of_the_issue_date():
    industrial = approved_org("industrial")
    with clock.frozen_at(datetime(2026, 12, 31, 23, 30, tzinfo=UTC)):  # 00:30 on 1 January in Paris
        invoice = _sale(industrial)
    assert invoice.series == "FAC-RES-2027"


def test_series_names_of_every_kind():
    assert numbering.series_name(InvoiceKind.PLATFORM_CREDIT_NOTE, year=2026) == "AV-RES-2026"
    assert numbering.series_name(InvoiceKind.SUPPLIER_SELF_BILLED, year=2026, issuer_siren="552100554") == \
        "FAC-SUP-552100554-2026"
    assert numbering.series_name(InvoiceKind.SUPPLIER_CREDIT_NOTE, year=2026, issuer_siren="552100554") == \
        "AV-SUP-552100554-2026"
    assert numbering.series_name(InvoiceKind.STORE_DEPOSIT, year=2026, issuer_siren="1") == "FAC-DEP-1-2026"
    assert numbering.series_name(InvoiceKind.STORE_BALANCE, year=2026, issuer_siren="1") == "FAC-BAL-1-2026"
    assert numbering.series_name(InvoiceKind.PLATFORM_COMMISSION, year=2026) == "FAC-COM-2026"
    with pytest.raises(ValueError):
        numbering.series_name(InvoiceKind.SUPPLIER_SELF_BILLED, year=2026)


def test_self_billed_invoices_use_the_distributors_own_series():
    distributor = approved_org("distributor")
    invoice = issue_invoice(InvoiceDraft(kind=InvoiceKind.SUPPLIER_SELF_BILLED, lines=(Line("Loyer", 100_000),),
                                         issuer_organization_id=distributor.id, customer_organization_id=None),
                           config=booted_config())
    assert invoice.number.startswith(f"FAC-SUP-{distributor.siren}-")
    assert invoice.customer["organizationId"] is None


def test_issuing_records_the_invoice_issued_event_for_each_subscriber(monkeypatch):
    monkeypatch.setitem(SUBSCRIBERS, INVOICE_ISSUED, ("announce_reservation_approved",))
    invoice = _sale(approved_org("industrial"))
    rows = OutboxMessage.select().where(OutboxMessage.actor_name == "announce_reservation_approved")
    assert [row.args for row in rows] == [[invoice.id]]


def test_a_credit_note_must_name_its_invoice_and_only_a_credit_note_may():
    industrial = approved_org("industrial")
    with pytest.raises(ValueError):
        _sale(industrial, kind=InvoiceKind.PLATFORM_CREDIT_NOTE)
    sale = _sale(industrial)
    with pytest.raises(ValueError):
        _sale(industrial, credited_invoice_id=sale.id)


def test_a_rolled_back_issue_gives_its_number_back():
    industrial = approved_org("industrial")
    first = _sale(industrial)
    with pytest.raises(RuntimeError), transaction():
        _sale(industrial)
        raise RuntimeError("the collection failed after issuing")
    assert _sale(industrial).sequence == first.sequence + 1


@pytest.mark.parametrize("assignment", [
    "number = 'FAC-RES-2026-999999'", "amount_excl_tax_cents = 1", "vat_rate_bps = 550",
    "issued_at = now() - interval '1 day'", "due_at = now() + interval '1 year'",
    "customer = '{}'::jsonb", "customer_organization_id = NULL", "kind = 'platform_commission'",
])
def test_the_database_refuses_to_change_an_issued_invoice(assignment):
    invoice = _sale(approved_org("industrial"))
    with pytest.raises(DatabaseError, match=r"never changes|permission denied"), transaction():
        database.execute_sql(f"UPDATE billing_invoice SET {assignment} WHERE id = %s", (invoice.id,))  # noqa: S608


def test_status_pdf_and_payment_fields_may_move_but_no_invoice_is_deleted():
    invoice = _sale(approved_org("industrial"))
    database.execute_sql("UPDATE billing_invoice SET status = 'paid', paid_at = now(),"
                         " pdf_storage_key = 'billing/invoices/' || number || '.pdf', updated_at = now() WHERE id = %s",
                         (invoice.id,))
    assert Invoice.get_by_id(invoice.id).has_pdf
    with pytest.raises(DatabaseError, match=r"never deleted|permission denied"), transaction():
        database.execute_sql("DELETE FROM billing_invoice WHERE id = %s", (invoice.id,))
