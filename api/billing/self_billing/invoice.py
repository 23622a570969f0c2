"""Manual self-billing catch-up (spec C)."""

from __future__ import annotations

from api.access import BILLING_MANAGER, Route
from api.operations import Answer, operation
from backend.billing.self_billing.invoice import catch_up
from schemas.billing.self_billing.invoice import CatchUpIn, CatchUpQuery, SelfBillingOut


class SupplierSelfBilling:
    def __init__(self, config) -> None:
        self.config = config

    @operation("Self-bill a reservation now (manual catch-up)",
               description="`billing.manage.all`. A collected `principal_seller` reservation "
               "(`reservation_total_paid`, else 409 `not_settleable`) gets its `supplier_self_billed` "
               "invoice in the distributor's series (201). 409 `BILLING_MANDATE_MISSING` without a signed "
               "self-billing mandate; 409 `CONFLICT` "
               "(`incident_open`) with an open incident; `force=true` bypasses both, answering the "
               "`forced_without_mandate` / `forced_with_open_incident` warnings (logged and audited), with a body "
               "`{reason}` (400 without). The incident "
               "window is not a gate here. Idempotent: a reservation already self-billed answers its invoice "
               "(200, `idempotent: true`).",
               tags=("billing",), query=CatchUpQuery, body=CatchUpIn, body_required=False, answer=SelfBillingOut,
               status=201,
               other_answers={200: (SelfBillingOut, "already self-billed")})
    def on_post(self, req, resp, reservation_id: str, query: dict, body: dict | None) -> Answer:
        answer = catch_up(reservation_id=reservation_id, user_id=req.context.principal.user_id,
                          force=query["force"], reason=(body or {}).get("reason"), config=self.config)
        return Answer(answer, 200 if answer.idempotent else 201)


def routes(deps) -> list[Route]:
    return [
        Route("/api/billing/reservations/{reservation_id}/supplier-self-billing", SupplierSelfBilling(deps.config),
              BILLING_MANAGER),
    ]
