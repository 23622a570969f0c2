"""Test data of the bank tests: collected reservations and the camt.053 that books them."""

from __future__ import annotations

import dataclasses
import uuid
from datetime import date

from peewee import SQL

from backend import clock
from backend.billing.accounting.entries import paris_day
from backend.billing.accounting.verify import verify
from backend.billing.bank import statements
from backend.billing.bank.end_to_end import end_to_end_id
from backend.billing.bank.matching import INCOMING
from backend.billing.collection import collect
from backend.billing.models import BankStatement, Invoice, PaymentMethod, PaymentOrder, SepaMandate
from ops.simulators.bank_store import camt053, entry_xml
from tests.billing.accounting.books import validate_now
from tests.billing.helpers import Market, approved_org, booted_config

IBAN = "FR7630006000011234567890189"
DAY = date(2026, 12, 3)


def config():
    return dataclasses.replace(booted_config(), platform_legal_iban=IBAN)


def collected(method: PaymentMethod = PaymentMethod.SEPA_DD, *, market: Market | None = None,
              industrial=None) -> PaymentOrder:
    """A reservation collected (by direct debit: its industrial has a mandate)."""
    industrial = industrial or approved_org("industrial")
    if method is PaymentMethod.SEPA_DD and not SepaMandate.select().where(
            SepaMandate.organization_id == industrial.id).exists():
        SepaMandate.create(organization_id=industrial.id, mandate_ref=f"VTR-{uuid.uuid4().hex[:10]}",
                           iban="FR7630001007941234567890185", signed_at=clock.now())
    reservation = (market or Market()).reservation(industrial, approved_org("distributor"))
    answer = collect.collect(reservation_id=reservation.id, industrial_organization_id=industrial.id,
                                method=method, key=f"k-{reservation.id}", user_id=None, config=booted_config())
    return PaymentOrder.get_by_id(answer.payment_order_id)


def number_of(order: PaymentOrder) -> str:
    return Invoice.get_by_id(order.invoice_id).number


def credit(order: PaymentOrder, *, amount: int | None = None, ref: str | None = None, by_number: bool = False) -> str:
    """The credit of `order` on the account: by its end-to-end id, or a transfer naming its invoice."""
    return entry_xml(ref or uuid.uuid4().hex[:16], True, amount or order.amount_cents, DAY,
                     end_to_end_id=None if by_number else end_to_end_id(order.id),
                     remittance=f"Facture {number_of(order)}" if by_number else None, name="Fromagerie")


def returned(order: PaymentOrder, code: str = "MD06", *, ref: str | None = None, day: date = DAY) -> str:
    return entry_xml(ref or uuid.uuid4().hex[:16], False, order.amount_cents, day,
                     end_to_end_id=end_to_end_id(order.id), return_code=code)


def statement(*entries: str, statement_id: str | None = None, iban: str = IBAN, opening: int | None = None,
              **sums) -> bytes:
    """A camt.053 of `entries`, opening on the balance the last statement imported closed on (the
    next one, as the bank sends them) unless `opening` is given."""
    return camt053(iban, statement_id or f"S-{uuid.uuid4().hex[:12]}", f"M-{uuid.uuid4().hex[:12]}",
                   last_closing(iban) if opening is None else opening, list(entries), DAY, **sums)


def last_closing(iban: str = IBAN) -> int:
    last = (BankStatement.select().where(BankStatement.account_iban == iban,
                                         BankStatement.closing_balance_cents.is_null(False))
            .order_by(SQL("import_seq").desc()).first())
    return last.closing_balance_cents if last else 0


def books_breaches() -> list[str]:
    """What `vitrine accounting verify` finds, the test's entries validated as at a commit."""
    validate_now()
    return verify()


def notification(*entries: str, notification_id: str | None = None, iban: str = IBAN) -> bytes:
    """A camt.054.001.08 (debit and credit notification) of `entries` (no balances: a camt.054 has none)."""
    return ('<?xml version="1.0" encoding="UTF-8"?><Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.08">'
            f"<BkToCstmrDbtCdtNtfctn><GrpHdr><MsgId>N-{uuid.uuid4().hex[:12]}</MsgId>"
            "<CreDtTm>2026-12-03T10:00:00+01:00</CreDtTm></GrpHdr>"
            f"<Ntfctn><Id>{notification_id or uuid.uuid4().hex[:12]}</Id><CreDtTm>2026-12-03T10:00:00+01:00</CreDtTm>"
            f"<Acct><Id><IBAN>{iban}</IBAN></Id></Acct>{''.join(entries)}</Ntfctn></BkToCstmrDbtCdtNtfctn>"
            "</Document>").encode()


def booked(*orders: PaymentOrder, day: date | None = None) -> None:
    """The bank books `orders` (collections credited, refunds and payouts debited, by their
    end-to-end ids) on the next camt.053, imported: their money moves in the books."""
    day = day or paris_day(clock.now())
    entries = [entry_xml(uuid.uuid4().hex[:16], order.kind in INCOMING, order.amount_cents, day,
                         end_to_end_id=end_to_end_id(order.id)) for order in orders]
    document = camt053(IBAN, f"S-{uuid.uuid4().hex[:12]}", f"M-{uuid.uuid4().hex[:12]}", last_closing(), entries, day)
    answer = statements.import_statement(document, config=config(), user_id=None)
    assert answer.matched == len(orders), answer
