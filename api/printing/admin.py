"""Admin routes of printing (API.md "Print orders: operations spec B leaves out", spec B
`/admin/print-orders`): the order list with qualifiers, deposits to review, release, cancel."""

from __future__ import annotations

from api.access import ADMIN, Route
from api.operations import operation
from backend.listing import ListParams
from backend.printing import impressions, order_views, orders
from schemas.printing.deposits import AdminDepositsQuery, ImpressionItemPage
from schemas.printing.orders import AdminPrintOrderOut, AdminPrintOrderPage, AdminPrintOrdersQuery, CancelIn

BASE = "/api/admin/print-orders"


class AdminPrintOrders:
    @operation(
        "Print orders of every printer (every status but draft), server-paginated",
        description=(
            "Filters `status` (repeatable), `printerOrganizationId`, `industrialOrganizationId`; "
            "`search` on the code, campaign, industrial and store names; `sortBy` createdAt "
            "(default), updatedAt, code, status. Lines show their qualifiers; `batchCode` is null for "
            "a cancelled order."
        ),
        tags=("admin printing",),
        query=AdminPrintOrdersQuery,
        answer=AdminPrintOrderPage,
        answer_description="a page of orders",
    )
    def on_get(self, req, resp, query: dict):
        return order_views.admin_orders(
            params=ListParams.from_query(query), statuses=query["status"],
            printer_organization_id=query["printerOrganizationId"],
            industrial_organization_id=query["industrialOrganizationId"],
        )


class AdminPrintOrder:
    @operation(
        "A print order of any status, with qualifiers",
        tags=("admin printing",),
        answer=AdminPrintOrderOut,
        answer_description="the order",
    )
    def on_get(self, req, resp, code: str) -> order_views.OrderView:
        return order_views.order_by_code(code)

    @operation(
        "Release a draft order to its printer (draft to pending; deposit `validated`)",
        description="Any other status is 400 VALIDATION_ERROR. Journaled in the audit log.",
        tags=("admin printing",),
        answer=AdminPrintOrderOut,
        answer_description="the order",
    )
    def on_post_release(self, req, resp, code: str) -> order_views.OrderView:
        orders.release_order(order_code=code, actor_user_id=req.context.principal.user_id)
        return order_views.order_by_code(code)

    @operation(
        "Cancel an order in any status but delivered, with a reason (audited)",
        description="The reservation's deposit opens again (`to_deposit`).",
        tags=("admin printing",),
        body=CancelIn,
        answer=AdminPrintOrderOut,
        answer_description="the order",
    )
    def on_post_cancel(self, req, resp, code: str, body: dict) -> order_views.OrderView:
        orders.cancel_order(order_code=code, reason=body["reason"], actor_user_id=req.context.principal.user_id)
        return order_views.order_by_code(code)


class AdminDeposits:
    @operation(
        "Reservations whose deposit is `in_review` (or `impressionStatus`), with their draft order",
        tags=("admin printing",),
        query=AdminDepositsQuery,
        answer=ImpressionItemPage,
        answer_description="a page of reservations",
    )
    def on_get(self, req, resp, query: dict):
        return impressions.deposits_to_review(params=ListParams.from_query(query),
                                              impression_status=query["impressionStatus"])


def routes(deps) -> list[Route]:
    item = AdminPrintOrder()
    return [
        Route(BASE, AdminPrintOrders(), ADMIN),
        Route(f"{BASE}/{{code}}", item, ADMIN),
        Route(f"{BASE}/{{code}}/release", item, ADMIN, suffix="release"),
        Route(f"{BASE}/{{code}}/cancel", item, ADMIN, suffix="cancel"),
        Route("/api/admin/print-deposits", AdminDeposits(), ADMIN),
    ]
