"""Domain events: one outbox row per subscriber, written in the transaction that causes the event.

`publish("reservation.approved", reservation_id)` must run inside the service's `transaction()`:
each subscriber (the name of a Dramatiq actor taking the event's arguments) gets its own outbox
row, so each is sent after the commit, retried on its own and re-sent by the sweeper, and a
failing subscriber never holds the others back. No actor sends another actor's message directly:
this table is the one place where an area hears about another's events.
"""

from __future__ import annotations

from backend import outbox

RESERVATION_APPROVED = "reservation.approved"
INVOICE_ISSUED = "invoice.issued"
EINVOICE_ACKNOWLEDGED = "einvoice.acknowledged"
ORGANIZATION_IBAN_CHANGED = "organization.iban_changed"
ENVELOPE_SIGNED = "onboarding.envelope_signed"
SIGNATURE_EVENT_PROCESSED = "onboarding.signature_event_processed"

SUBSCRIBERS: dict[str, tuple[str, ...]] = {
    # A passage to `approved` (review or accepted counter-proposal): the approval is logged, the
    # deposit of visuals opens (spec B), billing collects the reservation total (spec C).
    RESERVATION_APPROVED: ("announce_reservation_approved", "open_print_deposit", "auto_collect_reservation"),
    # An onboarding envelope reached `signed`: its signed files are kept (spec A), the SEPA
    # mandate it holds becomes the organization's active one (spec C).
    ENVELOPE_SIGNED: ("store_signed_documents", "record_sepa_mandate"),
    # The onboarding processing of a stored e-signature provider event is done (whatever it
    # concerned): the self-billing mandate of that provider request, if any, moves (spec C).
    SIGNATURE_EVENT_PROCESSED: ("route_self_billing_mandate_event",),
    # An invoice committed (any kind): the post-invoice hook of spec C (Factur-X PDF, then the
    # e-invoice transmission draft).
    INVOICE_ISSUED: ("run_post_invoice_hook",),
    # The operator accepted an invoice's deposit: its copy is e-mailed to whom it concerns.
    EINVOICE_ACKNOWLEDGED: ("mail_invoice_document",),
    # An approved organization's IBAN changed: its SEPA mandate no longer matches the account.
    ORGANIZATION_IBAN_CHANGED: ("end_sepa_mandates",),
}


def publish(event: str, *args: object) -> None:
    """Record `event` for every subscriber, inside the enclosing transaction."""
    for actor_name in SUBSCRIBERS[event]:
        outbox.enqueue(actor_name, *args)

