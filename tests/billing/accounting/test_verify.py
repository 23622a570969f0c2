"""`vitrine accounting verify` on clean books, then on a copy corrupted in each way the database
owner could, bypassing the application (triggers disabled): each breach is named."""

from __future__ import annotations

import pytest

from backend.billing import corrections
from backend.billing.accounting.verify import verify
from backend.billing.models import Invoice, PaymentMethod, PaymentOrder
from backend.db import database, transaction
from tests.billing.accounting.books import validate_now
from tests.billing.bank.statements_data import booked
from tests.billing.helpers import Market, approved_org, booted_config
from tests.billing.self_billing.data import collected


class _Undo(Exception):
    pass


@pytest.fixture
def books():
    industrial, distributor = approved_org("industrial"), approved_org("distributor")
    invoice = Invoice.get(Invoice.reservation_id == collected(Market(), industrial, distributor).id)
    corrections.refund(invoice_number=invoice.number, amount_cents=20_000, reason="geste", user_id=None,
                       method=PaymentMethod.BANK_TRANSFER, config=booted_config())
    booked(*PaymentOrder.select().where(PaymentOrder.reservation_id == invoice.reservation_id))
    validate_now()
    database.execute_sql("SET CONSTRAINTS ALL IMMEDIATE")  # nothing pending: the owner may alter the tables
    return invoice


def _deleted(where: str) -> list[str]:
    """The statements deleting the entries matching `where`, with their lines and lettering."""
    lines = f"SELECT l.id FROM accounting_line l JOIN accounting_entry e ON e.id = l.entry_id WHERE e.{where}"  # noqa: S608
    return ["ALTER TABLE accounting_lettered_line DISABLE TRIGGER USER",
            "ALTER TABLE accounting_line DISABLE TRIGGER USER", "ALTER TABLE accounting_entry DISABLE TRIGGER USER",
            f"DELETE FROM accounting_lettered_line WHERE line_id IN ({lines})",  # noqa: S608
            f"DELETE FROM accounting_line WHERE id IN ({lines})",  # noqa: S608
            f"DELETE FROM accounting_entry WHERE {where}"]  # noqa: S608


CORRUPTIONS = {
    "unbalanced entry": ["ALTER TABLE accounting_line DISABLE TRIGGER USER",
                         "UPDATE accounting_line SET debit_cents = debit_cents + 1 WHERE id = (SELECT min(l.id)"
                         " FROM accounting_line l JOIN accounting_entry e ON e.id = l.entry_id"
                         " WHERE e.invoice_id = %(invoice)s AND l.debit_cents > 0)"],
    "journal gap": _deleted("invoice_id = %(invoice)s AND event = 'sale_invoice'"),
    "invoice not posted once": _deleted("invoice_id = %(invoice)s AND event = 'sale_invoice'"),
    "payment not posted once": _deleted("payment_order_id = %(order)s"),
    "invoice series gap": ["ALTER TABLE billing_invoice DISABLE TRIGGER USER",
                           "UPDATE billing_invoice SET sequence = sequence + 5 WHERE id = %(invoice)s"],
    "ledger differs from invoice": ["ALTER TABLE billing_invoice DISABLE TRIGGER USER",
                                    "UPDATE billing_invoice SET amount_excl_tax_cents = amount_excl_tax_cents - 100"
                                    " WHERE id = %(invoice)s"],
    "ledger differs from payment": ["UPDATE billing_payment_order SET amount_cents = amount_cents + 1"
                                    " WHERE id = %(order)s"],
    "entry not validated": ["ALTER TABLE accounting_entry DISABLE TRIGGER accounting_entry_validate",
                            "INSERT INTO accounting_entry (id, journal_code, fiscal_year, entry_date, label, event)"
                            " VALUES ('forged', 'OD', 2026, '2026-12-01', 'forged', 'forged')",
                            "INSERT INTO accounting_line (entry_id, line_no, account, label, debit_cents, credit_cents)"
                            " VALUES ('forged', 1, '512', 'x', 5, 0), ('forged', 2, '706', 'x', 0, 5)"],
}


def _found_after(statements: list[str], params: dict, **options) -> list[str]:
    """What `verify(**options)` finds once `statements` ran, in a transaction then rolled back."""
    try:
        with transaction():
            for statement in statements:
                database.execute_sql(statement, params)
            found = verify(**options)
            raise _Undo
    except _Undo:
        return found


def test_clean_books_have_no_breach(books):
    assert verify() == []


@pytest.mark.owner  # the corruptions are the owner's, past the app (the runtime role may not make them)
@pytest.mark.parametrize("breach", sorted(CORRUPTIONS))
def test_each_corruption_is_named(books, breach):
    order = PaymentOrder.get(PaymentOrder.invoice == books.id, PaymentOrder.kind == "reservation_total")
    found = _found_after(CORRUPTIONS[breach], {"invoice": books.id, "order": order.id})
    assert any(line.startswith(f"{breach}: ") for line in found), found


def test_a_stored_pdf_changed_since_it_was_recorded_is_named(books, config):
    from backend.billing.documents.stored_pdf import STORAGE_CONTEXT, ensure_invoice_pdf, storage_key
    from backend.documents.seeding import seed_default_versions
    from storage import build_storage

    storage = build_storage(config)
    seed_default_versions(storage)
    ensure_invoice_pdf(books, storage=storage, config=config)
    assert verify(storage=storage) == []
    pdf = storage.read_bytes(STORAGE_CONTEXT, storage_key(books.number))
    storage.put_bytes(STORAGE_CONTEXT, storage_key(books.number), pdf + b"\n%tampered", "application/pdf")
    (breach,) = verify(storage=storage)
    assert breach.startswith(f"stored PDF changed: {books.number}: sha256 ")


@pytest.mark.owner  # the sha256 recorded again past the trigger, as only the owner could
def test_an_embedded_xml_at_other_totals_is_named(books, config):
    import hashlib
    import io

    import pikepdf

    from backend.billing.accounting.verify import embedded_totals
    from backend.billing.documents.stored_pdf import STORAGE_CONTEXT, ensure_invoice_pdf, storage_key
    from backend.billing.vat import vat_amount_cents
    from storage import build_storage

    storage = build_storage(config)
    ensure_invoice_pdf(books, storage=storage, config=config)
    pdf = storage.read_bytes(STORAGE_CONTEXT, storage_key(books.number))
    vat = vat_amount_cents(books.amount_excl_tax_cents, books.vat_rate_bps)
    assert embedded_totals(pdf) == (books.amount_excl_tax_cents, vat, books.amount_excl_tax_cents + vat)
    assert verify(storage=storage) == []
    with pikepdf.open(io.BytesIO(pdf)) as document:  # BT-109 one euro less in the XML, the PDF otherwise alike
        stream = document.attachments["factur-x.xml"].obj.EF.F
        xml = stream.read_bytes()
        shown = f"<ram:TaxBasisTotalAmount>{books.amount_excl_tax_cents // 100}.00<".encode()
        assert shown in xml
        stream.write(xml.replace(shown, f"<ram:TaxBasisTotalAmount>{books.amount_excl_tax_cents // 100 - 1}.00<"
                                 .encode()))
        out = io.BytesIO()
        document.save(out)
    forged = out.getvalue()
    storage.put_bytes(STORAGE_CONTEXT, storage_key(books.number), forged, "application/pdf")
    (breach,) = _found_after(["ALTER TABLE billing_invoice DISABLE TRIGGER USER",
                              "UPDATE billing_invoice SET pdf_sha256 = %(sha)s WHERE id = %(invoice)s"],
                             {"sha": hashlib.sha256(forged).hexdigest(), "invoice": books.id}, storage=storage)
    assert breach.startswith(f"embedded XML differs: {books.number}: XML {books.amount_excl_tax_cents - 100}/"), breach


@pytest.mark.owner  # the transmission deleted past the application, as only the owner could
def test_an_invoice_in_scope_without_its_transmission_is_named(books, config):
    from datetime import timedelta

    from backend import clock
    from backend.einvoicing import reconciliation
    from backend.einvoicing.drafts import create_transmission_draft
    from backend.einvoicing.flow_types import document_kind_for

    in_scope = list(Invoice.select().where(Invoice.kind.in_(reconciliation.kinds_in_scope(config))))
    assert {str(i.kind) for i in in_scope} == {"platform_sale", "platform_credit_note"}
    with transaction():
        for invoice in in_scope:
            create_transmission_draft(invoice_number=invoice.number, document_kind=document_kind_for(invoice.kind),
                                      flow_type="fr_domestic_b2b", document_pdf_key=None,
                                      amount_incl_tax_cents=invoice.amount_excl_tax_cents, invoice_kind=invoice.kind)

    def missing():
        return reconciliation.missing_transmissions(config)

    with clock.frozen_at(clock.now() + reconciliation.MISSING_AFTER + timedelta(seconds=1)):
        assert verify(missing_transmissions=missing) == []
        (breach,) = _found_after(["ALTER TABLE einvoice_transmission DISABLE TRIGGER USER",
                                  "DELETE FROM einvoice_transmission WHERE invoice_number = %(number)s"],
                                 {"number": books.number}, missing_transmissions=missing)
    assert breach.startswith(f"no transmission: {books.number} (platform_sale, issued "), breach
