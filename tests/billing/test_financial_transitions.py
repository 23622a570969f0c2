"""The financial transition map: one table in code (`records.TRANSITION_MAP`), the same rows in the
database (`billing_financial_transition`), whose trigger refuses any other move; amounts in 64-bit
columns from the top of the allowed prices through the invoice and its payment order."""

from __future__ import annotations

import pytest
from peewee import DatabaseError

from backend.billing import records
from backend.billing.collection import collect
from backend.billing.models import FinancialRecord, FinancialStatus, PaymentMethod, PaymentOrder
from backend.db import database, transaction
from tests.billing.helpers import Market, approved_org, booted_config


def test_the_database_holds_the_map_of_the_code():
    rows = database.execute_sql("SELECT from_status, to_status, trigger FROM billing_financial_transition").fetchall()
    assert sorted(rows) == sorted((frm.value, to.value, trigger) for frm, to, trigger in records.TRANSITION_MAP)


def test_the_database_refuses_a_move_the_map_does_not_hold():
    industrial, distributor = approved_org("industrial"), approved_org("distributor")
    reservation = Market().reservation(industrial, distributor)
    collect.collect(reservation_id=reservation.id, industrial_organization_id=industrial.id,
                       method=PaymentMethod.BANK_TRANSFER, key="k", user_id=None, config=booted_config())
    moved = FinancialRecord.update(financial_status=FinancialStatus.SUPPLIER_SETTLEMENT_PAID).where(
        FinancialRecord.reservation_id == reservation.id)
    with pytest.raises(DatabaseError, match="not in the transition map"), transaction():
        moved.execute()
    with transaction():  # a move the map holds
        FinancialRecord.update(financial_status=FinancialStatus.WRITTEN_OFF).where(
            FinancialRecord.reservation_id == reservation.id).execute()
    with pytest.raises(DatabaseError, match="not in the transition map"), transaction():
        FinancialRecord.update(financial_status=FinancialStatus.RESERVATION_TOTAL_PAID).where(
            FinancialRecord.reservation_id == reservation.id).execute()


def test_the_top_of_the_allowed_prices_is_collected_without_overflow():
    industrial, distributor = approved_org("industrial"), approved_org("distributor")
    reservation = Market().reservation(industrial, distributor, price_cents=1_000_000_000, rate_bps=10_000)
    answer = collect.collect(reservation_id=reservation.id, industrial_organization_id=industrial.id,
                                method=PaymentMethod.BANK_TRANSFER, key="top", user_id=None,
                                config=booted_config())
    assert PaymentOrder.get_by_id(answer.payment_order_id).amount_cents == 2_400_000_000
