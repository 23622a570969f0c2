"""`vitrine accounting verify`: reads a whole database and names every breach of its books and
invoice series, one line each (docs/accounting.md, "Verifying").

Each check is one query returning the breaches it finds, as `<check>: <what>` lines. The checks
assume nothing the application guarantees: they are meant to find what someone bypassing it
(the database owner, a restore gone wrong) did.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal

import pikepdf
from lxml import etree

from backend.db import database, transaction
from storage import Storage

PDF_CONTEXT = "billing-invoice-pdf"  # `documents.stored_pdf.STORAGE_CONTEXT` (accounting never imports documents)


def _vat_of(cents: str) -> str:
    """`backend.money.apply_bps` (half up) in SQL, of the invoice's frozen rate."""
    return f"((2 * ({cents})::bigint * i.vat_rate_bps + 10000) / 20000)"


# The VAT the invoice shows (`backend.billing.vat.vat_amount_cents`): a credit note's is the
# cumulative difference over what its invoice's earlier credit notes credited.
_VAT = (f"(CASE WHEN i.credited_before_cents IS NULL THEN {_vat_of('i.amount_excl_tax_cents')}"
        f" ELSE {_vat_of('i.credited_before_cents + i.amount_excl_tax_cents')}"
        f" - {_vat_of('i.credited_before_cents')} END)")
# The entry each kind of invoice posts, and the account of its amount excluding tax (or a
# sub-account of it: a reverse-charged sale books on 7062).
_INVOICE_EVENTS = ("('platform_sale', 'sale_invoice', '706'), ('platform_credit_note', 'customer_credit_note', '706'),"
                   " ('supplier_self_billed', 'self_billed_invoice', '604'),"
                   " ('supplier_credit_note', 'supplier_credit_note', '604'),"
                   " ('platform_commission', 'commission_invoice', '706')")
# A refund order is posted as a refund, or as the repayment of a customer credit (the credited
# sale moved no money when its credit note was issued).
_PAYMENT_EVENTS = ("('reservation_total', 'collection', NULL), ('refund', 'refund', 'credit_repayment'),"
                   " ('supplier_payout', 'payout', NULL),"
                   " ('deposit', 'legacy_collection', NULL), ('balance', 'legacy_collection', NULL)")


# The VAT accounts an invoice's entry posts its VAT to: due at issue, or pending until paid.
_VAT_ACCOUNTS = "('44571', '44566', '44574', '44564')"


@dataclass(frozen=True)
class Check:
    name: str
    sql: str  # rows of one text column: what is wrong


CHECKS = (
    Check("unbalanced entry", """
        SELECT e.journal_code || '-' || coalesce(e.number::text, '?') || ' (' || e.id || '): debits - credits = '
               || sum(l.debit_cents - l.credit_cents) || ', ' || count(l.id) || ' lines'
          FROM accounting_entry e LEFT JOIN accounting_line l ON l.entry_id = e.id
         GROUP BY e.id HAVING coalesce(sum(l.debit_cents - l.credit_cents), 0) <> 0 OR count(l.id) < 2
         ORDER BY e.id"""),
    Check("entry not validated", """
        SELECT e.id || ' (' || e.event || ', ' || e.entry_date || ') has no number'
          FROM accounting_entry e WHERE e.number IS NULL ORDER BY e.id"""),
    Check("journal gap", """
        SELECT journal_code || ' ' || fiscal_year || ': ' || coalesce(previous, 0) || ' then ' || number
          FROM (SELECT journal_code, fiscal_year, number,
                       lag(number) OVER (PARTITION BY journal_code, fiscal_year ORDER BY number) AS previous
                  FROM accounting_entry WHERE number IS NOT NULL) AS n
         WHERE number <> coalesce(previous, 0) + 1 ORDER BY journal_code, fiscal_year, number"""),
    Check("invoice series gap", """
        SELECT series || ': ' || coalesce(previous, 0) || ' then ' || sequence
          FROM (SELECT series, sequence, lag(sequence) OVER (PARTITION BY series ORDER BY sequence) AS previous
                  FROM billing_invoice) AS n
         WHERE sequence <> coalesce(previous, 0) + 1 ORDER BY series, sequence"""),
    Check("invoice not posted once", f"""
        SELECT i.number || ' (' || i.kind || '): ' || count(e.id) || ' ' || k.event || ' entries'
          FROM billing_invoice i JOIN (VALUES {_INVOICE_EVENTS}) AS k (kind, event, account) ON k.kind = i.kind
          LEFT JOIN accounting_entry e ON e.invoice_id = i.id AND e.event = k.event
         GROUP BY i.id, i.number, i.kind, k.event HAVING count(e.id) <> 1 ORDER BY i.number"""),  # noqa: S608 (constants only)
    Check("payment not posted once", f"""
        SELECT p.id || ' (' || p.kind || '): ' || count(e.id) || ' ' || k.event || ' entries'
          FROM billing_payment_order p
          JOIN (VALUES {_PAYMENT_EVENTS}) AS k (kind, event, other_event) ON k.kind = p.kind
          LEFT JOIN accounting_entry e ON e.payment_order_id = p.id AND e.event IN (k.event, k.other_event)
         WHERE p.settlement = 'settled' OR (p.settlement = 'returned' AND p.settled_on IS NOT NULL)
         GROUP BY p.id, p.kind, k.event HAVING count(e.id) <> 1 ORDER BY p.id"""),  # noqa: S608 (constants only)
    Check("ledger differs from invoice", f"""
        SELECT i.number || ': booked '
               || sum(l.debit_cents + l.credit_cents) FILTER (WHERE starts_with(l.account, k.account))
               || ' excl. and ' || coalesce(sum(l.debit_cents + l.credit_cents)
                                            FILTER (WHERE l.account IN {_VAT_ACCOUNTS}), 0)
               || ' VAT, invoiced ' || i.amount_excl_tax_cents || ' and ' || {_VAT}
          FROM billing_invoice i JOIN (VALUES {_INVOICE_EVENTS}) AS k (kind, event, account) ON k.kind = i.kind
          JOIN accounting_entry e ON e.invoice_id = i.id AND e.event = k.event
          JOIN accounting_line l ON l.entry_id = e.id
         GROUP BY i.id, i.number, i.amount_excl_tax_cents, i.vat_rate_bps, i.credited_before_cents
        HAVING coalesce(sum(l.debit_cents + l.credit_cents) FILTER (WHERE starts_with(l.account, k.account)), 0)
                   <> i.amount_excl_tax_cents
            OR coalesce(sum(l.debit_cents + l.credit_cents) FILTER (WHERE l.account IN {_VAT_ACCOUNTS}), 0)
                   <> {_VAT}
         ORDER BY i.number"""),  # noqa: S608 (constants only)
    Check("ledger differs from payment", f"""
        SELECT p.id || ' (' || p.kind || '): booked ' || sum(l.debit_cents + l.credit_cents) || ', paid '
               || p.amount_cents
          FROM billing_payment_order p
          JOIN (VALUES {_PAYMENT_EVENTS}) AS k (kind, event, other_event) ON k.kind = p.kind
          JOIN accounting_entry e ON e.payment_order_id = p.id AND e.event IN (k.event, k.other_event)
          JOIN accounting_line l ON l.entry_id = e.id AND l.account IN ('512', '471')
         GROUP BY p.id, p.kind, p.amount_cents HAVING sum(l.debit_cents + l.credit_cents) <> p.amount_cents
         ORDER BY p.id"""),  # noqa: S608 (constants only)
    # VAT on services waits in 44574 / 44564 until the money is paid (`vat_due`): an invoice with
    # nothing left to pay (its third-party and in-transit lines at zero) has none left there.
    Check("VAT pending on a paid invoice", """
        SELECT i.number || ': ' || abs(p.pending) || ' cents of VAT still pending, nothing left to pay'
          FROM (SELECT letter_group,
                       coalesce(sum(debit_cents - credit_cents) FILTER (WHERE account IN ('44574', '44564')), 0)
                           AS pending,
                       coalesce(sum(debit_cents - credit_cents)
                                FILTER (WHERE account IN ('411', '401', '511', '473')), 0) AS owed
                  FROM accounting_line WHERE letter_group IS NOT NULL GROUP BY letter_group) AS p
          JOIN billing_invoice i ON i.id = p.letter_group
         WHERE p.pending <> 0 AND p.owed = 0 ORDER BY i.number"""),
    # 512 moves with the statements' lines only, from the first statement imported on (a database
    # whose history was posted at the requests, before the books followed the bank, keeps it): an
    # entry on 512 books one line; walking the statements in import order, what the bank moved and
    # what 512 moved stay equal.
    Check("bank differs from books", """
        SELECT e.journal_code || '-' || coalesce(e.number::text, '?') || ' (' || e.event || ', ' || e.entry_date
               || ') moves 512 by ' || sum(l.debit_cents - l.credit_cents) || ' cents with no statement line'
          FROM accounting_entry e JOIN accounting_line l ON l.entry_id = e.id AND l.account = '512'
         WHERE e.bank_line_id IS NULL AND e.entry_date >= (
               SELECT min((created_at AT TIME ZONE 'Europe/Paris')::date) FROM billing_bank_statement)
         GROUP BY e.id ORDER BY e.entry_date, e.id"""),
    Check("bank differs from books", """
        WITH moved AS (
            SELECT s.id, s.statement_id, s.kind, s.created_at, s.import_seq,
                   (SELECT coalesce(sum(CASE WHEN b.direction = 'credit' THEN b.amount_cents
                                             ELSE -b.amount_cents END), 0)
                      FROM billing_bank_line b WHERE b.statement_id = s.id) AS bank,
                   (SELECT coalesce(sum(l.debit_cents - l.credit_cents), 0)
                      FROM billing_bank_line b JOIN accounting_entry e ON e.bank_line_id = b.id
                      JOIN accounting_line l ON l.entry_id = e.id AND l.account = '512'
                     WHERE b.statement_id = s.id) AS books
              FROM billing_bank_statement s
        ), running AS (
            SELECT *, sum(bank) OVER w AS bank_total, sum(books) OVER w AS books_total FROM moved
            WINDOW w AS (ORDER BY import_seq ROWS UNBOUNDED PRECEDING)
        )
        SELECT 'statement ' || statement_id || ' (' || kind || ', imported ' || to_char(created_at, 'YYYY-MM-DD')
               || '): the statements moved the account by ' || bank_total || ' cents up to it, 512 by '
               || books_total
          FROM running WHERE bank_total <> books_total ORDER BY import_seq LIMIT 1"""),
)


def verify(*, storage: Storage | None = None, missing_transmissions: Callable[[], Iterable[str]] | None = None,
           ) -> list[str]:
    """Every breach found, one line each (`<check>: <what>`); empty when the books are clean.
    With `storage`, each stored invoice PDF is also read back (its sha256, its embedded XML's
    totals); `missing_transmissions` lists the invoices in e-invoicing scope without a
    transmission (`einvoicing.reconciliation.missing_transmissions`: accounting does not decide
    the scope)."""
    breaches = []
    for check in CHECKS:
        breaches += [f"{check.name}: {row[0]}" for row in database.execute_sql(check.sql).fetchall()]
    if storage is not None:
        breaches += stored_document_breaches(storage)
    if missing_transmissions is not None:
        breaches += [f"no transmission: {what}" for what in missing_transmissions()]
    return breaches


# Each invoice with a stored PDF, its totals and the totals its entry booked (NULL when none).
_DOCUMENTS = f"""
SELECT i.number, i.pdf_storage_key, i.pdf_sha256, i.amount_excl_tax_cents, {_VAT},
       booked.excl_cents, booked.vat_cents
  FROM billing_invoice i
  LEFT JOIN (VALUES {_INVOICE_EVENTS}) AS k (kind, event, account) ON k.kind = i.kind
  LEFT JOIN LATERAL (
      SELECT sum(l.debit_cents + l.credit_cents) FILTER (WHERE starts_with(l.account, k.account)) AS excl_cents,
             coalesce(sum(l.debit_cents + l.credit_cents) FILTER (WHERE l.account IN {_VAT_ACCOUNTS}), 0)
                 AS vat_cents
        FROM accounting_entry e JOIN accounting_line l ON l.entry_id = e.id
       WHERE e.invoice_id = i.id AND e.event = k.event
      HAVING count(*) > 0) AS booked ON true
 WHERE i.pdf_storage_key IS NOT NULL OR i.pdf_sha256 IS NOT NULL
 ORDER BY i.number
"""  # noqa: S608 (constants only)


def stored_document_breaches(storage: Storage) -> list[str]:
    """Each stored invoice PDF read back, one at a time (the rows come through a server-side
    cursor: memory stays bounded whatever the number of invoices):

    - `stored PDF changed`: missing, or its sha256 is not the one recorded when it was first
      stored (migration 142);
    - `embedded XML differs`: its `factur-x.xml` is missing, or its totals (BT-109 excluding tax,
      BT-110 VAT, BT-112 including tax) differ from the invoice's, or from what its entry booked.
    """
    found = []
    # WITH HOLD: the connection runs in autocommit mode (`backend.db`), its BEGIN sent lazily; the
    # rows come `itersize` (2,000) at a time: small rows, the PDFs read one by one
    with transaction(), database.connection().cursor(name="verify_documents", withhold=True) as rows:
        rows.execute(_DOCUMENTS)
        for number, key, recorded, excl, vat, booked_excl, booked_vat in rows:
            if not key or not storage.exists(PDF_CONTEXT, key):
                found.append(f"stored PDF changed: {number}: no PDF at {key}")
                continue
            pdf = storage.read_bytes(PDF_CONTEXT, key)
            actual = hashlib.sha256(pdf).hexdigest()
            if recorded is not None and actual != recorded:
                found.append(f"stored PDF changed: {number}: sha256 {actual}, recorded {recorded}")
            if problem := _xml_problem(pdf, (excl, vat, excl + vat), booked_excl, booked_vat):
                found.append(f"embedded XML differs: {number}: {problem}")
    return found


def _xml_problem(pdf: bytes, invoiced: tuple[int, int, int], booked_excl: int | None,
                 booked_vat: int | None) -> str | None:
    """What is wrong with the PDF's embedded XML totals, or None."""
    try:
        totals = embedded_totals(pdf)
    except (pikepdf.PdfError, KeyError, ValueError, ArithmeticError, etree.XMLSyntaxError) as exc:
        return f"no readable factur-x.xml ({type(exc).__name__}: {exc})"
    booked = (booked_excl, booked_vat, None if booked_excl is None else booked_excl + booked_vat)
    if totals == invoiced and (booked_excl is None or totals == booked):  # not booked: `invoice not posted once`
        return None
    return f"XML {_cents(totals)}, invoiced {_cents(invoiced)}, booked {_cents(booked)} (excl./VAT/incl. cents)"


def _cents(values: tuple[int | None, ...]) -> str:
    return "/".join("none" if value is None else str(value) for value in values)


_RAM = "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100"
_TOTALS = ("TaxBasisTotalAmount", "TaxTotalAmount", "GrandTotalAmount")  # BT-109, BT-110, BT-112
# No DTD, no entity, no network: the XML comes from a stored file anyone with storage access could change.
_PARSER = etree.XMLParser(resolve_entities=False, load_dtd=False, no_network=True, huge_tree=False)


def embedded_totals(pdf: bytes) -> tuple[int, int, int]:
    """(excl. tax, VAT, incl. tax) in cents of the PDF's `factur-x.xml` (its header summation)."""
    with pikepdf.open(io.BytesIO(pdf)) as document:
        xml = document.attachments["factur-x.xml"].get_file().read_bytes()
    summation = etree.fromstring(xml, _PARSER).find(f".//{{{_RAM}}}SpecifiedTradeSettlementHeaderMonetarySummation")
    if summation is None:
        raise ValueError("no header monetary summation")
    amounts = []
    for name in _TOTALS:
        element = summation.find(f"{{{_RAM}}}{name}")
        if element is None or element.text is None:
            raise ValueError(f"no {name}")
        cents = Decimal(element.text.strip()) * 100
        if cents != cents.to_integral_value():
            raise ValueError(f"{name} {element.text} is not in cents")
        amounts.append(int(cents))
    return amounts[0], amounts[1], amounts[2]
