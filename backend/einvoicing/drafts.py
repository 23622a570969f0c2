"""Transmission drafts: the post-invoice hook's entry point (Specification C, step 4 and 5).

`create_transmission_draft` inserts a `pending_dispatch` transmission, or returns the one that
already has its idempotency key (`<invoiceNumber>:<documentKind>:<flowType>`) with
`idempotent=True`. The unique index decides (`INSERT ... ON CONFLICT DO NOTHING`), never a read
before the write, so two concurrent hooks for one invoice make one transmission. A new draft
records its dispatch in the outbox, in the same transaction.

The flow type is the frozen buyer's (`flow_types.frozen_buyer`, the invoice row billing wrote at
issue): the caller's `flow_type`, resolved from the live billing profile, is only used for a
number billing does not know (and logged when it differs from the frozen one). Every flow gets a
transmission: `fr_domestic_b2b` with the processing rule `B2B`, `eu_intra_b2b` and `export_b2b`
as e-reporting (`B2BInt`). The transmission keeps the frozen buyer's SIREN, its electronic
address for the directory check before dispatch.
"""

from __future__ import annotations

from contextlib import nullcontext

from backend import clock, outbox
from backend.db import in_transaction, transaction
from backend.einvoicing import decision_reports
from backend.einvoicing.flow_types import flow_type_for, frozen_buyer, processing_rule_for
from backend.einvoicing.models import Transmission, idempotency_key
from backend.einvoicing.status import DocumentKind, FlowType
from backend.logs import log_event

SCOPE = "billing.einvoicing"
DISPATCH_ACTOR = "dispatch_einvoice_transmission"  # actors/einvoicing.py


def create_transmission_draft(
    *,
    invoice_number: str,
    document_kind: DocumentKind | str,
    flow_type: FlowType | str,
    document_pdf_key: str | None,
    amount_incl_tax_cents: int,
    invoice_kind: str | None = None,
) -> tuple[Transmission, bool]:
    """The transmission of this invoice document and flow, and whether it already existed.

    `document_pdf_key` is required for dispatch (outside `E2E_TEST_MODE`); a draft without it is
    kept and fails at dispatch with `EINVOICE_MISSING_PDF`. Raises ValueError on a bad argument.
    Runs in the caller's transaction when there is one (no savepoint: a database error fails the
    caller's transaction), else in its own.
    """
    kind = DocumentKind(document_kind)
    flow = FlowType(flow_type)
    if not invoice_number or not invoice_number.strip():
        raise ValueError("invoice_number is required")
    if isinstance(amount_incl_tax_cents, bool) or not isinstance(amount_incl_tax_cents, int):
        raise ValueError("amount_incl_tax_cents is an integer number of cents")
    if amount_incl_tax_cents < 0:
        raise ValueError("amount_incl_tax_cents is never negative (a credit note carries positive amounts)")
    buyer = frozen_buyer(invoice_number)
    if buyer is not None:
        frozen_flow = flow_type_for(buyer.country)
        if frozen_flow is not flow:
            log_event(f"{SCOPE}.flow_type_from_frozen_buyer", "the frozen buyer decides the flow type, not the "
                      "live profile", level="warn", invoiceNumber=invoice_number, given=flow.value,
                      frozen=frozen_flow.value)
        flow = frozen_flow

    key = idempotency_key(invoice_number, kind.value, flow.value)
    now = clock.now()
    # In the caller's transaction when there is one (its outbox rows then go in one statement at
    # its end), else in a transaction of its own.
    with nullcontext() if in_transaction() else transaction():
        rows = list(
            Transmission.insert(
                id=Transmission.id.default(), idempotency_key=key, invoice_number=invoice_number,
                invoice_kind=invoice_kind, document_kind=kind.value, flow_type=flow.value,
                document_pdf_key=document_pdf_key, amount_incl_tax_cents=amount_incl_tax_cents,
                buyer_siren=buyer.siren if buyer else None, buyer_country=buyer.country if buyer else None,
                processing_rule=processing_rule_for(flow),
                created_at=now, updated_at=now, status_changed_at=now,
            )
            .on_conflict(conflict_target=[Transmission.idempotency_key], action="IGNORE")
            .returning(Transmission)
            .execute()
        )
        inserted = bool(rows)
        transmission = rows[0] if rows else Transmission.get(Transmission.idempotency_key == key)
        if inserted:
            # The dispatch, sent to its actor once the transaction commits.
            outbox.enqueue(DISPATCH_ACTOR, transmission.id)
            if kind is DocumentKind.INVOICE:
                decision_reports.replay_onto(transmission)  # a distributor's decision taken before the draft
    log_event(f"{SCOPE}.transmission_draft_created", "transmission draft created" if inserted
              else "transmission draft already exists", transmissionId=transmission.id,
              invoiceNumber=invoice_number, documentKind=kind.value, flowType=flow.value,
              idempotent=not inserted)
    return transmission, not inserted

