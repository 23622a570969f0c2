"""Bank statements in (API.md "The bank"; docs/bank.md): import a camt.053 or camt.054, match its
lines, and work the queue of the lines nothing matched.

`import_statement` parses the document (`camt.parse`, refused whole on anything unexpected),
refuses a statement of another account than the platform's (`PLATFORM_LEGAL_IBAN`), then in one
transaction, under an advisory lock that makes imports take turns:

- a statement already imported (same account, kind and statement id) changes nothing: its counts
  are answered again; the same identifier with other content is 409 `statement_conflict`;
- a camt.053 opens on the balance the last camt.053 imported closed on, else 409
  `statement_missing` (a statement between them was not imported);
- lines already imported (same account and bank reference: a camt.053 repeating the day's
  camt.054) are not matched again; their state counts in the answer;
- each new line is decided (`matching.decide`) and stored; a matched line settles its payment
  order (`settled`, its booking date) and books its money (`accounting.cash`), a returned debit
  goes through `returns.apply`, a line left unmatched waits in `471`.

`match_line` is the admin's match of a waiting line with a payment order: the same rules as the
automatic match (amount, direction, the order still waiting for the bank), without the search.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import BinaryIO

from peewee import SQL

from backend import clock
from backend.billing.accounting import cash
from backend.billing.accounting.chart import Account
from backend.billing.bank import camt, matching, returns, settlement
from backend.billing.bank.camt import Line
from backend.billing.models import BankLine, BankStatement, PaymentOrder, Settlement
from backend.config import Config
from backend.db import copy_rows, database, transaction
from backend.errors import Conflict, NotFound
from backend.listing import Page
from backend.logs import log_event
from backend.model import new_id

IMPORT_LOCK = 0x62616E6B696E  # "bankin": statement imports and manual matches take turns
_CHUNK = 2000


@dataclass(frozen=True)
class Imported:
    id: str
    lines: int
    matched: int
    returned: int
    unmatched: int
    created: bool


def platform_iban(config: Config) -> str:
    iban = camt.normalized_iban(config.platform_legal_iban or "")
    if not iban:
        raise Conflict("the platform's IBAN (PLATFORM_LEGAL_IBAN) is not configured", reason="platform_iban_missing")
    return iban


def import_statement(document: bytes | BinaryIO, *, config: Config, user_id: str | None) -> Imported:
    """Import one camt.053 or camt.054 document (its bytes, or a stream read once), whole or not
    at all."""
    statement = camt.parse(document)
    if statement.iban != platform_iban(config):
        raise camt.refused("account", "the statement is not of the platform's account")
    keys = [line.key for line in statement.lines]
    if len(set(keys)) != len(keys):
        raise camt.refused("malformed", "two entries carry the same bank reference")
    with transaction():
        database.execute_sql("SELECT pg_advisory_xact_lock(%s)", (IMPORT_LOCK,))
        existing = BankStatement.get_or_none(BankStatement.account_iban == statement.iban,
                                             BankStatement.kind == statement.kind,
                                             BankStatement.statement_id == statement.statement_id[:35])
        if existing is not None:
            if existing.document_sha256 != statement.sha256:
                raise Conflict("a statement with this identifier was imported before with other content",
                               reason="statement_conflict", statementId=statement.statement_id,
                               importedId=existing.id)
            return _answer(existing, created=False)
        _check_follows(statement)
        known = _known_states(statement.iban, keys)
        new = [line for line in statement.lines if line.key not in known]
        decisions = matching.decide(new)
        states = [*known.values(), *(decision.state for decision in decisions)]
        balances = statement.balances
        row = BankStatement.create(
            id=new_id(), kind=statement.kind, message_id=statement.message_id[:35],
            statement_id=statement.statement_id[:35], account_iban=statement.iban,
            document_sha256=statement.sha256, line_count=len(states),
            matched=states.count(matching.MATCHED), returned=states.count(matching.RETURNED),
            unmatched=states.count(matching.UNMATCHED), imported_by_user_id=user_id, created_at=clock.now(),
            opening_balance_cents=balances.opening_cents if balances else None,
            closing_balance_cents=balances.closing_cents if balances else None,
            closing_date=balances.closing_date if balances else None)
        line_ids = _store_lines(row.id, statement.iban, new, decisions)
        settled = [(decision.payment_order_id, line.booking_date, line_id)
                   for line, decision, line_id in zip(new, decisions, line_ids, strict=True)
                   if decision.state == matching.MATCHED]
        _settle([(order_id, day) for order_id, day, _ in settled])
        cash.post_booked(settled)
        cash.post_waiting([cash.WaitingLine(line_id, line.credit, line.amount_cents, line.booking_date,
                                            line.key if len(line.key) <= 40 else line_id)
                           for line, decision, line_id in zip(new, decisions, line_ids, strict=True)
                           if decision.state == matching.UNMATCHED])
        returned = [_return(decision.payment_order_id, line, line_id, user_id)
                    for line, decision, line_id in zip(new, decisions, line_ids, strict=True)
                    if decision.state == matching.RETURNED]
    _logged(returned)
    answer = _answer(row, created=True)
    log_event("billing.bank.statement.imported", "bank statement imported", "info", statementId=answer.id,
              kind=statement.kind, lines=answer.lines, matched=answer.matched, returned=answer.returned,
              unmatched=answer.unmatched)
    return answer


def last_closing(iban: str) -> BankStatement | None:
    """The last camt.053 imported of account `iban` that gave its closing balance (None before any)."""
    return (BankStatement.select()
            .where(BankStatement.account_iban == iban, BankStatement.closing_balance_cents.is_null(False))
            .order_by(SQL("import_seq").desc()).first())


def _check_follows(statement: camt.Statement) -> None:
    """A camt.053 opens on the balance the last camt.053 imported of its account closed on: else a
    statement is missing between them (or this one is not the next), and importing it would leave
    the books' `512` apart from the bank's balance. Refused with both balances."""
    if statement.balances is None:
        return
    last = last_closing(statement.iban)
    if last is not None and last.closing_balance_cents != statement.balances.opening_cents:
        raise Conflict("the statement does not open on the balance the last statement imported closed on: a"
                       " statement is missing between them", reason="statement_missing",
                       lastStatementId=last.statement_id, lastClosingBalanceCents=last.closing_balance_cents,
                       lastClosingDate=last.closing_date.isoformat() if last.closing_date else None,
                       openingBalanceCents=statement.balances.opening_cents)


def _answer(row: BankStatement, *, created: bool) -> Imported:
    return Imported(row.id, row.line_count, row.matched, row.returned, row.unmatched, created)


def _known_states(iban: str, keys: list[str]) -> dict[str, str]:
    known: dict[str, str] = {}
    for start in range(0, len(keys), 5000):
        known.update(BankLine.select(BankLine.entry_key, BankLine.state)
                     .where(BankLine.account_iban == iban, BankLine.entry_key.in_(keys[start:start + 5000]))
                     .tuples())
    return known


_LINE_COLUMNS = ("id", "statement_id", "account_iban", "entry_key", "direction", "amount_cents", "booking_date",
                 "end_to_end_id", "remittance", "counterparty_name", "counterparty_iban", "return_code", "state",
                 "payment_order_id", "matched_at", "created_at")


def _store_lines(statement_id: str, iban: str, lines: list[Line], decisions: list[matching.Decision]) -> list[str]:
    now = clock.now()
    rows = [(new_id(), statement_id, iban, line.key, "credit" if line.credit else "debit", line.amount_cents,
             line.booking_date, line.end_to_end_id, line.remittance, line.counterparty_name, line.counterparty_iban,
             line.return_code, decision.state, decision.payment_order_id,
             now if decision.payment_order_id else None, now)
            for line, decision in zip(lines, decisions, strict=True)]
    copy_rows("billing_bank_line", _LINE_COLUMNS, rows)
    return [row[0] for row in rows]


def _settle(settled: list[tuple[str, date]]) -> None:
    """Settle the payment orders (id, booking date), each still waiting for the bank; a conflict
    when one moved since it was matched (nothing is written)."""
    now = clock.now()
    for start in range(0, len(settled), _CHUNK):
        chunk = settled[start:start + _CHUNK]
        values = ", ".join(["(%s, %s::date)"] * len(chunk))
        cursor = database.execute_sql(
            "UPDATE billing_payment_order p SET settlement = %s, settled_on = v.day, updated_at = %s"  # noqa: S608
            f" FROM (VALUES {values}) AS v (id, day) WHERE p.id = v.id AND p.settlement IN (%s, %s)",
            [Settlement.SETTLED.value, now, *(value for pair in chunk for value in pair),
             Settlement.UNSENT.value, Settlement.IN_FILE.value])
        if cursor.rowcount != len(chunk):
            raise Conflict("a payment order changed while the statement was imported: import it again",
                           reason="concurrent_change")


def _logged(returned: list[returns.Returned]) -> None:
    """`billing.reservation.collect.failed` for each returned debit, once its transaction is over."""
    for item in returned:
        log_event("billing.reservation.collect.failed", "direct debit returned by the bank", "warn",
                  reservationId=item.reservation_id, paymentOrderId=item.payment_order_id, code=item.code,
                  reason="returned_debit", dueAgain=item.due_again, retriesStopped=item.retries_stopped)


def _return(order_id: str, line: Line, line_id: str, user_id: str | None,
            cash: Account = Account.BANK) -> returns.Returned:
    return returns.apply(PaymentOrder.get_by_id(order_id), code=line.return_code or "", day=line.booking_date,
                         line_id=line_id, user_id=user_id, cash=cash)


def unmatched(*, page: int, page_size: int) -> Page:
    """The lines waiting for an admin (not matched, not settled otherwise: `waiting`), oldest
    booking first."""
    query = BankLine.select().where(BankLine.state == matching.UNMATCHED,
                                    BankLine.id.not_in(SQL("(SELECT line_id FROM billing_bank_line_resolution)")))
    items = list(query.order_by(BankLine.booking_date, BankLine.id).paginate(page, page_size))
    return Page(items=items, total=query.count(), page=page, page_size=page_size)


def match_line(line_id: str, *, payment_order_id: str, user_id: str | None) -> BankLine:
    """The admin's match of the waiting line `line_id` with `payment_order_id`: it settles the
    order (or returns it, for a returned debit); 409 when the rules refuse the pair."""
    with transaction():
        database.execute_sql("SELECT pg_advisory_xact_lock(%s)", (IMPORT_LOCK,))
        row = BankLine.select().where(BankLine.id == line_id).for_update().first()
        if row is None:
            raise NotFound("bank statement line not found")
        resolved = database.execute_sql("SELECT 1 FROM billing_bank_line_resolution WHERE line_id = %s",
                                        (line_id,)).fetchone()
        if row.state != matching.UNMATCHED or resolved:
            raise Conflict("the line is already matched", reason="line_matched")
        order = PaymentOrder.select().where(PaymentOrder.id == payment_order_id).for_update().first()
        if order is None:
            raise NotFound("payment order not found")
        line = _line_of(row)
        returned = []
        if matching.returns(line, order):
            state = matching.RETURNED
            returned.append(_return(order.id, line, row.id, user_id, cash=Account.SUSPENSE))
        elif matching.settles(line, order):
            state = matching.MATCHED
            settlement.settle(order.id, booked_on=line.booking_date)
            cash.post_booked([(order.id, line.booking_date, row.id)], cash=Account.SUSPENSE)
        else:
            raise Conflict("this line cannot settle this payment order (amount, direction or settlement differ)",
                           reason="line_mismatch", amountCents=row.amount_cents, orderAmountCents=order.amount_cents,
                           settlement=order.settlement)
        (BankLine.update(state=state, payment_order_id=order.id, matched_by_user_id=user_id, matched_at=clock.now())
         .where(BankLine.id == row.id).execute())
        _recount(row.statement_id, state)
    _logged(returned)
    return BankLine.get_by_id(line_id)


def _line_of(row: BankLine) -> Line:
    return Line(key=row.entry_key, credit=row.direction == "credit", amount_cents=row.amount_cents,
                booking_date=row.booking_date, end_to_end_id=row.end_to_end_id, remittance=row.remittance,
                counterparty_name=row.counterparty_name, counterparty_iban=row.counterparty_iban,
                return_code=row.return_code)


def _recount(statement_id: str, state: str) -> None:
    """The counts of the statement that brought a line the admin just matched (`state`)."""
    moved = BankStatement.matched if state == matching.MATCHED else BankStatement.returned
    (BankStatement.update({moved: moved + 1, BankStatement.unmatched: BankStatement.unmatched - 1})
     .where(BankStatement.id == statement_id).execute())
