"""Issuing an invoice: the one service every kind goes through (sale, credit note, self-billed,
legacy kinds).

In the caller's transaction: the parties are snapshotted (billing profiles, platform identity),
the number is allocated from the locked counter of the kind's series (`numbering`), the VAT rate
in force (`PLATFORM_VAT_RATE_PERCENT`) is frozen on the row (none on a sale the buyer reverse
charges: `sale_rate_bps`), and the `invoice.issued` domain event
is recorded, so the post-invoice hook (PDF, e-invoicing) runs once the invoice is committed and
never for a rolled-back one. The database refuses any later change of what is written here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from peewee import fn
from psycopg2.extras import Json

from backend import events
from backend.billing.invoicing import numbering
from backend.billing.invoicing.parties import organization_party, platform_party
from backend.billing.models import CREDIT_NOTE_KIND_OF, CREDIT_NOTE_KINDS, Invoice, InvoiceKind, InvoiceStatus
from backend.billing.vat import (
    amount_incl_tax_cents,
    rate_bps_between,
    reverse_charged_invoice,
    vat_amount_cents,
    vat_rate_bps,
    vat_rate_percent,
)
from backend.config import Config
from backend.db import database, in_transaction
from backend.model import new_id


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
    # The due date's rule when it is not `due_in_days` after issue (a self-billed invoice: its
    # mandate's terms): issue time in, due time out.
    due_after: Callable[[datetime], datetime] | None = None
    credited_invoice_id: str | None = None
    # The VAT rate when it is not the one in force (`PLATFORM_VAT_RATE_PERCENT`): a credit note's
    # is its invoice's, a self-billed invoice's its sale's (the same service, API.md).
    vat_rate_bps: int | None = None
    # A credit note: what the credited invoice's earlier credit notes credit (read under its lock).
    credited_before_cents: int | None = None
    reason: str | None = None
    created_by_user_id: str | None = None
    paid: bool = False  # paid in the same transaction (collection): status `paid`, `paid_at` = issue
    # The id, chosen by the caller when other rows of its transaction name the invoice before it
    # is issued (their foreign keys are checked at commit): the number is then allocated last.
    invoice_id: str = field(default_factory=new_id)
    # The customer's party (`parties.party_of`), when the caller read its billing identity in this
    # transaction with the rest of what it checks; None: read here.
    customer: dict | None = None

    @property
    def amount_excl_tax_cents(self) -> int:
        return sum(line.total_cents for line in self.lines)


def issue_invoice(draft: InvoiceDraft, *, config: Config) -> Invoice:
    """Issue `draft` inside the caller's transaction and record `invoice.issued`. The number is
    allocated last, just before the invoice's insert: the series' counter row stays locked from
    then to the commit, which is what every issuer of the series queues on."""
    if not in_transaction():
        raise RuntimeError("issue_invoice runs inside the caller's transaction()")
    kind = InvoiceKind(draft.kind)
    if not ((kind in CREDIT_NOTE_KINDS) == (draft.credited_invoice_id is not None)
            == (draft.credited_before_cents is not None)) or (kind in CREDIT_NOTE_KINDS and draft.vat_rate_bps is None):
        raise ValueError("a credit note, and only a credit note, names the invoice it credits, its rate and what "
                         "was credited before")
    if not draft.lines or any(line.total_cents < 0 for line in draft.lines):
        raise ValueError("an invoice has at least one line and no negative amount")
    if draft.issuer_organization_id is None and draft.customer_organization_id is None:
        raise ValueError("the platform cannot invoice itself")
    issuer = _party(draft.issuer_organization_id, config)
    customer = _party(draft.customer_organization_id, config) if draft.customer is None else draft.customer
    rate_bps = vat_rate_bps(config.platform_vat_rate_percent) if draft.vat_rate_bps is None else draft.vat_rate_bps
    if kind is InvoiceKind.PLATFORM_SALE:
        rate_bps = rate_bps_between(issuer, customer, rate_bps=rate_bps)
    events.publish(events.INVOICE_ISSUED, draft.invoice_id)
    series, now = numbering.series_now(kind, issuer_siren=issuer["siren"])
    number, sequence, issued_at = numbering.allocate(series, now)
    values = {
        "id": draft.invoice_id, "number": number, "series": series, "sequence": sequence, "kind": kind.value,
        "status": (InvoiceStatus.PAID if draft.paid else InvoiceStatus.ISSUED).value,
        "reservation_id": draft.reservation_id, "issuer_organization_id": draft.issuer_organization_id,
        "customer_organization_id": draft.customer_organization_id, "issuer": issuer, "customer": customer,
        "lines": [line.as_json() for line in draft.lines], "amount_excl_tax_cents": draft.amount_excl_tax_cents,
        "tax_amount_cents": 0, "currency": "EUR",
        "vat_rate_bps": rate_bps,
        "issued_at": issued_at,
        "due_at": draft.due_after(issued_at) if draft.due_after else issued_at + timedelta(days=draft.due_in_days),
        "service_starts_at": draft.service_starts_at, "service_ends_at": draft.service_ends_at,
        "credited_invoice_id": draft.credited_invoice_id, "credited_before_cents": draft.credited_before_cents,
        "reason": draft.reason, "created_by_user_id": draft.created_by_user_id,
        "paid_at": issued_at if draft.paid else None, "created_at": issued_at, "updated_at": issued_at,
    }
    database.execute_sql(INSERT, {**values, **{name: Json(values[name]) for name in _JSON_COLUMNS}})
    values["credited_invoice"] = values.pop("credited_invoice_id")
    return Invoice(**values)


# The invoice's row, one plain statement (the columns `issue_invoice` writes; the database fills
# in the rest, e.g. the PDF template and style versions it freezes).
_COLUMNS = ("id", "number", "series", "sequence", "kind", "status", "reservation_id", "issuer_organization_id",
            "customer_organization_id", "issuer", "customer", "lines", "amount_excl_tax_cents", "tax_amount_cents",
            "currency", "vat_rate_bps", "issued_at", "due_at", "service_starts_at", "service_ends_at",
            "credited_invoice_id", "credited_before_cents", "reason", "created_by_user_id", "paid_at", "created_at",
            "updated_at")
_JSON_COLUMNS = ("issuer", "customer", "lines")
INSERT = (f"INSERT INTO billing_invoice ({', '.join(_COLUMNS)})"  # noqa: S608 - column names, constants
          f" VALUES ({', '.join(f'%({name})s' for name in _COLUMNS)})")


def _party(organization_id: str | None, config: Config) -> dict:
    return organization_party(organization_id) if organization_id else platform_party(config)


def sale_rate_bps(customer: dict, config: Config) -> int:
    """The VAT rate of a platform sale to `customer` (a party): the rate in force, none when the
    buyer reverse charges it (`backend.billing.vat.reverse_charged`). What a collection debits
    is the sale's total at this rate, the one `issue_invoice` freezes on it."""
    return rate_bps_between(platform_party(config), customer, rate_bps=vat_rate_bps(config.platform_vat_rate_percent))


def reverse_charged(invoice: Invoice) -> bool:
    """Whether the issued invoice was reverse charged (category AE: no French VAT on it)."""
    return reverse_charged_invoice(rate_bps=invoice.vat_rate_bps, seller=invoice.issuer, buyer=invoice.customer)


@dataclass(frozen=True)
class Amounts:
    amount_excl_tax_cents: int
    vat_rate_percent: float
    vat_amount_cents: int
    amount_incl_tax_cents: int


def amounts(invoice: Invoice) -> Amounts:
    """The invoice's amounts as every reader shows them (list, summary, PDF, XML, operator):
    VAT computed at read time from the frozen rate by the one VAT function."""
    return Amounts(invoice.amount_excl_tax_cents, float(vat_rate_percent(invoice.vat_rate_bps)),
                   vat_amount_cents(invoice.amount_excl_tax_cents, invoice.vat_rate_bps,
                                    credited_before_cents=invoice.credited_before_cents),
                   incl_tax_cents(invoice))


def incl_tax_cents(invoice: Invoice) -> int:
    """The invoice's amount including VAT (a credit note's: what its refund returns)."""
    return amount_incl_tax_cents(invoice.amount_excl_tax_cents, invoice.vat_rate_bps,
                                 credited_before_cents=invoice.credited_before_cents)


def credited_cents(invoice_id: str) -> int:
    """What the invoice's credit notes already credit (excluding tax)."""
    return int(Invoice.select(fn.COALESCE(fn.SUM(Invoice.amount_excl_tax_cents), 0))
               .where(Invoice.credited_invoice == invoice_id).scalar())


def issue_credit_note(invoice: Invoice, amount_cents: int, *, label: str, reason: str, user_id: str | None,
                      config: Config) -> Invoice:
    """A credit note of `amount_cents` (excluding tax) of `invoice`, locked by the caller: the
    credit-note kind of the invoice's kind, its frozen VAT rate, what its earlier credit notes
    credit (the VAT is the cumulative difference); the database refuses one that does not fit.
    The credit note of a reverse-charged invoice names the buyer as the invoice did (the VAT
    identity it was reverse charged on, so it is reverse charged too) with the account a refund
    now pays into."""
    customer = None
    if reverse_charged(invoice):
        customer = {**invoice.customer, "iban": _party(invoice.customer_organization_id, config)["iban"]}
    return issue_invoice(InvoiceDraft(
        kind=CREDIT_NOTE_KIND_OF[InvoiceKind(invoice.kind)],
        lines=(Line(f"{label} de la facture {invoice.number}", amount_cents),),
        issuer_organization_id=invoice.issuer_organization_id,
        customer_organization_id=invoice.customer_organization_id,
        reservation_id=invoice.reservation_id, service_starts_at=invoice.service_starts_at,
        service_ends_at=invoice.service_ends_at, credited_invoice_id=invoice.id,
        vat_rate_bps=invoice.vat_rate_bps, credited_before_cents=credited_cents(invoice.id), reason=reason,
        created_by_user_id=user_id, customer=customer,
    ), config=config)


def credit_notes_incl_tax_cents(invoice_id: str) -> int:
    """What the invoice's credit notes credit, including VAT."""
    return sum(incl_tax_cents(note) for note in Invoice.select().where(Invoice.credited_invoice == invoice_id))
