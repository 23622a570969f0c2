"""Manual self-billing catch-up and supplier payout (spec C; the payout route is decided in
docs/billing.md)."""

from __future__ import annotations

from api.access import Route, admin
from api.operations import IDEMPOTENCY_KEY, Answer, operation
from backend.billing import idempotency, payouts, self_billing
from backend.billing.models import FinancialRecord
from backend.billing.views import invoice_item
from backend.identity.permissions import BILLING_MANAGE_ALL
from schemas.billing.self_billing import CatchUpQuery, PayoutOut, SelfBillingOut

BILLING_ADMIN = admin(BILLING_MANAGE_ALL)


class SupplierSelfBilling:
    def __init__(self, config) -> None:
        self.config = config

    @operation("Self-bill a reservation now (manual catch-up)",
               description="`billing.manage.all`. A collected `principal_seller` reservation "
               "(`reservation_total_paid`, else 409 `not_settleable`) gets its `supplier_self_billed` "
               "invoice in the distributor's series (201). 409 `BILLING_MANDATE_MISSING` without a signed "
               "self-billing mandate; 409 `CONFLICT` "
               "(`incident_open`) with an open incident; `force=true` bypasses both, answering the "
               "`forced_without_mandate` / `forced_with_open_incident` warnings (logged and audited). The incident "
               "window is not a gate here. Idempotent: a reservation already self-billed answers its invoice "
               "(200, `idempotent: true`).",
               tags=("billing",), query=CatchUpQuery, answer=SelfBillingOut, status=201,
               other_answers={200: (SelfBillingOut, "already self-billed")})
    def on_post(self, req, resp, reservation_id: str, query: dict) -> Answer:
        result = self_billing.catch_up(reservation_id=reservation_id, user_id=req.context.principal.user_id,
                                       force=query["force"], config=self.config)
        created = result.outcome is self_billing.Outcome.ISSUED
        invoice = result.invoice
        record = FinancialRecord.get_by_id(reservation_id)
        return Answer({"reservationId": reservation_id, "invoiceNumber": invoice.number,
                       "invoice": invoice_item(invoice), "financialStatus": record.financial_status,
                       "warnings": list(result.warnings), "idempotent": not created}, 201 if created else 200)


class Payout:
    @operation("Pay a distributor its self-billed invoice",
               description="`billing.manage.all`. Header `Idempotency-Key` required (400 when absent; a replay answers "
               "`idempotent: true`; in flight 409). The reservation must be `supplier_settlement_pending` (else 409 "
               "`not_settlement_pending`): a `supplier_payout` payment order (`bank_transfer`, the self-billed invoice "
               "less its credit notes, including VAT) paid at once, the journal settling the distributor's invoiced "
               "payable, the invoice `paid`, the financial status `supplier_settlement_paid`; audited.",
               tags=("billing",), answer=PayoutOut, headers=IDEMPOTENCY_KEY)
    def on_post(self, req, resp, reservation_id: str) -> dict:
        key = idempotency.check_key(req.get_header("Idempotency-Key"))
        principal = req.context.principal
        return payouts.pay_out(reservation_id=reservation_id, key=key, user_id=principal.user_id,
                               scope=principal.active_organization_id or f"user:{principal.user_id}")


def routes(deps) -> list[Route]:
    return [
        Route("/api/billing/reservations/{reservation_id}/supplier-self-billing", SupplierSelfBilling(deps.config),
              BILLING_ADMIN),
        Route("/api/admin/billing/reservations/{reservation_id}/payout", Payout(), BILLING_ADMIN),
    ]
