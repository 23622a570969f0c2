"""The printer's delivery information on an order, and the notification of the industrial.

`PATCH .../delivery` changes only the fields it carries (a null clears one). With
`notifyIndustrial: true` an e-mail goes, through the outbox, to the managers of the industrial
organization (to every member when it has no manager), in the transaction that saves the
information: a refused update notifies nobody, and a slow mail server never delays the printer.
"""

from __future__ import annotations

from backend import clock
from backend.db import transaction
from backend.email.messages import public_link, queue_email
from backend.errors import Conflict
from backend.identity.models import Membership, Organization, User
from backend.identity.permissions import MembershipRole
from backend.logs import log_event
from backend.printing.models import PrintOrder
from backend.printing.order_views import order_by_code
from backend.printing.orders import printer_order_for_update
from backend.printing.plans import formatted_address
from backend.printing.status import PrintOrderStatus

FIELDS = {"carrier": PrintOrder.carrier, "trackingNumber": PrintOrder.tracking_number,
          "trackingUrl": PrintOrder.tracking_url}
STATUS_LABELS = {
    "pending": "en attente de prise en charge", "sent": "transmise", "in_production": "en production",
    "produced": "produite", "delivered": "livrée", "cancelled": "annulée",
}
UNKNOWN = "non renseigné"


def update_delivery(*, order_code: str, printer_organization_id: str, changes: dict, notify_industrial: bool) -> None:
    """Save the delivery fields present in `changes` (API names) and notify when asked."""
    with transaction():
        order = printer_order_for_update(order_code, printer_organization_id)
        if order.status == PrintOrderStatus.CANCELLED:
            raise Conflict("the order is cancelled", reason="order_cancelled")
        for name, column in FIELDS.items():
            if name in changes:
                setattr(order, column.name, (changes[name] or "").strip() or None)
        order.updated_at = clock.now()
        order.save(only=[*FIELDS.values(), PrintOrder.updated_at])
        if notify_industrial:
            _notify(order)


def _recipients(organization_id: str) -> list[str]:
    rows = list(
        User.select(User.email, Membership.role)
        .join(Membership, on=Membership.user == User.id)
        .where(Membership.organization == organization_id, User.blocked_at.is_null())
        .order_by(User.email)
        .tuples()
    )
    managers = [email for email, role in rows if role == MembershipRole.MANAGER]
    return managers or [email for email, _ in rows]


def _notify(order: PrintOrder) -> None:
    view = order_by_code(order.code).order
    printer = Organization.get_by_id(order.printer_organization_id).legal_name
    recipients = _recipients(order.industrial_organization_id)
    for address in recipients:
        queue_email(
            "print_order_delivery", to=address, code=order.code, printer=printer, campaign=view.campaign_name,
            store=view.store_name, status=STATUS_LABELS.get(order.status, order.status),
            address=formatted_address(order) or "aucune expédition", carrier=order.carrier or UNKNOWN,
            tracking_number=order.tracking_number or UNKNOWN, tracking_url=order.tracking_url or UNKNOWN,
            link=public_link(f"/industrial/impressions/{order.reservation_id}"),
        )
    log_event("printing.delivery.notified", "industrial notified of a delivery update", "info",
              orderCode=order.code, recipients=len(recipients))
