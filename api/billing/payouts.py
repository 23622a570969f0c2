"""Supplier payout (spec C; the route is decided in docs/billing.md)."""

from __future__ import annotations

from api.access import BILLING_MANAGER, Route
from api.operations import IDEMPOTENCY_KEY, operation
from backend.billing import idempotency, payouts
from schemas.billing.payouts import PayoutIn, PayoutOut, WaitingOut


class Payout:
    @operation("Pay a distributor its self-billed invoice",
               description="`billing.manage.all`. Header `Idempotency-Key` required (400 when absent; a replay answers "
               "`idempotent: true`; in flight 409). The reservation must be `supplier_settlement_pending` (else 409 "
               "`not_settlement_pending`): a `supplier_payout` payment order (`bank_transfer`, the self-billed invoice "
               "less its credit notes, including VAT) paid at once and booked (BQ: 401 distributor against 512), the "
               "invoice `paid`, the financial status `supplier_settlement_paid`; audited. Payout timing: the "
               "distributor must have accepted the self-billed invoice, expressly or tacitly (30 days after it was "
               "e-mailed), else 409 `self_billing_not_accepted`, unless the body gives a `reason` to pay earlier "
               "(audited, logged `billing.supplier.payout.early`); an open contest is 409 `self_billing_contested` "
               "until an admin resolves it. Money received, accounts reviewed: 409 `customer_payment_not_received` "
               "until a bank statement settled the customer's payment of the sale, 409 `kyb_not_approved` while the "
               "distributor's KYB is not approved (an IBAN change sends it back to review); the payment order records "
               "the distributor's account as approved at KYB, the one the credit transfer file pays.",
               tags=("billing",), body=PayoutIn, body_required=False, answer=PayoutOut, headers=IDEMPOTENCY_KEY)
    def on_post(self, req, resp, reservation_id: str, body: dict | None) -> payouts.PaidOut:
        key = idempotency.check_key(req.get_header("Idempotency-Key"))
        return payouts.pay_out(reservation_id=reservation_id, key=key, user_id=req.context.principal.user_id,
                               reason=(body or {}).get("reason"))


class Waiting:
    @operation("Payouts waiting for the customer's money",
               description="`billing.manage.all`. Every reservation self-billed (`supplier_settlement_pending`) whose "
               "sale's payment no bank statement has settled yet, oldest collection first (at most 500): the sale and "
               "self-billed invoice numbers, the distributor, the collection (payment order, method, settlement, "
               "amount including VAT, when collected) and its age in days. Its payout is 409 "
               "`customer_payment_not_received` until then. Logged daily (`billing.supplier.payout.waiting`).",
               tags=("billing",), answer=WaitingOut)
    def on_get(self, req, resp) -> dict:
        return {"items": payouts.waiting_for_money()}


def routes(deps) -> list[Route]:
    return [Route("/api/admin/billing/reservations/{reservation_id}/payout", Payout(), BILLING_MANAGER),
            Route("/api/admin/billing/payouts/waiting", Waiting(), BILLING_MANAGER)]
