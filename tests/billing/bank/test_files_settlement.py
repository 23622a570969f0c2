"""The bank's data model (migration 144): each payment order in at most one live file, held by the
database; a file's content never changes; the settlement moves and the ones refused."""

from __future__ import annotations

import hashlib
import uuid
from datetime import date

import pytest
from peewee import IntegrityError

from backend import clock
from backend.billing.bank import settlement
from backend.billing.bank.end_to_end import end_to_end_id, order_id_of
from backend.billing.collection import collect
from backend.billing.models import BankFile, BankFileOrder, PaymentMethod, PaymentOrder
from backend.db import database, transaction
from backend.errors import Conflict, ValidationError
from tests.billing.helpers import Market, approved_org, booted_config


def _order() -> PaymentOrder:
    industrial, distributor = approved_org("industrial"), approved_org("distributor")
    reservation = Market().reservation(industrial, distributor)
    answer = collect.collect(reservation_id=reservation.id, industrial_organization_id=industrial.id,
                                method=PaymentMethod.BANK_TRANSFER, key=f"k-{reservation.id}", user_id=None,
                                config=booted_config())
    return PaymentOrder.get_by_id(answer.payment_order_id)


def _file(kind: str = "credit_transfer") -> BankFile:
    tag = uuid.uuid4().hex[:12]
    return BankFile.create(kind=kind, message_id=f"VIT-{tag}", count=1, control_sum_cents=100,
                           requested_on=date(2026, 12, 2), storage_key=f"bank/{tag}.xml",
                           sha256=hashlib.sha256(tag.encode()).hexdigest())


def _link(file: BankFile, order: PaymentOrder, **extra) -> BankFileOrder:
    return BankFileOrder.create(file_id=file.id, file_kind=file.kind, payment_order=order.id,
                                amount_cents=order.amount_cents, **extra)


def _savepoint_error(statement) -> str:
    with pytest.raises(IntegrityError) as caught, database.atomic():
        statement()
    return str(caught.value)


def test_a_new_order_is_unsent_and_an_order_is_in_at_most_one_live_file():
    order = _order()
    assert order.settlement == "unsent"
    first, second = _file(), _file()
    _link(first, order)
    assert "billing_bank_file_order_one_live" in _savepoint_error(lambda: _link(second, order))
    # Voiding the first file (its link follows, ON UPDATE CASCADE) frees the order for another.
    BankFile.update(status="void", voided_at=clock.now(), void_reason="refused by the bank").where(
        BankFile.id == first.id).execute()
    assert BankFileOrder.get(BankFileOrder.file_id == first.id).file_status == "void"
    _link(second, order)


def test_a_direct_debit_link_carries_its_sequence_type_and_a_transfer_none():
    order = _order()
    debits = _file("direct_debit")
    assert "billing_bank_file_order_sequence" in _savepoint_error(lambda: _link(debits, order))
    assert "billing_bank_file_order_sequence" in _savepoint_error(
        lambda: _link(_file(), order, sequence_type="FRST"))
    _link(debits, order, sequence_type="FRST")


def test_a_file_never_changes_and_is_never_deleted():
    """The runtime role may only void a file (its grants); the trigger holds the rest for any role."""
    file = _file()
    for statement in (
        lambda: BankFile.update(control_sum_cents=200).where(BankFile.id == file.id).execute(),
        lambda: BankFile.delete().where(BankFile.id == file.id).execute(),
        lambda: BankFileOrder.delete().execute(),
    ):
        with pytest.raises(Exception, match="permission denied"), database.atomic():
            statement()
    BankFile.update(status="void", voided_at=clock.now()).where(BankFile.id == file.id).execute()
    with pytest.raises(Exception, match="never changes"), database.atomic():
        BankFile.update(status="live", voided_at=None).where(BankFile.id == file.id).execute()


def test_settle_and_return_move_once_and_refuse_the_rest():
    order = _order()
    with pytest.raises(Conflict, match="never went to the bank"):
        settlement.mark_returned(order.id, reason_code="MD06", returned_on=date(2026, 12, 5))
    with transaction():
        assert settlement.settle(order.id, booked_on=date(2026, 12, 4)) is True
        assert settlement.settle(order.id, booked_on=date(2026, 12, 4)) is False
    with pytest.raises(ValidationError):
        settlement.mark_returned(order.id, reason_code="md6", returned_on=date(2026, 12, 5))
    assert settlement.mark_returned(order.id, reason_code="MD06", returned_on=date(2026, 12, 5)) is True
    assert settlement.mark_returned(order.id, reason_code="MD06", returned_on=date(2026, 12, 5)) is False
    with pytest.raises(Conflict, match="returned"):
        settlement.settle(order.id, booked_on=date(2026, 12, 6))
    stored = PaymentOrder.get_by_id(order.id)
    assert (stored.settlement, stored.settled_on, stored.return_code, stored.returned_on) == (
        "returned", date(2026, 12, 4), "MD06", date(2026, 12, 5))


def test_the_database_refuses_a_settlement_move_outside_the_map():
    order = _order()
    with pytest.raises(Exception, match="settlement unsent -> returned is not allowed"), database.atomic():
        PaymentOrder.update(settlement="returned", return_code="AM04", returned_on=date(2026, 12, 5)).where(
            PaymentOrder.id == order.id).execute()
    with pytest.raises(IntegrityError, match="billing_payment_order_settled"), database.atomic():
        PaymentOrder.update(settlement="settled").where(PaymentOrder.id == order.id).execute()


def test_an_end_to_end_id_is_the_order_id_without_dashes_and_reads_back():
    order_id = str(uuid.uuid4())
    assert len(end_to_end_id(order_id)) == 32 and order_id_of(end_to_end_id(order_id)) == order_id
    assert [order_id_of(text) for text in ("NOTPROVIDED", "z" * 32, order_id)] == [None, None, None]
