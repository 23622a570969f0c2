"""Admin routes of printing (API.md "Print orders: operations spec B leaves out", spec B
`/admin/print-orders`): the order list with qualifiers, deposits to review, release, cancel."""

from __future__ import annotations

from api.access import ADMIN, Route
from api.requests import load
from api.responses import send
from backend.listing import ListParams
from backend.printing import impressions, order_views, orders
from schemas.printing.deposits import AdminDepositsQuery, impression_item_out
from schemas.printing.orders import AdminPrintOrdersQuery, CancelIn, admin_order_out

BASE = "/api/admin/print-orders"


class AdminPrintOrders:
    def on_get(self, req, resp) -> None:
        """Every print order but drafts.
        ---
        summary: Print orders of every printer (every status but draft), server-paginated
        description: >
          Filters `status` (repeatable), `printerOrganizationId`, `industrialOrganizationId`; `search` on the
          code, campaign, industrial and store names; `sortBy` createdAt (default), updatedAt, code, status.
          Lines show their qualifiers; `batchCode` is null for a cancelled order.
        tags: [admin printing]
        parameters:
          - in: query
            schema: AdminPrintOrdersQuery
        responses:
          200:
            description: a page of orders
            content:
              application/json:
                schema: AdminPrintOrderPageEnvelope
        """
        query = AdminPrintOrdersQuery().load(req.params)
        page = order_views.admin_orders(
            params=ListParams.from_query(query), statuses=query["status"],
            printer_organization_id=query["printerOrganizationId"],
            industrial_organization_id=query["industrialOrganizationId"],
        )
        send(resp, page.as_dict(admin_order_out))


class AdminPrintOrder:
    def on_get(self, req, resp, code: str) -> None:
        """One print order.
        ---
        summary: A print order of any status, with qualifiers
        tags: [admin printing]
        responses:
          200:
            description: the order
            content:
              application/json:
                schema: AdminPrintOrderOutEnvelope
        """
        send(resp, admin_order_out(order_views.order_by_code(code)))

    def on_post_release(self, req, resp, code: str) -> None:
        """Validate a deposit.
        ---
        summary: Release a draft order to its printer (draft to pending; deposit `validated`)
        description: Any other status is 400 VALIDATION_ERROR. Journaled in the audit log.
        tags: [admin printing]
        responses:
          200:
            description: the order
            content:
              application/json:
                schema: AdminPrintOrderOutEnvelope
        """
        orders.release_order(order_code=code, actor_user_id=req.context.principal.user_id)
        send(resp, admin_order_out(order_views.order_by_code(code)))

    def on_post_cancel(self, req, resp, code: str) -> None:
        """Cancel an order.
        ---
        summary: Cancel an order in any status but delivered, with a reason (audited)
        description: The reservation's deposit opens again (`to_deposit`).
        tags: [admin printing]
        requestBody:
          content:
            application/json:
              schema: CancelIn
        responses:
          200:
            description: the order
            content:
              application/json:
                schema: AdminPrintOrderOutEnvelope
        """
        body = load(req, CancelIn())
        orders.cancel_order(order_code=code, reason=body["reason"], actor_user_id=req.context.principal.user_id)
        send(resp, admin_order_out(order_views.order_by_code(code)))


class AdminDeposits:
    def on_get(self, req, resp) -> None:
        """Deposits to review.
        ---
        summary: Reservations whose deposit is `in_review` (or `impressionStatus`), with their draft order
        tags: [admin printing]
        parameters:
          - in: query
            schema: AdminDepositsQuery
        responses:
          200:
            description: a page of reservations
            content:
              application/json:
                schema: ImpressionItemPageEnvelope
        """
        query = AdminDepositsQuery().load(req.params)
        page = impressions.deposits_to_review(params=ListParams.from_query(query),
                                              impression_status=query["impressionStatus"])
        send(resp, page.as_dict(impression_item_out))


def routes(deps) -> list[Route]:
    item = AdminPrintOrder()
    return [
        Route(BASE, AdminPrintOrders(), ADMIN),
        Route(f"{BASE}/{{code}}", item, ADMIN),
        Route(f"{BASE}/{{code}}/release", item, ADMIN, suffix="release"),
        Route(f"{BASE}/{{code}}/cancel", item, ADMIN, suffix="cancel"),
        Route("/api/admin/print-deposits", AdminDeposits(), ADMIN),
    ]
