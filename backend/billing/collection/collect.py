"""Collection of a `principal_seller` reservation (spec C "Collection flow"), manual or automatic.

`collect` runs the spec's seven steps top-down, in one transaction opened by the
`Idempotency-Key`'s claim (one commit per collection): a known key answers what it answered the
first time, and the flow is not replayed. The financial record is opened `reservation_total_due`
first when absent (spec C: "not a formal transition"). Step 5, the financial status move "from
`reservation_total_due` only", runs before the writes of step 4: it is what refuses a reservation
that is not due, so a refused collection writes nothing; in one transaction the order of the
writes is not seen outside it. The invoice's number is allocated last but the journal and the
stored answer: its series' counter row stays locked from there to the commit, which is what every
collection of the series queues on.

A sale whose direct debit the bank returned is collected again on its invoice (`again`).
Auto-collection (`auto`) uses the key `auto-collect-<reservationId>` in the same scope, so a
manual retry with that key replays it. A collection that fails stores nothing for the key and
leaves the record opened (`reservation_total_due`): the manual collect route is the retry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from backend import clock
from backend.billing import idempotency, records, sepa_mandates
from backend.billing.accounting import ledger
from backend.billing.accounting.entries import paris_day
from backend.billing.collection import again
from backend.billing.invoicing.invoices import InvoiceDraft, Line, issue_invoice, sale_rate_bps
from backend.billing.invoicing.parties import PROFILE_COLUMNS, party_of
from backend.billing.models import (
    FinancialStatus,
    Invoice,
    InvoiceKind,
    PaymentKind,
    PaymentMethod,
    PaymentOrder,
    PaymentStatus,
)
from backend.billing.reservations import check_collectable, eligible_reservation, label_of
from backend.billing.vat import amount_incl_tax_cents
from backend.config import Config
from backend.db import database, transaction
from backend.errors import Conflict, DomainError, NotFound, ValidationError
from backend.identity import billing_identity
from backend.logs import log_event
from backend.marketplace.kyb import check_kyb_approved
from backend.marketplace.pricing import BillingModel
from backend.model import new_id

PRINCIPAL_SELLER = BillingModel.PRINCIPAL_SELLER
COLLECT_ROUTE = "billing.reservation.collect"


def collect_path(reservation_id: str) -> str:
    return f"/api/billing/reservations/{reservation_id}/collect"


AUTO_COLLECT_PREFIX = "auto-collect-"


def auto_collect_key(reservation_id: str, returned: int = 0) -> str:
    """The retry pass's key: a new one after each debit the bank returned (docs/bank.md)."""
    return f"{AUTO_COLLECT_PREFIX}{reservation_id}" + (f"-{returned}" if returned else "")


def check_client_key(key: str) -> str:
    """A client's `Idempotency-Key` of a collection: the `auto-collect-` keys are the platform's
    own (API.md), 400 for a client."""
    if key.startswith(AUTO_COLLECT_PREFIX):
        raise ValidationError(f"Idempotency-Key values starting with {AUTO_COLLECT_PREFIX!r} are reserved",
                              fields={"Idempotency-Key": ["reserved"]})
    return key


@dataclass(frozen=True)
class Collected:
    """A collection's answer (the reservation total, a legacy deposit or balance)."""

    reservation_id: str
    payment_order_id: str
    invoice_number: str
    financial_status: str
    payment_status: str
    idempotent: bool = False


def collect(*, reservation_id: str, industrial_organization_id: str, method: PaymentMethod | None, key: str,
            user_id: str | None, config: Config, auto: bool = False, scope: str | None = None,
            route: str = COLLECT_ROUTE) -> Collected:
    """Collect the reservation total once per `key` (scoped to the industrial organization, or
    `scope` and `route`: the admin route's, API.md); no `method`: the organization's default
    (`sepa_mandates.default_method`: its active mandate's direct debit, else a bank transfer)."""
    method = PaymentMethod(method) if method else sepa_mandates.default_method(industrial_organization_id)
    held = collection_key(route=route, path=collect_path(reservation_id),
                          industrial_organization_id=scope or industrial_organization_id, method=method, key=key)
    fields = {"reservationId": reservation_id, "paymentMethod": method.value, "auto": auto}
    with logged(fields), left_due_on_failure(lambda: records.open_record(
            eligible_reservation(reservation_id, industrial_organization_id, PRINCIPAL_SELLER),
            FinancialStatus.RESERVATION_TOTAL_DUE)), idempotency.claim(held) as claim:
        stored, number = claim.replay, None
        if stored is None:
            stored, number = _reservation_total(reservation_id, industrial_organization_id, method, user_id, config)
            claim.store(stored)
    return collected(stored, fields, number=number)


def _reservation_total(reservation_id: str, industrial_organization_id: str, method: PaymentMethod,
                       user_id: str | None, config: Config) -> tuple[dict, str]:
    """Spec C's seven steps, in the claim's transaction: `(answer to store, invoice number)`."""
    # The customer, shared-locked so that a KYB review cannot commit before this transaction (403
    # while its KYB is not approved), and the reservation, locked for the collection.
    customer = _customer(industrial_organization_id)
    reservation = _locked_reservation(reservation_id, industrial_organization_id)
    returned = again.returned_order(reservation_id) if reservation.has_orders else None
    if returned is not None:  # the bank returned the sale's debit: its invoice is collected again
        order, invoice = again.collect_again(reservation, returned, method=method, user_id=user_id)
        return _answer(order, invoice), invoice.number
    # 1. the reservation is approved or completed; 2. its billing model is principal_seller.
    check_collectable(reservation.status, reservation.billing_model, PRINCIPAL_SELLER)
    records.open_record(reservation, FinancialStatus.RESERVATION_TOTAL_DUE)
    billing_identity.require_complete(  # the invoice prints no placeholder
        billing_identity.identity_gaps(customer.profile, organization_legal_name=customer.legal_name))
    # 3. sepa_dd: the industrial's active SEPA mandate.
    mandate_ref = sepa_mandates.mandate_ref_for(industrial_organization_id, method)
    # 5. reservation_total_due -> reservation_total_paid, from reservation_total_due only.
    record = records.move_due(reservation_id, FinancialStatus.RESERVATION_TOTAL_DUE,
                              FinancialStatus.RESERVATION_TOTAL_PAID)
    # 4. the reservation_total payment order, of the invoice's total including VAT, `paid` at once:
    # no payment service provider is called, so its `pending` state is never seen outside. It names
    # the invoice issued next (its foreign key is checked at the commit).
    invoice_id, now = new_id(), clock.now()
    party = party_of(organization_id=industrial_organization_id, legal_name=customer.legal_name,
                     siren=customer.siren, profile=customer.profile)
    order = _created(PaymentOrder(
        reservation_id=reservation_id, invoice=invoice_id, organization_id=industrial_organization_id,
        kind=PaymentKind.RESERVATION_TOTAL, method=method, status=PaymentStatus.PAID,
        amount_cents=amount_incl_tax_cents(record.total_cents, sale_rate_bps(party, config)),
        mandate_ref=mandate_ref, created_by_user_id=user_id, created_at=now, updated_at=now, paid_at=now))
    # 6. the platform_sale invoice: the store base and the commission, excluding tax, to the industrial.
    invoice = issue_invoice(InvoiceDraft(
        kind=InvoiceKind.PLATFORM_SALE,
        lines=(Line(label_of(reservation.space_name, reservation.store_name, reservation.starts_at,
                             reservation.ends_at), record.store_base_cents),
               Line("Commission de la plateforme", record.commission_cents)),
        issuer_organization_id=None, customer_organization_id=industrial_organization_id,
        reservation_id=reservation_id, service_starts_at=reservation.starts_at,
        service_ends_at=reservation.ends_at, created_by_user_id=user_id, paid=True, invoice_id=invoice_id,
        customer=party,
    ), config=config)
    # 7. the sale's entry (411 against 706 and its VAT); its payment posts when the bank moves it.
    ledger.post_sale_issued(invoice, day=paris_day(now))
    return _answer(order, invoice), invoice.number


class Customer(NamedTuple):
    """What the collection reads of its customer's billing identity (the billing profile's
    `PROFILE_COLUMNS`, None without a profile), once its KYB is checked."""

    legal_name: str | None
    siren: str | None
    profile: dict | None


class Collectable(NamedTuple):
    """What the steps read of the reservation (a `Reservation`'s names), with the names its
    invoice line prints and whether it has any payment order (only then can the bank have
    returned one)."""

    id: str
    industrial_organization_id: str
    status: str
    billing_model: str | None
    base_amount_cents: int
    commission_amount_cents: int
    total_amount_cents: int
    commission_rate_bps: int
    starts_at: datetime
    ends_at: datetime
    space_name: str
    store_name: str
    has_orders: bool


# What the steps read, fetched once in two statements: the customer with its billing profile, the
# organization share-locked; the reservation locked, with its place.
CUSTOMER = (
    "SELECT o.kyb_status, o.legal_name, o.siren, p.organization_id IS NOT NULL, "  # noqa: S608
    + ", ".join(f"p.{column}" for column in PROFILE_COLUMNS)
    + " FROM organization o LEFT JOIN billing_profile p ON p.organization_id = o.id"
    " WHERE o.id = %s FOR SHARE OF o"
)
RESERVATION = (
    "SELECT r.id, r.industrial_organization_id, r.status, r.billing_model, r.base_amount_cents,"
    " r.commission_amount_cents, r.total_amount_cents, r.commission_rate_bps, r.starts_at, r.ends_at,"
    " a.name, s.name, EXISTS (SELECT 1 FROM billing_payment_order p WHERE p.reservation_id = r.id)"
    " FROM reservation r JOIN ad_space a ON a.id = r.ad_space_id JOIN store s ON s.id = a.store_id"
    " WHERE r.id = %s AND r.industrial_organization_id = %s FOR UPDATE OF r"
)
# Step 4's payment order, one plain statement.
_ORDER_COLUMNS = ("id", "reservation_id", "invoice_id", "organization_id", "kind", "method", "status",
                  "amount_cents", "currency", "mandate_ref", "created_by_user_id", "created_at", "updated_at",
                  "paid_at", "settlement")
ORDER = (f"INSERT INTO billing_payment_order ({', '.join(_ORDER_COLUMNS)})"  # noqa: S608 - constants
         f" VALUES ({', '.join(['%s'] * len(_ORDER_COLUMNS))})")


def _customer(organization_id: str) -> Customer:
    """The customer, share-locked: 403 unless its KYB is approved."""
    row = database.execute_sql(CUSTOMER, (organization_id,)).fetchone()
    check_kyb_approved(row[0] if row else None)
    _, legal_name, siren, has_profile, *profile = row
    return Customer(legal_name, siren,
                    dict(zip(PROFILE_COLUMNS, profile, strict=True)) if has_profile else None)


def _locked_reservation(reservation_id: str, industrial_organization_id: str) -> Collectable:
    """The customer's reservation, locked; 404 otherwise."""
    row = database.execute_sql(RESERVATION, (reservation_id, industrial_organization_id)).fetchone()
    if row is None:
        raise NotFound("reservation not found")
    return Collectable(*row)


def _created(order: PaymentOrder) -> PaymentOrder:
    """`order` inserted (its defaults filled in when it was built), and returned."""
    database.execute_sql(ORDER, tuple(getattr(order, column) for column in _ORDER_COLUMNS))
    return order


def _answer(order: PaymentOrder, invoice: Invoice) -> dict:
    """The answer stored for a collection's key: the invoice named by its id."""
    return {"reservation_id": order.reservation_id, "payment_order_id": order.id, "invoice_id": invoice.id,
            "financial_status": FinancialStatus.RESERVATION_TOTAL_PAID.value,
            "payment_status": PaymentStatus.PAID.value}


def collection_key(*, route: str, path: str, industrial_organization_id: str, method: PaymentMethod,
                   key: str) -> idempotency.Key:
    """A collection's `Idempotency-Key`: scoped to the industrial organization and the route, the
    request fingerprinted by its path and payment method."""
    return idempotency.Key(industrial_organization_id, route, key,
                           idempotency.fingerprint("POST", path, {"paymentMethod": method.value}))


@contextmanager
def logged(fields: dict) -> Iterator[None]:
    """The `billing.reservation.collect.requested` and `.failed` lines of a collection (reservation
    total, legacy deposit or balance)."""
    log_event("billing.reservation.collect.requested", "reservation collection requested", "info", **fields)
    try:
        yield
    except DomainError as exc:
        log_event("billing.reservation.collect.failed", "reservation collection failed", "warn", **fields,
                  code=exc.code, errorMessage=exc.message, reason=exc.details.get("reason"))
        raise
    except Exception as exc:
        log_event("billing.reservation.collect.failed", "reservation collection failed", "error", **fields,
                  code="INTERNAL_ERROR", errorMessage=str(exc))
        raise


@contextmanager
def left_due_on_failure(open_record: Callable[[], None]) -> Iterator[None]:
    """When the collection fails, `open_record` commits on its own: the reservation's financial
    record stays opened (due), which the failed transaction's rollback undid. Best effort: the
    collection's own error is what the caller reports, and the next attempt opens it anyway. A
    request refused because another one holds its key (`request_in_flight`) wrote nothing and
    leaves the record to that one: its own opening would race the holder's reading of it."""
    try:
        yield
    except Exception as exc:
        if isinstance(exc, Conflict) and exc.details.get("reason") == "request_in_flight":
            raise
        try:
            with transaction():
                open_record()
        except Exception:  # noqa: S110 - the collection's own error is raised below
            pass
        raise


def collected(stored: dict, fields: dict, *, number: str | None) -> Collected:
    """The answer from what is stored for the key: `number` is the invoice's, just issued (None:
    a replay, whose stored answer names the invoice by its id, or by its number when it was
    stored with it); the `paid` line of a collection just done."""
    values = dict(stored)
    invoice_id = values.pop("invoice_id", None)
    if invoice_id is not None:
        values["invoice_number"] = number or Invoice.select(Invoice.number).where(Invoice.id == invoice_id).scalar()
    answer = Collected(**values, idempotent=number is None)
    if not answer.idempotent:
        log_event("billing.reservation.collect.paid", "reservation collected", "info", **fields,
                  paymentOrderId=answer.payment_order_id, invoiceNumber=answer.invoice_number)
    return answer
