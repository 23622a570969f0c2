"""`vitrine bench bank`: a 10,000-line camt.053 imported with its matching, against parsing it alone.

Vitrine: `backend.billing.bank.statements.import_statement` on a camt.053 of 10,000 credits, each
naming by its end-to-end id one of 10,000 bank-transfer collections waiting for the bank (each with
its sale invoice, which the posting of the money booked reads): the document parsed
(lxml, defensively), the statement and its lines stored, the payment orders found (by id, in
chunks) and settled (one UPDATE per chunk), in one transaction. Reference: `camt.parse` of the
same document alone, no database. Each run gets orders of its own (inserted beforehand, not
timed) and a statement opening on the balance the last one imported closed on; parse and import
alternate, `RUNS` of each, the median reported. Goal: at most 3x.
"""

from __future__ import annotations

import dataclasses
import statistics
import time
import uuid
from datetime import date

from ops.bench.report import SHARED_CORES_NOTE, Figure, Result

NAME = "bank"
DESCRIPTION = "a 10,000-line camt.053 imported and matched; reference: the same document parsed alone"
IBAN = "FR7630006000011234567890189"
RUNS = 3
AMOUNT_EXCL_TAX_CENTS, VAT_RATE_BPS = 10_000, 2000
AMOUNT_CENTS = 12_000  # the invoice's total, VAT included
INDUSTRIAL = "industrial:552100554"


def _orders(count: int) -> list[str]:
    """`count` bank-transfer collections waiting for the bank, each with its sale invoice (a series
    of this run's own), as a collection leaves them."""
    from backend import clock
    from backend.billing.models import Invoice, InvoiceKind, NumberCounter, PaymentOrder
    from backend.db import transaction
    from backend.identity.models import Organization

    now = clock.now()
    ids = [str(uuid.uuid4()) for _ in range(count)]
    invoice_ids = [str(uuid.uuid4()) for _ in range(count)]
    series = f"BENCH-{uuid.uuid4().hex[:8]}"
    customer = {"organizationId": INDUSTRIAL, "legalName": "Bench industrial", "siren": "552100554", "country": "FR"}
    with transaction():
        Organization.insert(id=INDUSTRIAL, actor_type="industrial", siren="552100554",
                            legal_name="Bench industrial").on_conflict_ignore().execute()
        NumberCounter.insert(series=series, last_value=count, updated_at=now).execute()
        for start in range(0, count, 2000):
            Invoice.insert_many([
                {"id": invoice_ids[n], "number": f"{series}-{n + 1:06d}", "series": series, "sequence": n + 1,
                 "kind": InvoiceKind.PLATFORM_SALE, "customer_organization_id": INDUSTRIAL, "issuer": {},
                 "customer": customer, "amount_excl_tax_cents": AMOUNT_EXCL_TAX_CENTS, "vat_rate_bps": VAT_RATE_BPS,
                 "issued_at": now, "due_at": now, "created_at": now, "updated_at": now}
                for n in range(start, min(start + 2000, count))]).execute()
            PaymentOrder.insert_many([
                {"id": ids[n], "invoice_id": invoice_ids[n], "organization_id": INDUSTRIAL, "kind": "reservation_total",
                 "method": "bank_transfer", "status": "paid", "amount_cents": AMOUNT_CENTS, "paid_at": now,
                 "created_at": now, "updated_at": now} for n in range(start, min(start + 2000, count))]).execute()
    return ids


def _last_closing_cents() -> int:
    """The balance the last statement imported on the bench's account closed on (0 before any)."""
    from backend.billing.bank.statements import last_closing

    last = last_closing(IBAN)
    return last.closing_balance_cents if last else 0


def _document(ids: list[str], day: date) -> bytes:
    from backend.billing.bank.end_to_end import end_to_end_id
    from ops.simulators.bank_store import camt053, entry_xml

    entries = [entry_xml(f"B{uuid.uuid4().hex[:20]}", True, AMOUNT_CENTS, day, end_to_end_id=end_to_end_id(order_id),
                         name="Client") for order_id in ids]
    return camt053(IBAN, f"BENCH-{uuid.uuid4().hex[:20]}", f"M-{uuid.uuid4().hex[:20]}", _last_closing_cents(),
                   entries, day)


def run(stack, quick: bool) -> Result:
    from backend.billing.bank import camt, statements
    from backend.db import database
    from backend.runtime import current_runtime

    count = 2_000 if quick else 10_000
    config = dataclasses.replace(current_runtime().config, platform_legal_iban=IBAN)
    parse_ms, import_ms, checks, ok = [], [], [], True
    with database.connection_context():
        for _ in range(RUNS):
            document = _document(_orders(count), date.today())
            began = time.perf_counter()
            camt.parse(document)
            parse_ms.append((time.perf_counter() - began) * 1000)
            began = time.perf_counter()
            imported = statements.import_statement(document, config=config, user_id=None)
            import_ms.append((time.perf_counter() - began) * 1000)
            if (imported.lines, imported.matched, imported.unmatched) != (count, count, 0):
                ok = False
            checks.append(f"lines {imported.lines}, matched {imported.matched}, unmatched {imported.unmatched} "
                          f"(expected {count}, {count}, 0)")
    size = len(document)
    return Result(
        title=f"camt.053 of {count:,} credits ({size / 1e6:.1f} MB) imported: parsed, stored, matched, settled",
        reference=f"camt.parse of the same document alone (lxml, no database), median of {RUNS}",
        settings=["one transaction per import; orders found by end-to-end id in chunks of 5,000, settled by one "
                  "UPDATE per 2,000", f"median of {RUNS} runs each, parse and import alternating"],
        figures=[Figure(f"import of {count:,} lines (ms)", statistics.median(import_ms), statistics.median(parse_ms))],
        checks=checks, notes=[SHARED_CORES_NOTE], ok=ok)
