"""Transmissions as the admin reads them: the server-paginated list and one with its history, each
with its lifecycle statuses (`lifecycle`, oldest first)."""

from __future__ import annotations

from peewee import SQL, Table, fn

from backend.einvoicing import reform_statuses
from backend.einvoicing.lifecycle import get_transmission
from backend.einvoicing.models import LifecycleEvent, Transmission, TransmissionEvent
from backend.einvoicing.status import TransmissionStatus
from backend.errors import EinvoiceRecipientUnknown
from backend.listing import ListParams, Page, paginate

SORTS = {
    "createdAt": Transmission.created_at,
    "updatedAt": Transmission.updated_at,
    "statusChangedAt": Transmission.status_changed_at,
    "invoiceNumber": Transmission.invoice_number,
    "status": Transmission.status,
    "amountInclTaxCents": Transmission.amount_incl_tax_cents,
}
INVOICES = Table("billing_invoice")  # billing's table: an invoice credited in full is `credited`
ACCEPTANCES = Table("billing_self_billed_acceptance")  # billing's: a distributor's contest and its resolution


def needs_attention():
    """The latest lifecycle code calls for the admin (207, 208, 210, 213), or the deposit is held
    because the addressee is not in the operator's directory, and the invoice is not corrected yet
    (credited in full). A 207 sent for a distributor whose contest an admin resolved is settled:
    rejected, the invoice stands; adjusted, it is credited and its 210 follows."""
    corrected = fn.EXISTS(INVOICES.select(SQL("1")).where(
        (INVOICES.c.number == Transmission.invoice_number) & (INVOICES.c.status == "credited")))
    resolved = Table("billing_invoice").alias("resolved_invoice")
    settled_dispute = (Transmission.lifecycle_code == reform_statuses.DISPUTED) & Transmission.invoice_number.in_(
        ACCEPTANCES.select(resolved.c.number).join(resolved, on=resolved.c.id == ACCEPTANCES.c.invoice_id)
        .where(ACCEPTANCES.c.resolution.is_null(False)))
    held = (Transmission.status == TransmissionStatus.FAILED) & (
        Transmission.last_error_code == EinvoiceRecipientUnknown.code)
    return (Transmission.lifecycle_code.in_(list(reform_statuses.ATTENTION)) | held) & ~corrected & ~settled_dispute


def list_transmissions(*, params: ListParams, statuses: list[str], flow_types: list[str],
                       document_kinds: list[str], lifecycle_codes: list[int] | None = None,
                       attention: bool = False) -> Page:
    """Filters are exact (each repeatable; `lifecycle_codes` on the latest code); `search` matches
    the invoice number; `attention` keeps those waiting for the admin."""
    query = Transmission.select()
    if statuses:
        query = query.where(Transmission.status.in_(statuses))
    if flow_types:
        query = query.where(Transmission.flow_type.in_(flow_types))
    if document_kinds:
        query = query.where(Transmission.document_kind.in_(document_kinds))
    if lifecycle_codes:
        query = query.where(Transmission.lifecycle_code.in_(lifecycle_codes))
    if attention:
        query = query.where(needs_attention())
    page = paginate(query, params, sorts=SORTS, default_sort="createdAt", tiebreaker=Transmission.id,
                    search_columns=(Transmission.invoice_number,))
    _attach_lifecycle(page.items)
    return page


def transmission_with_history(transmission_id: str) -> Transmission:
    """The transmission, its status changes in order on `history` and its lifecycle statuses on
    `lifecycle` (each read once, here)."""
    transmission = get_transmission(transmission_id)
    transmission.history = list(TransmissionEvent.select()
                                .where(TransmissionEvent.transmission == transmission.id)
                                .order_by(TransmissionEvent.id))
    _attach_lifecycle([transmission])
    return transmission


def with_lifecycle(transmission: Transmission) -> Transmission:
    """The transmission with its `lifecycle` (an admin action's answer)."""
    _attach_lifecycle([transmission])
    return transmission


def _attach_lifecycle(transmissions: list[Transmission]) -> None:
    """`lifecycle: [{code, label, at, reason}]` on each, oldest first, in one query."""
    by_id = {t.id: t for t in transmissions}
    for t in transmissions:
        t.lifecycle = []
    if not by_id:
        return
    for event in (LifecycleEvent.select().where(LifecycleEvent.transmission.in_(list(by_id)))
                  .order_by(LifecycleEvent.at, LifecycleEvent.id)):
        by_id[event.transmission_id].lifecycle.append(
            {"code": event.code, "label": reform_statuses.label(event.code), "at": event.at, "reason": event.reason})
