"""The historical collection mandate (`legacy_mandate`, spec C): deposit, then balance.

Kept for reservations created before the principal-seller model (API.md "Legacy routes"): the
store is the official seller, so the store invoices the industrial (`store_deposit`, then
`store_balance`, numbered in the store's own `FAC-DEP-<siren>` / `FAC-BAL-<siren>` series) and
the platform invoices the store its commission at the balance (`platform_commission`,
`FAC-COM-<year>`); the industrial never receives a platform invoice. The deposit is
`LEGACY_DEPOSIT_RATE_BPS` (default 3000) of the store base, the balance the rest. The commission
is the reservation's frozen rate applied to the store base (legacy reservations froze a zero
commission amount, not a zero rate); a zero commission issues no commission invoice.

Financial statuses follow the spec C tree: `draft` -> `deposit_due` -> `deposit_paid` ->
`balance_due` -> `balance_paid`. Books (`accounting.ledger`): the store's invoices are the
store's sales, not the platform's, so only the money the platform receives and holds for the
store is booked (512 against 467), then its commission invoice (VE) and the commission taken out
of the store's funds (OD).
"""

from __future__ import annotations

from backend import clock
from backend.billing import idempotency, records
from backend.billing.accounting import ledger
from backend.billing.collection.collect import Collected, collected, collection_key, left_due_on_failure, logged
from backend.billing.invoicing.invoices import InvoiceDraft, Line, issue_invoice
from backend.billing.models import FinancialStatus, InvoiceKind, PaymentKind, PaymentMethod, PaymentOrder, PaymentStatus
from backend.billing.reservations import eligible_reservation, service_label
from backend.billing.sepa_mandates import mandate_ref_for
from backend.billing.vat import amount_incl_tax_cents, vat_rate_bps
from backend.config import Config
from backend.errors import Conflict
from backend.identity import billing_identity
from backend.marketplace.kyb import require_kyb_approved
from backend.marketplace.pricing import BillingModel, commission_cents
from backend.money import apply_bps

DEPOSIT, BALANCE = "deposit", "balance"
_DUE = {DEPOSIT: FinancialStatus.DEPOSIT_DUE, BALANCE: FinancialStatus.DEPOSIT_PAID}


def collect_step(step: str, *, reservation_id: str, industrial_organization_id: str, method: PaymentMethod,
                 key: str, user_id: str | None, config: Config) -> Collected:
    """Collect the deposit or the balance of a legacy reservation once per key."""
    method = PaymentMethod(method)
    held = collection_key(route=f"billing.reservation.{step}.collect",
                          path=f"/api/billing/reservations/{reservation_id}/{step}/collect",
                          industrial_organization_id=industrial_organization_id, method=method, key=key)
    fields = {"reservationId": reservation_id, "paymentMethod": method.value, "step": step,
              "billingModel": BillingModel.LEGACY_MANDATE.value}

    def open_record() -> None:  # the reservation's record, opened `deposit_due` when absent
        reservation = eligible_reservation(reservation_id, industrial_organization_id, BillingModel.LEGACY_MANDATE)
        records.open_record(reservation, FinancialStatus.DEPOSIT_DUE)

    with logged(fields), left_due_on_failure(open_record), idempotency.claim(held) as claim:
        stored, number = claim.replay, None
        if stored is None:
            open_record()
            stored = _collect(step, reservation_id, industrial_organization_id, method, user_id, config)
            number = stored["invoice_number"]
            claim.store(stored)
    return collected(stored, fields, number=number)


def _collect(step: str, reservation_id: str, industrial_organization_id: str, method: PaymentMethod,
             user_id: str | None, config: Config) -> dict:
    require_kyb_approved(industrial_organization_id)
    billing_identity.require_complete(billing_identity.organization_identity_gaps(industrial_organization_id))
    reservation = eligible_reservation(reservation_id, industrial_organization_id, BillingModel.LEGACY_MANDATE,
                                       lock=True)
    mandate_ref = mandate_ref_for(industrial_organization_id, method)
    record = records.locked_record(reservation.id)
    if record is None or record.financial_status != _DUE[step]:
        status = record.financial_status if record else FinancialStatus.DRAFT.value
        raise Conflict(f"the {step} is not due (financial status {status})", reason="not_due", financialStatus=status)
    base = record.store_base_cents
    deposit = apply_bps(base, config.legacy_deposit_rate_bps)
    amount = deposit if step == DEPOSIT else base - deposit
    distributor = reservation.distributor_organization_id
    label = service_label(reservation)
    if step == BALANCE:
        records.move(record, FinancialStatus.BALANCE_DUE)
    order = PaymentOrder.create(
        reservation_id=reservation.id, organization_id=industrial_organization_id,
        kind=PaymentKind.DEPOSIT if step == DEPOSIT else PaymentKind.BALANCE, method=method,
        status=PaymentStatus.PENDING, mandate_ref=mandate_ref, created_by_user_id=user_id,
        amount_cents=amount_incl_tax_cents(amount, vat_rate_bps(config.platform_vat_rate_percent)),
    )
    records.move(record, FinancialStatus.DEPOSIT_PAID if step == DEPOSIT else FinancialStatus.BALANCE_PAID)
    invoice = issue_invoice(InvoiceDraft(
        kind=InvoiceKind.STORE_DEPOSIT if step == DEPOSIT else InvoiceKind.STORE_BALANCE,
        lines=(Line(f"{'Acompte' if step == DEPOSIT else 'Solde'} : {label}", amount),),
        issuer_organization_id=distributor, customer_organization_id=industrial_organization_id,
        reservation_id=reservation.id, service_starts_at=reservation.starts_at, service_ends_at=reservation.ends_at,
        created_by_user_id=user_id, paid=True,
    ), config=config)
    now = clock.now()
    order.invoice, order.status, order.paid_at, order.updated_at = invoice.id, PaymentStatus.PAID, now, now
    order.save(only=[PaymentOrder.invoice, PaymentOrder.status, PaymentOrder.paid_at, PaymentOrder.updated_at])
    if step == BALANCE:
        _commission(reservation, record, label, user_id, config)
    return {"reservation_id": reservation.id, "payment_order_id": order.id, "invoice_number": invoice.number,
            "financial_status": record.financial_status, "payment_status": order.status}


def _commission(reservation, record, label: str, user_id: str | None, config: Config) -> None:
    commission = commission_cents(record.store_base_cents, record.commission_rate_bps)
    if commission == 0:
        return
    invoice = issue_invoice(InvoiceDraft(
        kind=InvoiceKind.PLATFORM_COMMISSION, lines=(Line(f"Commission de la plateforme : {label}", commission),),
        issuer_organization_id=None, customer_organization_id=reservation.distributor_organization_id,
        reservation_id=reservation.id, service_starts_at=reservation.starts_at, service_ends_at=reservation.ends_at,
        created_by_user_id=user_id, due_in_days=30,
    ), config=config)
    ledger.post_invoice(invoice)
