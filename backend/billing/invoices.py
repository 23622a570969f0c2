"""Issuing an invoice: the one service every kind goes through (sale, credit note, self-billed,
legacy kinds).

In the caller's transaction: the parties are snapshotted (billing profiles, platform identity),
the number is allocated from the locked counter of the kind's series (`numbering`), the VAT rate
in force (`PLATFORM_VAT_RATE_PERCENT`) is frozen on the row, and the `invoice.issued` domain event
is recorded, so the post-invoice hook (PDF, e-invoicing) runs once the invoice is committed and
never for a rolled-back one. The database refuses any later change of what is written here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from backend import events
from backend.billing import numbering
from backend.billing.models import CREDIT_NOTE_KINDS, Invoice, InvoiceKind, InvoiceStatus
from backend.billing.parties import organization_party, platform_party
from backend.billing.vat import amount_incl_tax_cents, vat_amount_cents, vat_rate_bps, vat_rate_percent
from backend.config import Config
from backend.db import in_transaction
from backend.model import new_id

DOCUMENT_KIND = {  # spec C post-invoice hook, step 2
    InvoiceKind.PLATFORM_SALE: "invoice",
    InvoiceKind.SUPPLIER_SELF_BILLED: "invoice",
    InvoiceKind.PLATFORM_CREDIT_NOTE: "credit_note",
    InvoiceKind.SUPPLIER_CREDIT_NOTE: "credit_note",
    InvoiceKind.STORE_DEPOSIT: "invoice",
    InvoiceKind.STORE_BALANCE: "invoice",
    InvoiceKind.PLATFORM_COMMISSION: "invoice",
}


@dataclass(frozen=True)
class Line:
    label: str
    total_cents: int
    quantity: int = 1

    def as_json(self) -> dict:
        return {"label": self.label, "quantity": self.quantity,
                "unitPriceCents": self.total_cents // self.quantity if self.quantity else 0,
                "totalCents": self.total_cents}


@dataclass(frozen=True)
class InvoiceDraft:
    """What an issuer knows; `issue_invoice` adds the number, dates, parties and VAT rate.
    An organization id of None is the platform (issuer of sales, customer of self-billed ones)."""

    kind: InvoiceKind
    lines: tuple[Line, ...]
    issuer_organization_id: str | None
    customer_organization_id: str | None
    reservation_id: str | None = None
    service_starts_at: datetime | None = None
    service_ends_at: datetime | None = None
    due_in_days: int = 0
    credited_invoice_id: str | None = None
    reason: str | None = None
    created_by_user_id: str | None = None
    paid: bool = False  # paid in the same transaction (collection): status `paid`, `paid_at` = issue
    # The id, chosen by the caller when other rows of its transaction name the invoice before it
    # is issued (their foreign keys are checked at commit): the number is then allocated last.
    invoice_id: str = field(default_factory=new_id)

    @property
    def amount_excl_tax_cents(self) -> int:
        return sum(line.total_cents for line in self.lines)


def issue_invoice(draft: InvoiceDraft, *, config: Config) -> Invoice:
    """Issue `draft` inside the caller's transaction and record `invoice.issued`."""
    if not in_transaction():
        raise RuntimeError("issue_invoice runs inside the caller's transaction()")
    kind = InvoiceKind(draft.kind)
    if (kind in CREDIT_NOTE_KINDS) != (draft.credited_invoice_id is not None):
        raise ValueError("a credit note, and only a credit note, names the invoice it credits")
    if not draft.lines or any(line.total_cents < 0 for line in draft.lines):
        raise ValueError("an invoice has at least one line and no negative amount")
    if draft.issuer_organization_id is None and draft.customer_organization_id is None:
        raise ValueError("the platform cannot invoice itself")
    issuer = (organization_party(draft.issuer_organization_id) if draft.issuer_organization_id
              else platform_party(config))
    customer = (organization_party(draft.customer_organization_id) if draft.customer_organization_id
                else platform_party(config))
    rate_bps = vat_rate_bps(config.platform_vat_rate_percent)
    events.publish(events.INVOICE_ISSUED, draft.invoice_id)
    # Everything else first: the counter row stays locked from the allocation to the commit.
    series, sequence, issued_at = numbering.allocate(kind, issuer_siren=issuer["siren"])
    invoice = Invoice.create(
        id=draft.invoice_id,
        number=numbering.format_number(series, sequence),
        series=series,
        sequence=sequence,
        kind=kind,
        status=InvoiceStatus.PAID if draft.paid else InvoiceStatus.ISSUED,
        reservation_id=draft.reservation_id,
        issuer_organization_id=draft.issuer_organization_id,
        customer_organization_id=draft.customer_organization_id,
        issuer=issuer,
        customer=customer,
        lines=[line.as_json() for line in draft.lines],
        amount_excl_tax_cents=draft.amount_excl_tax_cents,
        tax_amount_cents=0,
        vat_rate_bps=rate_bps,
        issued_at=issued_at,
        due_at=issued_at + timedelta(days=draft.due_in_days),
        service_starts_at=draft.service_starts_at,
        service_ends_at=draft.service_ends_at,
        credited_invoice=draft.credited_invoice_id,
        reason=draft.reason,
        created_by_user_id=draft.created_by_user_id,
        paid_at=issued_at if draft.paid else None,
        created_at=issued_at,
        updated_at=issued_at,
    )
    return invoice


def amounts(invoice: Invoice) -> dict:
    """The invoice's amounts as every reader shows them (list, summary, PDF, XML, operator):
    VAT computed at read time from the frozen rate by the one VAT function."""
    return {
        "amountExclTaxCents": invoice.amount_excl_tax_cents,
        "vatRatePercent": float(vat_rate_percent(invoice.vat_rate_bps)),
        "vatAmountCents": vat_amount_cents(invoice.amount_excl_tax_cents, invoice.vat_rate_bps),
        "amountInclTaxCents": amount_incl_tax_cents(invoice.amount_excl_tax_cents, invoice.vat_rate_bps),
    }
