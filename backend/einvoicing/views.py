"""Transmissions as the admin reads them: the server-paginated list and one with its history."""

from __future__ import annotations

from backend.einvoicing.lifecycle import get_transmission
from backend.einvoicing.models import Transmission, TransmissionEvent
from backend.listing import ListParams, Page, paginate

SORTS = {
    "createdAt": Transmission.created_at,
    "updatedAt": Transmission.updated_at,
    "statusChangedAt": Transmission.status_changed_at,
    "invoiceNumber": Transmission.invoice_number,
    "status": Transmission.status,
    "amountInclTaxCents": Transmission.amount_incl_tax_cents,
}


def list_transmissions(*, params: ListParams, statuses: list[str], flow_types: list[str],
                       document_kinds: list[str]) -> Page:
    """Filters are exact (each repeatable); `search` matches the invoice number."""
    query = Transmission.select()
    if statuses:
        query = query.where(Transmission.status.in_(statuses))
    if flow_types:
        query = query.where(Transmission.flow_type.in_(flow_types))
    if document_kinds:
        query = query.where(Transmission.document_kind.in_(document_kinds))
    return paginate(query, params, sorts=SORTS, default_sort="createdAt", tiebreaker=Transmission.id,
                    search_columns=(Transmission.invoice_number,))


def transmission_with_history(transmission_id: str) -> Transmission:
    """The transmission, its status changes in order on `history` (read once, here)."""
    transmission = get_transmission(transmission_id)
    transmission.history = list(TransmissionEvent.select()
                                .where(TransmissionEvent.transmission == transmission.id)
                                .order_by(TransmissionEvent.id))
    return transmission
