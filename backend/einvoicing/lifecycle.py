"""The lifecycle of a transmission (Specification C, "EinvoiceTransmissionStatus"): dispatch,
resync, admin retry.

Every status change is one conditional UPDATE (`WHERE status IN (...)`) in its own short
transaction, never around an operator call: two workers, a poll and an admin acting on one
transmission cannot both move it, and the loser sees the winner's result. The database trigger
refuses a move the table does not allow and writes the history row, with the trigger, the actor
and the operator's answer this module sets for the transaction.

Dispatch claims the transmission (`pending_dispatch` -> `dispatching`, or a `dispatching` whose
claim is older than `DISPATCH_LEASE`: its worker died), reads the PDF, checks that the addressee's
electronic address (its SIREN: the buyer of a sale, the distributor of a self-billed invoice) is
in the operator's directory (`directory`, answers cached a day),
and posts it with its processing rule (`B2B`, or `B2BInt` for e-reporting). A flow identifier moves
it to `sent` (providerStatus `processing`); an operator error, a missing PDF, an unknown recipient
(`EINVOICE_RECIPIENT_UNKNOWN`) or a missing operator identity moves it to `failed` with
`lastErrorCode`/`lastErrorMessage`. An operator that is throttling or unavailable also leaves it
`failed`, with `next_dispatch_at`: polling dispatches it again then, automatically, with an
exponential backoff (`retry_delay`), up to `AUTOMATIC_ATTEMPTS`. A dispatch that is not the first
one for the transmission searches the flow by `trackingId` before posting: an earlier attempt may
have reached the operator.

A dispatch never outlives its claim: the dispatch actor's time limit (`DISPATCH_TIME_LIMIT`) ends
it, and the lease is that limit plus the longest operator call that may still be blocking then.

Resync asks the operator: for `sent`, by flow id (`Ok`/`Archived` -> `acknowledged`, `Error` ->
`rejected` with the reform's 213 Rejetée in its lifecycle, `Pending` or anything else: no move);
for the other non-terminal statuses, by `trackingId`, and a flow found there moves the
transmission to `sent` through `dispatching`.

A move to `acknowledged` of an electronic invoice (here, or polling's moves in bulk) publishes
`einvoice.acknowledged` in its transaction (`announce_deposits`): the customer's e-mail is a copy
of the invoice the operator accepted, sent then and never for a rejected deposit.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import timedelta

from peewee import Select, fn

from backend import clock, events
from backend.db import database, transaction
from backend.einvoicing import directory, reason_codes, reform_statuses
from backend.einvoicing.flow_types import SELF_BILLED_KINDS, addressee_siren
from backend.einvoicing.models import Transmission
from backend.einvoicing.operator_client import (
    Flow,
    LifecycleStatus,
    OperatorClient,
    OperatorError,
    OperatorUnavailable,
)
from backend.einvoicing.status import (
    RETRYABLE,
    OperatorStatus,
    ProviderStatus,
    TransmissionStatus,
)
from backend.errors import (
    Conflict,
    DomainError,
    EinvoiceMissingPdf,
    EinvoiceProviderFailed,
    EinvoiceRecipientUnknown,
    NotFound,
)
from backend.logs import get_logger
from storage import Storage

log = get_logger("einvoicing.lifecycle")

INVOICE_PDF_CONTEXT = "billing-invoice-pdf"  # spec C: private context of the invoice PDFs
DISPATCH_TIME_LIMIT = timedelta(minutes=5)  # the dispatch actor's time limit
# The time limit stops a dispatch between two statements; a read blocked then ends within the
# client's timeouts (5 s + 30 s), well inside the margin.
DISPATCH_LEASE = DISPATCH_TIME_LIMIT + timedelta(minutes=2)
AUTOMATIC_ATTEMPTS = 8  # dispatches (the first included) before a throttled one is left to the admin
RETRY_BASE = timedelta(seconds=30)
RETRY_CAP = timedelta(hours=1)
ACKNOWLEDGING = frozenset({OperatorStatus.OK, OperatorStatus.ARCHIVED})

S = TransmissionStatus


ERRORS_BY_CODE: dict[str, type[DomainError]] = {
    EinvoiceMissingPdf.code: EinvoiceMissingPdf,
    EinvoiceProviderFailed.code: EinvoiceProviderFailed,
    EinvoiceRecipientUnknown.code: EinvoiceRecipientUnknown,
}


def retry_delay(attempts: int, retry_after: float | None) -> timedelta:
    """30 s doubled per attempt made, capped at an hour, and never shorter than the operator's
    Retry-After."""
    backoff = min(RETRY_BASE * (2 ** max(attempts - 1, 0)), RETRY_CAP)
    return max(backoff, timedelta(seconds=retry_after or 0))


def get_transmission(transmission_id: str) -> Transmission:
    transmission = Transmission.get_or_none(Transmission.id == transmission_id)
    if transmission is None:
        raise NotFound("no such transmission")
    return transmission


# --- moves ----------------------------------------------------------------------------------


def _move(transmission_id: str, sources: Iterable[str], target: str | None, *, trigger: str,
          actor_user_id: str | None = None, answer: object = None, extra_where=None,
          **fields) -> Transmission | None:
    """UPDATE the transmission if its status is one of `sources` (and `extra_where` holds);
    `target` None keeps the status. Returns the updated row, or None when nothing matched."""
    now = clock.now()
    values = {"updated_at": now, **fields}
    if target is not None:
        values.update(status=target, status_changed_at=now)
    condition = (Transmission.id == transmission_id) & Transmission.status.in_(list(sources))
    if extra_where is not None:
        condition &= extra_where
    # One statement, so one round trip and its own transaction: the settings the history trigger
    # reads are set by the FROM item, evaluated before the row is updated.
    settings = Select(columns=[
        fn.set_config("vitrine.einvoice_trigger", trigger, True).alias("trigger"),
        fn.set_config("vitrine.einvoice_actor", actor_user_id or "", True).alias("actor"),
        fn.set_config("vitrine.einvoice_operator_answer",
                      json.dumps(answer, default=str) if answer is not None else "", True).alias("answer"),
    ]).alias("settings")
    rows = list(Transmission.update(**values).from_(settings).where(condition).returning(Transmission).execute())
    return rows[0] if rows else None


def _reload(transmission_id: str) -> Transmission:
    return Transmission.get_by_id(transmission_id)


def _fail(transmission: Transmission, code: str, message: str, *, trigger: str, answer: object = None,
          actor_user_id: str | None = None, next_dispatch_at=None) -> Transmission:
    failed = _move(transmission.id, (S.DISPATCHING,), S.FAILED, trigger=trigger, actor_user_id=actor_user_id,
                   answer=answer, last_error_code=code, last_error_message=message[:2000],
                   next_dispatch_at=next_dispatch_at,
                   extra_where=Transmission.dispatch_claimed_at == transmission.dispatch_claimed_at)
    log.warning("transmission failed", extra={"fields": {
        "transmissionId": transmission.id, "invoiceNumber": transmission.invoice_number, "code": code,
        "error": message, "nextDispatchAt": clock.iso(next_dispatch_at) if next_dispatch_at else None}})
    return failed or _reload(transmission.id)


def _to_sent(transmission: Transmission, flow: Flow, *, trigger: str, actor_user_id: str | None = None,
             claimed: bool = True) -> Transmission:
    """`dispatching` -> `sent` with the flow, then further at once if the operator already decided."""
    extra = Transmission.dispatch_claimed_at == transmission.dispatch_claimed_at if claimed else None
    sent = _move(transmission.id, (S.DISPATCHING,), S.SENT, trigger=trigger, actor_user_id=actor_user_id,
                 answer=flow.answer, extra_where=extra, provider_status=ProviderStatus.PROCESSING,
                 provider_flow_id=flow.flow_id, operator_status=flow.status, last_synced_at=clock.now(),
                 next_dispatch_at=None)
    if sent is None:
        return _reload(transmission.id)
    log.info("transmission sent", extra={"fields": {
        "transmissionId": sent.id, "invoiceNumber": sent.invoice_number, "flowId": flow.flow_id}})
    if flow.status == OperatorStatus.PENDING and not flow.lifecycle:
        return sent  # what the post answered is recorded already
    return apply_flow_status(sent, flow, trigger=trigger, actor_user_id=actor_user_id)


def apply_flow_status(transmission: Transmission, flow: Flow, *, trigger: str,
                      actor_user_id: str | None = None) -> Transmission:
    """A `sent` transmission and the operator's flow: `Ok`/`Archived` acknowledge it, `Error`
    rejects it, `Pending` or an unknown status only records what was answered. The flow's lifecycle
    statuses are stored (once each) whatever the transmission's status."""
    if flow.lifecycle:
        with transaction():
            reform_statuses.record((transmission.id, status) for status in flow.lifecycle)
    if transmission.status != S.SENT:
        return transmission
    now = clock.now()
    if flow.status in ACKNOWLEDGING:
        with transaction():
            moved = _move(transmission.id, (S.SENT,), S.ACKNOWLEDGED, trigger=trigger, actor_user_id=actor_user_id,
                          answer=flow.answer, provider_status=ProviderStatus.ACCEPTED, operator_status=flow.status,
                          last_synced_at=now)
            if moved is not None and moved.processing_rule == "B2B":  # e-reporting data were mailed at issue
                announce_deposits([moved.invoice_number])
    elif flow.status == OperatorStatus.ERROR:
        with transaction():
            moved = _move(transmission.id, (S.SENT,), S.REJECTED, trigger=trigger, actor_user_id=actor_user_id,
                          answer=flow.answer, provider_status=ProviderStatus.REJECTED, operator_status=flow.status,
                          last_error_message=(flow.error_message or "rejected by the operator")[:2000],
                          last_synced_at=now)
            if moved is not None:
                reform_statuses.record([(transmission.id, rejection_of(flow))])
    else:
        if flow.status != OperatorStatus.PENDING:
            log.warning("unknown operator status: the transmission stays sent", extra={"fields": {
                "transmissionId": transmission.id, "operatorStatus": flow.status}})
        moved = _move(transmission.id, (S.SENT,), None, trigger=trigger, operator_status=flow.status,
                      last_synced_at=now)
    return moved or _reload(transmission.id)


def announce_deposits(invoice_numbers: Iterable[str]) -> int:
    """The operator accepted these electronic invoices' deposits: `einvoice.acknowledged` is
    published with each document's invoice id, in the caller's transaction (the move's), so billing
    e-mails its copy of the electronic invoice then, and only then (a rejected deposit publishes
    nothing). Returns how many were published."""
    numbers = list(invoice_numbers)
    if not numbers:
        return 0
    rows = database.execute_sql("SELECT id FROM billing_invoice WHERE number = ANY(%s)",  # billing's, read only
                                (numbers,)).fetchall()
    for (invoice_id,) in rows:
        events.publish(events.EINVOICE_ACKNOWLEDGED, str(invoice_id))
    return len(rows)


def rejection_of(flow: Flow) -> LifecycleStatus:
    """An operator `Error` at the deposit as the reform's 213 Rejetée: dated when the operator
    changed the flow, its reason the operator's code when the reform admits it for a 213 (else a
    semantic rejection) and its message."""
    errors = flow.answer.get("errors") if isinstance(flow.answer.get("errors"), list) else []
    codes = [e.get("code") for e in errors
             if isinstance(e, dict) and reason_codes.admitted(e.get("code"), reform_statuses.REJECTED)]
    code = codes[0] if codes else reason_codes.DEFAULT_REJECTION
    at = str(flow.answer.get("updatedAt") or "")
    if reform_statuses.parse_at(at) is None:
        at = clock.iso(clock.now())
    return LifecycleStatus(code=reform_statuses.REJECTED, at=at,
                           reason=f"{code} {flow.error_message or reason_codes.label(code)}")


# --- dispatch -------------------------------------------------------------------------------


def dispatch(transmission_id: str, *, client: OperatorClient, storage: Storage, test_mode: bool = False,
             sources: Iterable[str] = (S.PENDING_DISPATCH,), trigger: str = "dispatch",
             actor_user_id: str | None = None) -> Transmission:
    """Claim and post the transmission; returns it as it ends. A transmission that cannot be
    claimed (already dispatched, being dispatched, terminal) is returned unchanged."""
    now = clock.now()
    stale = (Transmission.status == S.DISPATCHING) & (Transmission.dispatch_claimed_at < now - DISPATCH_LEASE)
    condition = Transmission.status.in_(list(sources)) | stale
    claimed = _move(transmission_id, (*sources, S.DISPATCHING), S.DISPATCHING, trigger=trigger,
                    actor_user_id=actor_user_id, extra_where=condition, dispatch_claimed_at=now,
                    dispatch_attempts=Transmission.dispatch_attempts + 1, next_dispatch_at=None)
    if claimed is None:
        transmission = Transmission.get_or_none(Transmission.id == transmission_id)
        if transmission is None:
            raise NotFound("no such transmission")
        log.info("transmission not claimed for dispatch", extra={"fields": {
            "transmissionId": transmission_id, "status": transmission.status}})
        return transmission
    return _post(claimed, client=client, storage=storage, test_mode=test_mode, trigger=trigger,
                 actor_user_id=actor_user_id)


def _post(transmission: Transmission, *, client: OperatorClient, storage: Storage, test_mode: bool, trigger: str,
          actor_user_id: str | None) -> Transmission:
    content = b""
    if transmission.document_pdf_key:
        try:
            content = storage.read_bytes(INVOICE_PDF_CONTEXT, transmission.document_pdf_key)
        except Exception as exc:  # ObjectNotFound, or a storage outage: the PDF cannot be sent
            return _fail(transmission, EinvoiceMissingPdf.code,
                         f"the invoice PDF {transmission.document_pdf_key} cannot be read: {type(exc).__name__}",
                         trigger=trigger, actor_user_id=actor_user_id)
    elif not test_mode:
        return _fail(transmission, EinvoiceMissingPdf.code, "the transmission has no documentPdfKey: "
                     "the invoice PDF was never stored", trigger=trigger, actor_user_id=actor_user_id)
    try:
        flow = None
        if transmission.dispatch_attempts > 1:  # an earlier attempt may have reached the operator
            flow = client.find_by_tracking_id(transmission.invoice_number)
        if flow is None:
            addressee = addressee_siren(transmission.invoice_number, transmission.invoice_kind,
                                        transmission.buyer_siren)
            if transmission.processing_rule == "B2B" and addressee \
                    and not directory.registered(addressee, client=client):
                who = "the distributor's (it receives its self-billed invoice)" \
                    if transmission.invoice_kind in SELF_BILLED_KINDS else "the buyer's"
                return _fail(transmission, EinvoiceRecipientUnknown.code,
                             f"{who} SIREN {addressee} is not in the operator's directory: its electronic address "
                             "is unknown; the deposit is held until it is registered", trigger=trigger,
                             actor_user_id=actor_user_id)
            flow = client.submit_flow(tracking_id=transmission.invoice_number,
                                      name=f"{transmission.invoice_number}.pdf", content=content,
                                      processing_rule=transmission.processing_rule)
    except OperatorError as exc:
        answer = exc.answer if exc.answer is not None else ({"httpStatus": exc.status} if exc.status else None)
        next_at = None
        if isinstance(exc, OperatorUnavailable) and transmission.dispatch_attempts < AUTOMATIC_ATTEMPTS:
            next_at = clock.now() + retry_delay(transmission.dispatch_attempts, exc.retry_after)
        return _fail(transmission, exc.code, exc.message, trigger=trigger, answer=answer,
                     actor_user_id=actor_user_id, next_dispatch_at=next_at)
    return _to_sent(transmission, flow, trigger=trigger, actor_user_id=actor_user_id)


def retry(transmission_id: str, *, client: OperatorClient, storage: Storage, test_mode: bool = False,
          actor_user_id: str | None = None) -> Transmission:
    """Admin retry (runbook): from `failed` or `pending_dispatch` only (else 409 CONFLICT); a
    dispatch that fails again raises its error (`EINVOICE_MISSING_PDF` 409, `EINVOICE_PROVIDER_FAILED`
    502) after the `failed` status and its message are committed."""
    transmission = get_transmission(transmission_id)
    if transmission.status not in RETRYABLE:
        raise Conflict(f"a transmission in {transmission.status} cannot be retried (only failed or pending_dispatch)",
                       status=transmission.status)
    result = dispatch(transmission_id, client=client, storage=storage, test_mode=test_mode,
                      sources=RETRYABLE, trigger="admin_retry", actor_user_id=actor_user_id)
    if result.status == S.FAILED:
        error = ERRORS_BY_CODE.get(result.last_error_code or "", EinvoiceProviderFailed)
        raise error(result.last_error_message or "the transmission failed", transmissionId=result.id)
    if result.status in RETRYABLE:  # another actor moved it meanwhile
        raise Conflict("the transmission is being handled elsewhere; try again", status=result.status)
    return result


# --- resync ---------------------------------------------------------------------------------


def resync(transmission_id: str, *, client: OperatorClient, trigger: str = "poll",
           actor_user_id: str | None = None) -> Transmission:
    """Ask the operator where the transmission stands and move it accordingly (see the module's
    docstring). Raises OperatorError when the operator cannot be asked; a `rejected` or
    `cancelled` transmission is returned unchanged; an `acknowledged` one gets the lifecycle
    statuses reported since."""
    transmission = get_transmission(transmission_id)
    if transmission.status in (S.REJECTED, S.CANCELLED):
        return transmission
    if transmission.status in (S.SENT, S.ACKNOWLEDGED):
        flow = client.get_flow(transmission.provider_flow_id)
        if flow is None:
            log.warning("the operator does not know the flow of a sent transmission", extra={"fields": {
                "transmissionId": transmission.id, "flowId": transmission.provider_flow_id}})
            return _move(transmission.id, (transmission.status,), None, trigger=trigger,
                         last_synced_at=clock.now()) or _reload(transmission.id)
        return apply_flow_status(transmission, flow, trigger=trigger, actor_user_id=actor_user_id)

    flow = client.find_by_tracking_id(transmission.invoice_number)
    if flow is None:
        _move(transmission.id, (transmission.status,), None, trigger=trigger, last_synced_at=clock.now())
        return _reload(transmission.id)
    if transmission.status != S.DISPATCHING:  # pending_dispatch or failed: through dispatching
        claimed = _move(transmission.id, (transmission.status,), S.DISPATCHING, trigger=trigger,
                        actor_user_id=actor_user_id, dispatch_claimed_at=clock.now())
        if claimed is None:
            return _reload(transmission.id)
        transmission = claimed
    return _to_sent(transmission, flow, trigger=trigger, actor_user_id=actor_user_id, claimed=False)


def admin_resync(transmission_id: str, *, client: OperatorClient, actor_user_id: str | None = None) -> Transmission:
    """Resync from the admin (any status but `rejected` and `cancelled`, else 409: an
    `acknowledged` one gets its lifecycle statuses); an operator failure is 502."""
    transmission = get_transmission(transmission_id)
    if transmission.status in (S.REJECTED, S.CANCELLED):
        raise Conflict(f"a transmission in {transmission.status} is terminal: nothing to resync",
                       status=transmission.status)
    try:
        return resync(transmission_id, client=client, trigger="admin_resync", actor_user_id=actor_user_id)
    except OperatorError as exc:
        raise EinvoiceProviderFailed(exc.message, transmissionId=transmission_id) from None
