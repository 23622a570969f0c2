"""Print order codes, printer status changes (locked, scoped, recorded) and order metrics."""

import threading
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from peewee import IntegrityError

from backend.clock import frozen_at
from backend.db import database
from backend.errors import NotFound, ValidationError
from backend.printing.models import PrintOrder, PrintOrderLine, PrintOrderStatusChange
from backend.printing.orders import allocate_order_codes, change_status, order_metrics, rollback_status
from tests.factories import make_organization

MOMENT = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)


def changes(order):
    rows = PrintOrderStatusChange.select().where(PrintOrderStatusChange.order == order).order_by(
        PrintOrderStatusChange.id
    )
    return [(c.from_status, c.to_status, c.actor_user_id) for c in rows]


# --- codes -----------------------------------------------------------------------------------


@pytest.mark.owner  # setval: the runtime role only draws from the sequence
def test_codes_come_from_the_sequence_zero_padded_to_four_digits():
    first = allocate_order_codes(1)[0]
    second = allocate_order_codes(1)[0]
    assert first.startswith("PM-") and len(first) >= 7
    assert int(second[3:]) == int(first[3:]) + 1
    database.execute_sql("SELECT setval('print_order_code_seq', 9999)")
    assert allocate_order_codes(1)[0] == "PM-10000"
    database.execute_sql("SELECT setval('print_order_code_seq', 6, true)")
    assert allocate_order_codes(1)[0] == "PM-0007"


def test_a_code_is_unique(make_print_order):
    order = make_print_order()
    with pytest.raises(IntegrityError), database.atomic():
        PrintOrder.create(code=order.code, reservation_id=order.reservation_id,
                          printer_organization_id=order.printer_organization_id,
                          industrial_organization_id=order.industrial_organization_id, status="cancelled")


def test_the_status_column_refuses_unknown_values(make_print_order):
    order = make_print_order()
    with pytest.raises(IntegrityError), database.atomic():
        PrintOrder.update(status="shipped").where(PrintOrder.id == order.id).execute()


def test_a_reservation_has_one_active_order_at_a_time(make_print_order):
    order = make_print_order()
    fields = dict(reservation_id=order.reservation_id, printer_organization_id=order.printer_organization_id,
                  industrial_organization_id=order.industrial_organization_id, delivery_target="none")
    with pytest.raises(IntegrityError), database.atomic():
        PrintOrder.create(code=allocate_order_codes(1)[0], status="draft", **fields)
    PrintOrder.update(status="cancelled").where(PrintOrder.id == order.id).execute()
    assert PrintOrder.create(code=allocate_order_codes(1)[0], status="draft", **fields).status == "draft"


def test_a_deposit_slot_holds_one_line(setting, make_print_order):
    order = make_print_order(lines=[{"zone": setting.zones[0], "quantity": 2}])
    with pytest.raises(IntegrityError), database.atomic():
        PrintOrderLine.create(order=order, position=1, zone_id=setting.zones[0].id, quantity=2)
    order = make_print_order(lines=[{"zone": setting.zones[1], "quantity": 1, "face_index": 0}])
    with pytest.raises(IntegrityError), database.atomic():
        PrintOrderLine.create(order=order, position=1, zone_id=setting.zones[1].id, face_index=0, quantity=1)
    PrintOrderLine.create(order=order, position=1, zone_id=setting.zones[1].id, face_index=1, quantity=1)


# --- status changes --------------------------------------------------------------------------


def test_the_printer_moves_an_order_forward_and_each_change_is_recorded(setting, make_print_order):
    order = make_print_order("pending")
    with frozen_at(MOMENT):
        moved = change_status(order_code=order.code, printer_organization_id=setting.printer.id,
                              next_status="sent", actor_user_id=setting.printer_user.id)
    assert moved.status == "sent"
    stored = PrintOrder.get_by_id(order.id)
    assert stored.status == "sent" and stored.updated_at == MOMENT
    change_status(order_code=order.code, printer_organization_id=setting.printer.id,
                  next_status="in_production", actor_user_id=setting.printer_user.id)
    user = setting.printer_user.id
    assert changes(order) == [("pending", "sent", user), ("sent", "in_production", user)]
    row = PrintOrderStatusChange.select().where(PrintOrderStatusChange.order == order).order_by(
        PrintOrderStatusChange.id).first()
    assert row.changed_at == MOMENT


def test_a_skipped_step_is_a_validation_error_and_changes_nothing(setting, make_print_order):
    order = make_print_order("pending")
    with pytest.raises(ValidationError) as refused:
        change_status(order_code=order.code, printer_organization_id=setting.printer.id,
                      next_status="produced", actor_user_id=setting.printer_user.id)
    assert refused.value.details == {"currentStatus": "pending", "requestedStatus": "produced"}
    assert PrintOrder.get_by_id(order.id).status == "pending" and changes(order) == []


@pytest.mark.parametrize("status", ["cancelled", "delivered"])
def test_cancelled_and_delivered_orders_do_not_move_forward(setting, make_print_order, status):
    order = make_print_order(status)
    with pytest.raises(ValidationError):
        change_status(order_code=order.code, printer_organization_id=setting.printer.id,
                      next_status="sent", actor_user_id=setting.printer_user.id)


def test_rollback_moves_one_step_back_and_is_recorded(setting, make_print_order):
    order = make_print_order("delivered")
    back = rollback_status(order_code=order.code, printer_organization_id=setting.printer.id,
                           actor_user_id=setting.printer_user.id)
    assert back.status == "produced" == PrintOrder.get_by_id(order.id).status
    assert changes(order) == [("delivered", "produced", setting.printer_user.id)]


def test_rollback_of_a_pending_order_is_refused(setting, make_print_order):
    order = make_print_order("pending")
    with pytest.raises(ValidationError):
        rollback_status(order_code=order.code, printer_organization_id=setting.printer.id,
                        actor_user_id=setting.printer_user.id)
    assert changes(order) == []


def test_another_printers_order_is_not_found(setting, make_print_order):
    order = make_print_order("pending")
    other = make_organization("printer")
    with pytest.raises(NotFound):
        change_status(order_code=order.code, printer_organization_id=other.id, next_status="sent",
                      actor_user_id=setting.printer_user.id)
    with pytest.raises(NotFound):
        rollback_status(order_code=order.code, printer_organization_id=other.id,
                        actor_user_id=setting.printer_user.id)
    assert PrintOrder.get_by_id(order.id).status == "pending"


def test_an_unknown_code_is_not_found(setting):
    with pytest.raises(NotFound):
        change_status(order_code="PM-999999", printer_organization_id=setting.printer.id, next_status="sent",
                      actor_user_id=setting.printer_user.id)


def test_a_draft_is_not_the_printers_yet(setting, make_print_order):
    order = make_print_order("draft")
    with pytest.raises(NotFound):
        change_status(order_code=order.code, printer_organization_id=setting.printer.id, next_status="pending",
                      actor_user_id=setting.printer_user.id)


@pytest.mark.committed
def test_concurrent_changes_apply_one_after_the_other(setting_committed):
    """Two printers' clicks on `sent` at once: the row lock makes the second see `sent` and fail."""
    code, printer_id, user_id = setting_committed
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def click():
        with database.connection_context():
            barrier.wait()
            try:
                change_status(order_code=code, printer_organization_id=printer_id, next_status="sent",
                              actor_user_id=user_id)
                outcomes.append("moved")
            except ValidationError:
                outcomes.append("refused")

    threads = [threading.Thread(target=click) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["moved", "refused"]
    with database.connection_context():
        order = PrintOrder.get(PrintOrder.code == code)
        assert order.status == "sent" and len(changes(order)) == 1


@pytest.fixture
def setting_committed(request):
    """A committed pending order (threads use their own connections and must see it)."""
    with database.connection_context():
        setting = request.getfixturevalue("setting")
        order = request.getfixturevalue("make_print_order")("pending")
        return order.code, setting.printer.id, setting.printer_user.id


# --- metrics ---------------------------------------------------------------------------------


@dataclass
class Line:
    zone_id: str
    quantity: int


def test_metrics_count_lines_panels_and_surface_quantity_times():
    sizes = {"fronton": (1000, 300), "joue": (400, 1200)}
    lines = [Line("fronton", 2), Line("joue", 1), Line("joue", 1), Line("joue", 1)]
    metrics = order_metrics(lines, sizes)
    assert metrics.files_count == 4
    assert metrics.panel_count == 5
    assert metrics.total_surface_m2 == pytest.approx(2 * 0.3 + 3 * 0.48)


def test_metrics_of_no_line_are_zero():
    metrics = order_metrics([], {})
    assert (metrics.files_count, metrics.panel_count, metrics.total_surface_m2) == (0, 0, 0)


def test_surface_is_rounded_once_at_the_end():
    lines = [Line("small", 3)]
    assert order_metrics(lines, {"small": (105, 148)}).total_surface_m2 == 0.047  # 3 x 0.01554


def test_metrics_read_model_lines(setting, make_print_order):
    order = make_print_order(lines=[{"zone": setting.zones[0], "quantity": 2},
                                    {"zone": setting.zones[1], "quantity": 1, "face_index": 0}])
    sizes = {z.id: (z.width_mm, z.height_mm) for z in setting.zones}
    metrics = order_metrics(list(order.lines), sizes)
    assert (metrics.files_count, metrics.panel_count, metrics.total_surface_m2) == (2, 3, 1.08)
