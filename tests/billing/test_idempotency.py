"""Idempotency-Key: replay, another body (422), a request in flight (409), missing key (400), 24 h."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from backend import clock
from backend.billing import idempotency
from backend.billing.collection import collect
from backend.billing.errors import IdempotencyKeyReused
from backend.billing.models import FinancialRecord, IdempotencyRecord, Invoice, PaymentMethod, SepaMandate
from backend.errors import Conflict, ValidationError
from tests.billing.helpers import Market, approved_org, booted_config


def _collect(reservation, key, method=PaymentMethod.BANK_TRANSFER):
    return collect.collect(reservation_id=reservation.id,
                              industrial_organization_id=reservation.industrial_organization_id, method=method,
                              key=key, user_id=None, config=booted_config())


@pytest.fixture
def reservation():
    return Market().reservation(approved_org("industrial"), approved_org("distributor"))


def test_replay_answers_the_stored_result_without_running_again(reservation):
    first = _collect(reservation, "key-1")
    second = _collect(reservation, "key-1")
    assert first.idempotent is False and second.idempotent is True
    assert second == replace(first, idempotent=True)
    assert Invoice.select().where(Invoice.reservation_id == reservation.id).count() == 1


def test_the_answer_is_stored_before_the_number_and_replayed_with_it(reservation):
    first = _collect(reservation, "key-1")
    stored = IdempotencyRecord.get(IdempotencyRecord.key == "key-1").response_body
    assert stored["invoice_id"] == Invoice.get(Invoice.number == first.invoice_number).id
    assert "invoice_number" not in stored


def test_an_answer_stored_with_its_number_replays_as_it_is(reservation):
    request_hash = idempotency.fingerprint("POST", collect.collect_path(reservation.id),
                                           {"paymentMethod": "bank_transfer"})
    answer = {"reservation_id": reservation.id, "payment_order_id": "p", "invoice_number": "FAC-RES-2026-000042",
              "financial_status": "reservation_total_paid", "payment_status": "paid"}
    IdempotencyRecord.create(scope=reservation.industrial_organization_id, route=collect.COLLECT_ROUTE,
                             key="key-1", request_hash=request_hash, state="completed", response_status=200,
                             response_body=answer, expires_at=clock.now() + idempotency.TTL)
    assert _collect(reservation, "key-1") == collect.Collected(**answer, idempotent=True)


def test_same_key_with_another_body_is_422(reservation):
    _collect(reservation, "key-1")
    SepaMandate.create(organization_id=reservation.industrial_organization_id, mandate_ref="VTR-X-1", iban="FR76",
                       signed_at=clock.now())
    with pytest.raises(IdempotencyKeyReused):
        _collect(reservation, "key-1", method=PaymentMethod.SEPA_DD)


@pytest.mark.committed
def test_a_key_held_by_a_running_request_is_409_and_nothing_is_written():
    import threading

    from backend.db import database, transaction

    with database.connection_context(), transaction():
        reservation = Market().reservation(approved_org("industrial"), approved_org("distributor"))
    held, release = threading.Event(), threading.Event()
    lock = idempotency.lock_id(reservation.industrial_organization_id, collect.COLLECT_ROUTE, "key-1")

    def running_request():  # another connection holds the key, as a request in flight does
        with database.connection_context(), transaction():
            database.execute_sql("SELECT pg_advisory_xact_lock(%s)", (lock,))
            held.set()
            release.wait(timeout=30)

    holder = threading.Thread(target=running_request)
    holder.start()
    try:
        assert held.wait(timeout=10)
        with database.connection_context(), pytest.raises(Conflict) as refused:
            _collect(reservation, "key-1")
    finally:
        release.set()
        holder.join(timeout=30)
    assert refused.value.details["reason"] == "request_in_flight"
    with database.connection_context():
        assert not IdempotencyRecord.select().where(IdempotencyRecord.key == "key-1").exists()
        assert not Invoice.select().where(Invoice.reservation_id == reservation.id).exists()
        # nor the financial record: opening it raced the holder's read, which then answered not_due
        assert not FinancialRecord.select().where(FinancialRecord.reservation_id == reservation.id).exists()
        assert _collect(reservation, "key-1").idempotent is False  # released: the key is free again


def test_a_failed_flow_releases_its_key_and_an_expired_key_is_new_again(reservation):
    with pytest.raises(Conflict):
        _collect(reservation, "key-1", method=PaymentMethod.SEPA_DD)  # no mandate
    assert not IdempotencyRecord.select().where(IdempotencyRecord.key == "key-1").exists()
    _collect(reservation, "key-1")
    with clock.frozen_at(clock.now() + timedelta(hours=24, seconds=1)):
        assert idempotency.purge_expired() == 1


def test_an_expired_key_with_another_request_runs_the_flow_and_its_record_is_replaced(reservation):
    long_ago = clock.now() - idempotency.TTL - timedelta(seconds=1)
    IdempotencyRecord.create(scope=reservation.industrial_organization_id, route=collect.COLLECT_ROUTE,
                             key="key-1", request_hash="another request", state="completed", response_status=200,
                             response_body={"old": True}, created_at=long_ago, expires_at=long_ago + idempotency.TTL)
    first = _collect(reservation, "key-1")  # not 422: the expired key is new again
    assert first.idempotent is False
    record = IdempotencyRecord.get(IdempotencyRecord.key == "key-1")
    assert record.response_body["payment_order_id"] == first.payment_order_id
    assert record.expires_at > clock.now()
    assert _collect(reservation, "key-1") == replace(first, idempotent=True)


def test_keys_are_scoped_per_organization():
    market = Market()
    a = market.reservation(approved_org("industrial"), approved_org("distributor"))
    b = market.reservation(approved_org("industrial"), approved_org("distributor"))
    assert _collect(a, "same").idempotent is False
    assert _collect(b, "same").idempotent is False


@pytest.mark.parametrize("key", [None, "", "   ", "x" * 256, "a\nb"])
def test_a_missing_or_unusable_key_is_400(key):
    with pytest.raises(ValidationError):
        idempotency.check_key(key)
