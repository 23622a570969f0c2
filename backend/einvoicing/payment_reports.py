"""Payment data out: the platform's own 212 "Encaissée" for each collected service invoice.

A 212 reports money received on an invoice that stands: none for a sale credited in full, refused
(210) or rejected (213) when its payment is settled (a rejected invoice is deemed never issued, a
refused or credited one is owed by nobody); a refund's negative 212 goes only after a positive one
(money given back that was reported as received).

VAT on services is due on payment (CGI art. 269, 2-c), so the seller reports what it received,
when its bank shows it; a sale whose seller opted to pay VAT on debits (`vatOnDebits` on the issuer
frozen on the invoice, `PLATFORM_VAT_ON_DEBITS`) owed its VAT at issue, so its payments are no
payment data and get no 212. Neither does a sale issued without VAT, reverse charged to a buyer of
another member state (VAT category AE, CGI art. 283-2): its VAT is the buyer's to pay where it is
established, none is due in France on its payment. Self-billed invoices get none from the platform
either: the encaissement is the distributor's to report, through its own platform
(docs/einvoicing.md, "Payment data of self-billed services").

For the others: for each payment order of a `platform_sale` (its collection) settled by a bank statement
(settlement `settled`, docs/bank.md), one 212 with the amount received per VAT rate, dated the
settlement's booking day; for each settled refund of that sale (its payment order names the
refund's credit note, which names the sale), a negative one; for a direct debit the bank returned
after its 212 was made (its order `failed` with settlement `returned`), a negative one dated the
return, with the key `<invoiceNumber>:212:<paymentOrderId>:returned`. Each is made once:
`einvoice_payment_report` is unique per idempotency key `<invoiceNumber>:212:<paymentOrderId>`,
and the flow's `trackingId` is that key, so a lost answer or a redelivery never reports a payment
twice at the operator either.

`sweep` (run by each polling pass) reads billing's settled payment orders (billing's tables, read
only) and records the reports not made yet; `send_due` posts the pending ones whose invoice the
operator has acknowledged (a status names an invoice the recipient holds). A collection answers
`paid` at once (spec C), but the money is the bank's to show: until a statement settles the order,
its 212 waits.

The flow (`status_flows`, shared with the statuses of self-billed invoices): `POST /flows` with
`flowInfo.flowType = CustomerInvoiceLC` (XP Z12-013's lifecycle flow type), `flowSyntax = CDAR`,
and as file the 212 as a CDAR message (`cdar`): issued by the seller (the platform) to the buyer
and the public portal, dated the day the money was received, with the amount received including
VAT per VAT rate (negative when money is given back).
"""

from __future__ import annotations

from datetime import datetime, time

from backend import clock
from backend.db import database, transaction
from backend.einvoicing import cdar, status_flows
from backend.einvoicing.models import PaymentReport, Transmission
from backend.einvoicing.operator_client import OperatorClient
from backend.einvoicing.reform_statuses import ENCAISSEE, REFUSED_OR_REJECTED
from backend.money import round_half_up_div

# Collections and refunds of platform sales settled by the bank, without a report yet (billing's tables).
_UNREPORTED = """
    SELECT sale.number, po.id, po.kind, po.amount_cents, po.settled_on, sale.vat_rate_bps
    FROM billing_payment_order po
    JOIN billing_invoice doc ON doc.id = po.invoice_id
    JOIN billing_invoice sale ON sale.id = coalesce(doc.credited_invoice_id, doc.id)
    WHERE po.status = 'paid' AND po.settlement = 'settled' AND po.settled_on IS NOT NULL AND po.amount_cents <> 0
      AND po.kind IN ('reservation_total', 'refund') AND sale.kind = 'platform_sale'
      AND NOT coalesce((sale.issuer ->> 'vatOnDebits')::boolean, false) AND sale.vat_rate_bps > 0
      AND NOT EXISTS (SELECT 1 FROM einvoice_payment_report r
                      WHERE r.idempotency_key = sale.number || ':212:' || po.id)
      AND CASE WHEN po.kind = 'refund'
               THEN EXISTS (SELECT 1 FROM einvoice_payment_report p
                            WHERE p.invoice_number = sale.number AND p.amount_cents > 0)
               ELSE sale.status <> 'credited'
                    AND NOT EXISTS (SELECT 1 FROM einvoice_transmission t
                                    WHERE t.invoice_number = sale.number AND t.document_kind = 'invoice'
                                      AND (t.status = 'rejected' OR t.lifecycle_code IN %s)) END
    ORDER BY po.settled_on, po.id
    LIMIT %s
"""


# Returned direct debits whose 212 was made, without their negative one yet (billing's tables).
_RETURNED = """
    SELECT r.invoice_number, po.id, po.amount_cents, po.returned_on, sale.vat_rate_bps
    FROM billing_payment_order po
    JOIN einvoice_payment_report r ON r.payment_order_id = po.id AND r.amount_cents > 0
    JOIN billing_invoice sale ON sale.id = po.invoice_id
    WHERE po.settlement = 'returned' AND po.returned_on IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM einvoice_payment_report n
                      WHERE n.idempotency_key = r.invoice_number || ':212:' || po.id || ':returned')
    ORDER BY po.returned_on, po.id
    LIMIT %s
"""
RETURNED_SUFFIX = ":returned"


def report_key(invoice_number: str, payment_order_id: str) -> str:
    return f"{invoice_number}:212:{payment_order_id}"


def vat_of(amount_incl_tax_cents: int, vat_rate_bps: int) -> int:
    """The VAT inside an amount including it (the excluding-tax part rounded half up)."""
    magnitude = abs(amount_incl_tax_cents)
    excl = round_half_up_div(magnitude * 10_000, 10_000 + vat_rate_bps)
    return (magnitude - excl) * (1 if amount_incl_tax_cents >= 0 else -1)


def sweep(limit: int = 500) -> int:
    """Record the 212 reports of payments not reported yet; returns how many were recorded."""
    made = 0
    rows = database.execute_sql(_UNREPORTED, (REFUSED_OR_REJECTED, limit)).fetchall()
    for number, order_id, kind, amount, settled_on, rate in rows:
        made += _record(report_key(number, order_id), number, order_id, -amount if kind == "refund" else amount,
                        rate, settled_on)
    for number, order_id, amount, returned_on, rate in database.execute_sql(_RETURNED, (limit,)).fetchall():
        made += _record(report_key(number, order_id) + RETURNED_SUFFIX, number, order_id, -amount, rate, returned_on)
    return made


def _record(key: str, number: str, order_id: str, signed: int, rate: int, day) -> int:
    """One report recorded (1), or none when its key was recorded already (0)."""
    amounts = [{"vatRateBps": rate, "amountInclTaxCents": signed, "vatCents": vat_of(signed, rate)}]
    with transaction():
        inserted = (PaymentReport.insert(
            id=PaymentReport.id.default(), idempotency_key=key, invoice_number=number, payment_order_id=order_id,
            amount_cents=signed, amounts=amounts, paid_on=day, created_at=clock.now())
            .on_conflict(conflict_target=[PaymentReport.idempotency_key], action="IGNORE").execute())
    return 1 if inserted else 0


def send_due(*, client: OperatorClient) -> dict[str, int]:
    """Post the pending reports whose invoice is acknowledged; returns `{sent, failed}`."""
    reports = status_flows.due(PaymentReport)
    rules = {t.invoice_number: t.processing_rule for t in Transmission.select(
        Transmission.invoice_number, Transmission.processing_rule)
        .where(Transmission.invoice_number.in_([r.invoice_number for r in reports]))} if reports else {}
    counts = {"sent": 0, "failed": 0}
    for report in reports:
        sent = status_flows.send(report, message_for(report), client=client, scope="einvoicing.payment_report",
                                 processing_rule=rules.get(report.invoice_number, "B2B"))
        counts["sent" if sent else "failed"] += 1
    return counts


def message_for(report: PaymentReport) -> cdar.StatusMessage | None:
    """The report's 212 as a CDAR message (None when its invoice is unknown)."""
    facts = status_flows.invoice_facts(report.invoice_number)
    if facts is None:
        return None
    return cdar.StatusMessage(
        message_id=report.idempotency_key, invoice_number=report.invoice_number, invoice_type_code=facts.type_code,
        invoice_issued_on=facts.issued_on, invoice_issuer_siren=facts.seller.siren, code=ENCAISSEE,
        at=datetime.combine(report.paid_on, time(0), tzinfo=cdar.PARIS), created_at=report.created_at,
        issuer=facts.seller, recipients=(facts.buyer, cdar.PUBLIC_PORTAL),
        received=tuple(cdar.Received(amount_cents=item["amountInclTaxCents"], vat_rate_bps=item["vatRateBps"])
                       for item in report.amounts))
