"""The files for the bank (API.md "The bank"): made, stored, listed, read back.

`make_file` runs one file run in one transaction, serialized per kind (an advisory lock): the
payment orders due are locked, those that cannot go held back (`orders.Held`, listed by
`held_orders`), the others written in one ISO 20022 message validated against its schema
(`direct_debits`, `transfers`), the XML stored privately (`billing/bank/<kind>/<year>/<message
id>.xml` in the context `billing-bank-files`), the file and its orders recorded (each order in at
most one live file: the database's `billing_bank_file_order_one_live`), the orders moved to
`in_file`, and an audit entry naming who made it (`billing.bank.file`). When anything fails,
nothing is recorded and the stored XML is deleted.

`void_file` voids a live file the bank refused (`vitrine bank void`): its orders become `unsent`
and go in the next run; the file and its XML are kept, `void`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from backend import clock
from backend.billing.accounting import cash
from backend.billing.accounting.entries import paris_day
from backend.billing.bank import direct_debits, settlement, transfers
from backend.billing.bank.messages import SCHEMAS, Message
from backend.billing.bank.orders import Held, split
from backend.billing.models import AuditEntry, BankFile, BankFileKind, BankFileOrder, BankFileStatus
from backend.config import Config
from backend.context import current_request_id
from backend.db import database, transaction
from backend.errors import Conflict, NotFound, ValidationError
from backend.listing import ListParams, Page, paginate
from backend.logs import log_event
from backend.model import new_id
from storage import Storage

STORAGE_CONTEXT = "billing-bank-files"
CONTENT_TYPE = "application/xml"
AUDIT_ACTION = "billing.bank.file"
VOID_ACTION = "billing.bank.file.voided"
_MESSAGES = {BankFileKind.DIRECT_DEBIT: direct_debits.message, BankFileKind.CREDIT_TRANSFER: transfers.message}
SORTS = {"createdAt": BankFile.created_at, "kind": BankFile.kind, "requestedOn": BankFile.requested_on,
         "count": BankFile.count, "controlSumCents": BankFile.control_sum_cents}


def storage_key(kind: BankFileKind, message_id: str, today: date) -> str:
    return f"billing/bank/{kind.value}/{today.year}/{message_id}.xml"


@dataclass(frozen=True)
class Made:
    """A file run's answer: the file of the orders that went, and those held back."""

    file: BankFile
    held: list[Held]


def make_file(kind: BankFileKind, *, storage: Storage, config: Config, user_id: str | None,
              origin: str = "admin route") -> Made:
    """The file of every payment order of `kind` that can go, stored and recorded, and the orders
    held back; 409 when none can go. The audit entry names the admin (`user_id`), where it was made
    (`origin`) and the orders held back."""
    today = paris_day(clock.now())
    stored_key = None
    try:
        with transaction():
            database.execute_sql("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"billing_bank_file:{kind.value}",))
            message, held = _MESSAGES[kind](config=config, today=today)
            key = storage_key(kind, message.message_id, today)
            stored = storage.put_bytes(STORAGE_CONTEXT, key, message.xml, CONTENT_TYPE)
            stored_key = key
            file = _record(message, key=key, sha256=stored.sha256, user_id=user_id, origin=origin, held=held)
    except BaseException:
        if stored_key is not None:
            storage.delete(STORAGE_CONTEXT, stored_key)
        raise
    log_event("billing.bank.file.created", f"{SCHEMAS[kind]} file made", "info", fileId=file.id, kind=kind.value,
              messageId=file.message_id, count=file.count, controlSumCents=file.control_sum_cents,
              requestedOn=file.requested_on.isoformat(), actorUserId=user_id, origin=origin, held=len(held))
    return Made(file, held)


def _record(message: Message, *, key: str, sha256: str, user_id: str | None, origin: str,
            held: list[Held]) -> BankFile:
    file = BankFile.create(id=new_id(), kind=message.kind, message_id=message.message_id, count=message.count,
                           control_sum_cents=message.control_sum_cents, requested_on=message.requested_on,
                           storage_key=key, sha256=sha256, created_by_user_id=user_id)
    BankFileOrder.insert_many([
        {"file_id": file.id, "file_kind": message.kind, "payment_order": entry.payment_order_id,
         "amount_cents": entry.amount_cents, "sequence_type": entry.sequence_type}
        for entry in message.entries
    ]).execute()
    settlement.put_in_file([entry.payment_order_id for entry in message.entries])
    cash.post_in_transit([entry.payment_order_id for entry in message.entries], day=paris_day(clock.now()))
    AuditEntry.create(action=AUDIT_ACTION, actor_user_id=user_id,
                      reason=f"{SCHEMAS[message.kind]} file for the bank, made from the {origin}",
                      details={"fileId": file.id, "kind": message.kind.value, "messageId": message.message_id,
                               "count": message.count, "controlSumCents": message.control_sum_cents,
                               "requestedOn": message.requested_on.isoformat(), "sha256": sha256,
                               "held": [item.shown() for item in held]},
                      request_id=current_request_id())
    return file


def void_file(file_id: str, *, reason: str, user_id: str | None, origin: str) -> BankFile:
    """A live file the bank refused, voided: its orders are `unsent` again (due for the next run);
    409 when it is void already or the bank booked or returned one of its orders. Audited."""
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError("a reason is required", fields={"reason": ["required"]})
    with transaction():
        file = BankFile.select().where(BankFile.id == file_id).for_update().first()
        if file is None:
            raise NotFound("bank file not found", fileId=file_id)
        if file.status != BankFileStatus.LIVE:
            raise Conflict("the file is void already", reason="file_void", fileId=file_id)
        order_ids = [link.payment_order_id for link in BankFileOrder.select().where(BankFileOrder.file_id == file.id)]
        settlement.take_out_of_file(order_ids)
        now = clock.now()
        BankFile.update(status=BankFileStatus.VOID, voided_at=now, void_reason=reason).where(
            BankFile.id == file.id).execute()  # its order links follow (ON UPDATE CASCADE)
        AuditEntry.create(action=VOID_ACTION, actor_user_id=user_id, reason=reason,
                          details={"fileId": file.id, "messageId": file.message_id, "count": file.count,
                                   "origin": origin}, request_id=current_request_id())
    log_event("billing.bank.file.voided", "bank file voided: its orders are due again", "warn", fileId=file.id,
              messageId=file.message_id, count=file.count, origin=origin)
    return get_file(file_id)


@dataclass(frozen=True)
class HeldOrder:
    """An order due at the bank and held back (`orders.Held`), with what the admin's list shows."""

    payment_order_id: str
    reason: str
    field: str | None
    problem: str | None
    kind: str
    organization_id: str
    reservation_id: str | None
    amount_cents: int
    created_at: datetime


def held_orders() -> list[HeldOrder]:
    """Every payment order due at the bank and held back, oldest first, with why (both kinds)."""
    debits = list(direct_debits.due_orders())
    credits = list(transfers.due_orders())
    held = [*split(debits, direct_debits.holds(debits, direct_debits.mandates_of(debits)))[1],
            *split(credits, transfers.holds(credits))[1]]
    orders = {order.id: order for order in (*debits, *credits)}
    shown = [HeldOrder(item.payment_order_id, item.reason, item.field, item.problem, order.kind,
                       order.organization_id, order.reservation_id, order.amount_cents, order.created_at)
             for item in held for order in (orders[item.payment_order_id],)]
    return sorted(shown, key=lambda row: (row.created_at, row.payment_order_id))


def list_files(params: ListParams, *, kind: str | None = None) -> Page:
    """Newest first by default; `search` matches the message id."""
    query = BankFile.select()
    if kind:
        query = query.where(BankFile.kind == kind)
    return paginate(query, params, sorts=SORTS, default_sort="createdAt", tiebreaker=BankFile.id,
                    search_columns=(BankFile.message_id,))


def get_file(file_id: str) -> BankFile:
    file = BankFile.get_or_none(BankFile.id == file_id)
    if file is None:
        raise NotFound("bank file not found", fileId=file_id)
    return file


def file_name(file: BankFile) -> str:
    return f"{SCHEMAS[BankFileKind(file.kind)]}-{file.message_id}.xml"
