"""Self-billing (article 289 of the French tax code; spec C): the platform issues the
`supplier_self_billed` invoice in the distributor's name, in the distributor's own series
(`FAC-SUP-<siren>-<year>-NNNNNN`), once the reservation's service has ended and its incident window
has closed, provided the distributor signed a self-billing mandate and no incident is open.

One reservation is one unit, in one transaction: its financial record is locked `FOR UPDATE`
(racing passes and catch-ups of one reservation queue on it) and read again under the lock; an
existing self-billed invoice is answered as it is (the partial unique index
`billing_invoice_one_self_billed` refuses a second one whatever happens). Issuing moves the
financial status `reservation_total_paid` -> `supplier_settlement_pending`, issues the invoice
and books it (AC: 604 and its VAT against the distributor's 401, `accounting.ledger`). `issue_invoice`
records `invoice.issued`, so the post-invoice hook (Factur-X PDF, transmission draft) runs through
the outbox once the unit is committed.

The scheduler (`scheduler.py`) calls `self_bill_if_due`; the manual catch-up route calls
`catch_up` (gates as errors, `force` bypasses them with warnings and an audit entry).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from backend import clock
from backend.billing import records, store_share
from backend.billing.accounting import ledger
from backend.billing.errors import BillingMandateMissing
from backend.billing.invoicing.invoices import InvoiceDraft, Line, credited_cents, issue_invoice, reverse_charged
from backend.billing.invoicing.post_invoice_hook import signed_self_billing_mandate
from backend.billing.models import AuditEntry, FinancialStatus, Invoice, InvoiceKind
from backend.billing.queries import InvoiceItem, invoice_item
from backend.billing.reservations import service_label
from backend.billing.self_billing.acceptance import open_acceptance
from backend.billing.self_billing.business_days import self_billing_due
from backend.billing.self_billing.incidents import open_incident
from backend.billing.self_billing.mandate_document import self_billed_due_at
from backend.config import Config
from backend.context import current_request_id
from backend.db import transaction
from backend.errors import Conflict, NotFound, ValidationError
from backend.logs import log_event
from backend.marketplace.models import Reservation
from backend.marketplace.pricing import BillingModel

SCOPE = "billing.supplier.self_billing"
# Settlement follows the sale (API.md): a collected sale, whole or partly refunded.
SETTLEABLE = frozenset({FinancialStatus.RESERVATION_TOTAL_PAID, FinancialStatus.PARTIALLY_REFUNDED})


class Outcome(StrEnum):
    ISSUED = "issued"
    ALREADY = "already_self_billed"  # issued before (another pass, a catch-up)
    NOT_DUE = "not_due"
    OPEN_INCIDENT = "open_incident"
    NO_MANDATE = "no_mandate"
    NOTHING_TO_SETTLE = "nothing_to_settle"  # refunds left no store share (an extreme commission)


class NothingToSettle(Conflict):
    """A settleable sale whose refunds left nothing of the store share: the catch-up's 409
    `not_settleable`, a skip for the scheduler (never a failure at every pass)."""


@dataclass(frozen=True)
class Result:
    outcome: Outcome
    invoice: Invoice | None = None
    warnings: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class CatchUp:
    """What the manual catch-up answers: the reservation's self-billed invoice, issued now or
    before (`idempotent`), and the financial status it left."""

    reservation_id: str
    invoice: InvoiceItem
    financial_status: str
    warnings: tuple[str, ...]
    idempotent: bool


def blockers(reservation: Reservation) -> tuple[str, ...]:
    """What stops self-billing the reservation, in spec C's order: `open_incident`, `no_mandate`."""
    found = []
    if open_incident(reservation.id) is not None:
        found.append(Outcome.OPEN_INCIDENT.value)
    if not signed_self_billing_mandate(reservation.distributor_organization_id):
        found.append(Outcome.NO_MANDATE.value)
    return tuple(found)


def _locked_settleable(reservation_id: str):
    """The reservation, its locked financial record and the store share to bill, or the live
    self-billed invoice already issued. Settlement follows the sale: a collected sale, whole or
    partly refunded, with something left of its store share (else 409 `not_settleable`)."""
    record = records.locked_record(reservation_id)
    existing = store_share.live_self_billed(reservation_id)
    if existing is not None:
        return None, None, existing, None
    sale = store_share.sale_of(reservation_id)
    share = store_share.store_share_left(record, credited_cents(sale.id)) if record and sale else 0
    if (record is None or record.billing_model != BillingModel.PRINCIPAL_SELLER.value
            or record.financial_status not in SETTLEABLE or share <= 0):
        status = record.financial_status if record else FinancialStatus.DRAFT.value
        refused = NothingToSettle if record is not None and record.financial_status in SETTLEABLE else Conflict
        raise refused(f"only a collected principal_seller reservation with something left of its sale is "
                      f"self-billed (financial status {status})", reason="not_settleable", financialStatus=status)
    # The reservation row locked as an incident declaration locks it: a declaration racing this
    # unit waits for it (or this unit for the declaration) and the gates read under the lock hold.
    reservation = Reservation.select().where(Reservation.id == reservation_id).for_update().get()
    return reservation, record, None, Settling(sale, share)


@dataclass(frozen=True)
class Settling:
    """What a self-billed invoice bills: the store share left of the sale, at the sale's frozen VAT
    rate (the same service: the distributor never receives more VAT than the customer paid); of a
    reverse-charged sale, at the rate in force (the distributor's service to the platform is taxed
    in France whoever bought the ad space)."""

    sale: Invoice
    share: int


def _issue(reservation: Reservation, record, settling: Settling, *, config: Config, user_id: str | None) -> Invoice:
    draft = InvoiceDraft(
        kind=InvoiceKind.SUPPLIER_SELF_BILLED, lines=(Line(service_label(reservation), settling.share),),
        vat_rate_bps=None if reverse_charged(settling.sale) else settling.sale.vat_rate_bps,
        issuer_organization_id=reservation.distributor_organization_id, customer_organization_id=None,
        reservation_id=reservation.id,
        service_starts_at=reservation.starts_at, service_ends_at=reservation.ends_at, created_by_user_id=user_id,
        due_after=self_billed_due_at,
    )
    records.move(record, FinancialStatus.SUPPLIER_SETTLEMENT_PENDING)
    invoice = issue_invoice(draft, config=config)
    ledger.post_invoice(invoice)  # AC: the purchase of the store's share
    open_acceptance(invoice)  # the distributor's 30 days start once it is e-mailed
    return invoice


def issue_corrected(reservation_id: str, amount_cents: int, *, config: Config, user_id: str | None) -> Invoice:
    """The corrected self-billed invoice after a contest (`resolution.py`, in its transaction, the
    contested one credited in full): `amount_cents` excluding tax, never above the store share left
    of the sale (409 `amount_above_store_share` with `maximumCents`)."""
    reservation, record, existing, settling = _locked_settleable(reservation_id)
    if existing is not None:
        raise Conflict("the reservation still has a live self-billed invoice", reason="self_billed_live",
                       invoiceNumber=existing.number)
    if amount_cents > settling.share:
        raise Conflict(f"a self-billed invoice of this reservation is at most {settling.share} cents excluding tax "
                       "(the store share of what the customer paid)", reason="amount_above_store_share",
                       maximumCents=settling.share, amountCents=amount_cents)
    return _issue(reservation, record, Settling(settling.sale, amount_cents), config=config, user_id=user_id)


def _issued(invoice: Invoice, **fields: object) -> None:
    log_event(f"{SCOPE}.issued", "self-billed invoice issued", "info", reservationId=invoice.reservation_id,
              invoiceNumber=invoice.number, organizationId=invoice.issuer_organization_id,
              amountExclTaxCents=invoice.amount_excl_tax_cents, **fields)


def self_bill_if_due(reservation_id: str, *, config: Config) -> Result:
    """The scheduler's unit: skip (`not_due`, `open_incident`, `no_mandate`) or issue, in one
    transaction. A sale refunded so that nothing is left of its store share is skipped
    (`nothing_to_settle`); a reservation no longer settleable under the lock (refunded in full
    meanwhile) is 409."""
    with transaction():
        try:
            reservation, record, existing, settling = _locked_settleable(reservation_id)
        except NothingToSettle:
            return Result(Outcome.NOTHING_TO_SETTLE)
        if existing is not None:
            return Result(Outcome.ALREADY, existing)
        if not self_billing_due(reservation.ends_at, clock.now()):
            return Result(Outcome.NOT_DUE)
        blocked = blockers(reservation)
        if blocked:
            outcome = Outcome(blocked[0])
            log_event(f"{SCOPE}.skipped_{outcome.value}", "self-billing skipped", "info", reservationId=reservation_id,
                      organizationId=reservation.distributor_organization_id)
            return Result(outcome)
        invoice = _issue(reservation, record, settling, config=config, user_id=None)
    _issued(invoice, trigger="scheduler")
    return Result(Outcome.ISSUED, invoice)


def catch_up(*, reservation_id: str, user_id: str | None, force: bool = False, reason: str | None = None,
             config: Config) -> CatchUp:
    """Manual self-billing: 409 `BILLING_MANDATE_MISSING` without a signed mandate, 409 `CONFLICT`
    (`incident_open`) with an open incident; `force` bypasses both, answering the `forced_*`
    warnings, logging them and auditing the issue. An already self-billed reservation answers its
    invoice (`ALREADY`). The window is not a gate here: the admin decides. `force` needs a `reason`
    (400 without, API.md), written to the audit entry and the warnings."""
    reason = (reason or "").strip()
    if force and not reason:
        raise ValidationError("forcing self-billing needs a reason", fields={"reason": ["required with force=true"]})
    with transaction():
        reservation = Reservation.get_or_none(Reservation.id == reservation_id)
        if reservation is None:
            raise NotFound("reservation not found")
        reservation, record, existing, settling = _locked_settleable(reservation_id)
        if existing is not None:
            return CatchUp(reservation_id, invoice_item(existing), records.status_of(reservation_id), (), True)
        blocked = blockers(reservation)
        if not force and Outcome.NO_MANDATE in blocked:
            raise BillingMandateMissing("the distributor has no signed self-billing mandate", reason="no_mandate")
        if not force and Outcome.OPEN_INCIDENT in blocked:
            raise Conflict("an incident is open on this reservation", reason="incident_open")
        warnings = tuple(f"forced_{'with_open_incident' if b == Outcome.OPEN_INCIDENT else 'without_mandate'}"
                         for b in blocked)
        invoice = _issue(reservation, record, settling, config=config, user_id=user_id)
        AuditEntry.create(action=f"{SCOPE}.manual", actor_user_id=user_id,
                          reason=reason or "manual self-billing",
                          reservation_id=reservation_id, invoice_id=invoice.id,
                          details={"forced": list(warnings), "force": force, "invoiceNumber": invoice.number},
                          request_id=current_request_id())
    for warning in warnings:
        log_event(f"{SCOPE}.{warning}", "self-billing forced past a gate", "warn", reservationId=reservation_id,
                  invoiceNumber=invoice.number, userId=user_id, reason=reason)
    _issued(invoice, trigger="manual")
    return CatchUp(reservation_id, invoice_item(invoice), record.financial_status, warnings, False)
