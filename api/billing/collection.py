"""Collection of a reservation and its financial summary (spec C "Collection and refunds").

`Idempotency-Key` is required on every collect route (400 when absent): a replay answers the
stored result with `idempotent: true`, another body with the same key is 422
`IDEMPOTENCY_KEY_REUSED`, a request still in flight with that key is 409 `CONFLICT`.
"""

from __future__ import annotations

from api.access import BILLING_MANAGER, Route, roles
from api.operations import IDEMPOTENCY_KEY, operation
from api.requests import acting_organization
from backend.billing import idempotency, legacy, queries
from backend.billing.collection import admin, collect
from backend.identity.permissions import BILLING_COLLECT
from schemas.billing.collection import CollectIn, CollectOut, CollectTotalIn, SummaryOut

# Spec C: KYB approved, permission billing.collect, membership manager or billing.
COLLECTOR = roles("industrial", permission=BILLING_COLLECT, kyb_required=True, membership_roles=("manager", "billing"))
PARTIES = roles("industrial", "distributor", "admin", kyb_required=True)
KEY_DESCRIPTION = ("Header `Idempotency-Key` required (400 when absent or starting with `auto-collect-`, the "
                   "platform's own keys; kept 24 h per organization and route): the "
                   "same key and body replay the first answer with `idempotent: true`; another body is 422 "
                   "`IDEMPOTENCY_KEY_REUSED`; a request still in flight with the key is 409 `CONFLICT`. ")


class Collect:
    def __init__(self, config) -> None:
        self.config = config

    @operation("Collect a reservation",
               description=KEY_DESCRIPTION + "The seven steps of spec C in one transaction: the reservation must be "
               "`approved` or `completed` and `principal_seller` (else 409 with `details.reason`); `sepa_dd` needs "
               "the organization's active SEPA mandate (409, `sepa_mandate_missing`). Issues the `platform_sale` "
               "invoice, pays the `reservation_total` payment order, books the sale (VE) and its payment (BQ). "
               "Without `paymentMethod`: `sepa_dd` under the organization's active SEPA mandate, else `bank_transfer`.",
               tags=("billing",), body=CollectTotalIn, body_required=False, answer=CollectOut,
               headers=IDEMPOTENCY_KEY)
    def on_post(self, req, resp, reservation_id: str, body: dict | None) -> collect.Collected:
        key = collect.check_client_key(idempotency.check_key(req.get_header("Idempotency-Key")))
        return collect.collect(
            reservation_id=reservation_id, industrial_organization_id=acting_organization(req, "industrial"),
            method=(body or {}).get("paymentMethod"), key=key, user_id=req.context.principal.user_id,
            config=self.config,
        )

    @operation("Collect the deposit of a legacy reservation",
               description=KEY_DESCRIPTION + "`legacy_mandate` reservations only (else 409): "
               "`LEGACY_DEPOSIT_RATE_BPS` of the store base, a `store_deposit` invoice from the store.",
               tags=("billing",), body=CollectIn, answer=CollectOut, headers=IDEMPOTENCY_KEY)
    def on_post_deposit(self, req, resp, reservation_id: str, body: dict) -> collect.Collected:
        return self._legacy(req, reservation_id, body, legacy.DEPOSIT)

    @operation("Collect the balance of a legacy reservation",
               description=KEY_DESCRIPTION + "`legacy_mandate` reservations whose deposit is paid (else 409): the "
               "rest of the store base (`store_balance`), and the platform's `platform_commission` to the store.",
               tags=("billing",), body=CollectIn, answer=CollectOut, headers=IDEMPOTENCY_KEY)
    def on_post_balance(self, req, resp, reservation_id: str, body: dict) -> collect.Collected:
        return self._legacy(req, reservation_id, body, legacy.BALANCE)

    def _legacy(self, req, reservation_id: str, body: dict, step: str) -> collect.Collected:
        key = collect.check_client_key(idempotency.check_key(req.get_header("Idempotency-Key")))
        return legacy.collect_step(
            step, reservation_id=reservation_id, industrial_organization_id=acting_organization(req, "industrial"),
            method=body["paymentMethod"], key=key, user_id=req.context.principal.user_id, config=self.config,
        )


class AdminCollect:
    def __init__(self, config) -> None:
        self.config = config

    @operation("Collect a reservation on the industrial's behalf",
               description=KEY_DESCRIPTION.replace("per organization", "per reservation") + "`billing.manage.all`. "
               "The collection of `POST /api/billing/reservations/{id}/collect` for the reservation's industrial "
               "organization (same refusals), the key scoped to this route and the reservation. Keys starting "
               "with `auto-collect-` are reserved (400).",
               tags=("billing",), body=CollectTotalIn, body_required=False, answer=CollectOut,
               headers=IDEMPOTENCY_KEY)
    def on_post(self, req, resp, reservation_id: str, body: dict | None) -> collect.Collected:
        return admin.collect_on_behalf(
            reservation_id=reservation_id, method=(body or {}).get("paymentMethod"),
            key=idempotency.check_key(req.get_header("Idempotency-Key")), user_id=req.context.principal.user_id,
            config=self.config)


class Summary:
    @operation("Financial summary of a reservation",
               description="For members (manager, member, billing) of the reservation's industrial or distributor "
               "organization, or admins: billing model, financial status, the amounts of the spec C formula, "
               "payment orders, invoices with VAT, refunded total. 404 for anyone else.",
               tags=("billing",), answer=SummaryOut)
    def on_get(self, req, resp, reservation_id: str) -> dict:
        return queries.reservation_summary(principal=req.context.principal, reservation_id=reservation_id)


def routes(deps) -> list[Route]:
    collect = Collect(deps.config)
    base = "/api/billing/reservations/{reservation_id}"
    return [
        Route(f"{base}/collect", collect, COLLECTOR),
        Route(f"{base}/deposit/collect", collect, COLLECTOR, suffix="deposit"),
        Route(f"{base}/balance/collect", collect, COLLECTOR, suffix="balance"),
        Route(f"{base}/summary", Summary(), PARTIES),
        Route("/api/admin/billing/reservations/{reservation_id}/collect", AdminCollect(deps.config), BILLING_MANAGER),
    ]
