"""One lock order in printing: the reservation row, then its order row. An admin release or
cancel and a printer step wait on the reservation before they take the order, exactly as the
deposits do, so the two never deadlock."""

from __future__ import annotations

import threading
import time

import pytest

from backend.db import database, transaction
from backend.printing import orders
from tests.factories import make_admin


def _waiting_on_a_lock() -> bool:
    # pg_locks, not pg_stat_activity: the latter is a snapshot fixed for the whole transaction
    return database.execute_sql("SELECT count(*) FROM pg_locks WHERE NOT granted").fetchone()[0] > 0


ACTIONS = {
    "cancel": lambda order, admin: orders.cancel_order(order_code=order.code, reason="doublon", actor_user_id=admin),
    "release": lambda order, admin: orders.release_order(order_code=order.code, actor_user_id=admin),
    "printer_step": lambda order, admin: orders.change_status(
        order_code=order.code, printer_organization_id=order.printer_organization_id, next_status="sent",
        actor_user_id=admin),
}


@pytest.mark.committed
@pytest.mark.parametrize("action", sorted(ACTIONS))
def test_order_changes_lock_the_reservation_before_the_order(request, action):
    with database.connection_context():
        make_print_order = request.getfixturevalue("make_print_order")
        order = make_print_order("draft" if action == "release" else "pending")
        admin_id = make_admin().id
    errors: list[BaseException] = []

    def change() -> None:
        try:
            with database.connection_context():
                ACTIONS[action](order, admin_id)
        except BaseException as exc:  # reported to the test thread
            errors.append(exc)

    with database.connection_context():
        with transaction():  # the deposit's first lock: the reservation
            database.execute_sql("SELECT id FROM reservation WHERE id = %s FOR UPDATE", (order.reservation_id,))
            worker = threading.Thread(target=change)
            worker.start()
            deadline = time.monotonic() + 10
            while not _waiting_on_a_lock():
                assert time.monotonic() < deadline, f"the change never waited on the reservation: {errors}"
                time.sleep(0.01)
            # the deposit's second lock: the order, which the waiting change must not hold yet
            database.execute_sql("SELECT id FROM print_order WHERE id = %s FOR UPDATE NOWAIT", (order.id,))
        worker.join(10)
    assert errors == []
