"""Order lists: the printer list answers every order without `limit` (spec B `{orders}`), and a
list filter takes one value as well as repeated keys, on every query schema."""

from __future__ import annotations

import inspect
import pkgutil
from importlib import import_module

from marshmallow import Schema, fields

import schemas
from backend.printing import order_views
from backend.printing.models import PrintOrder
from backend.printing.orders import cancel_order
from backend.printing.plans import Recipient
from schemas.common import QueryList
from schemas.printing.orders import PrinterPrintOrderListItemOut
from tests.factories import make_admin, signed_in


def test_without_limit_the_printer_list_answers_every_order(client, printer, make_print_order, setting):
    first = make_print_order()
    rows = [{"code": f"PM-{90000 + n}", "reservation_id": setting.reservation().id,
             "printer_organization_id": setting.printer.id, "industrial_organization_id": setting.industrial.id,
             "status": "pending", "id": f"bulk-order-{n:05d}", **Recipient.of_store(setting.store).columns()}
            for n in range(130)]
    PrintOrder.insert_many(rows).execute()
    answer = client.simulate_get("/api/printer/print-orders", headers=printer)
    assert answer.status_code == 200
    assert len(answer.json["data"]["orders"]) == 131 and answer.headers["x-total-count"] == "131"
    assert first.code in {o["code"] for o in answer.json["data"]["orders"]}
    paged = client.simulate_get("/api/printer/print-orders", params={"limit": "10", "offset": "125"}, headers=printer)
    assert len(paged.json["data"]["orders"]) == 6 and paged.headers["x-total-count"] == "131"


def test_a_single_status_filter_is_a_list_of_one(client, printer, make_print_order):
    pending, sent = make_print_order("pending"), make_print_order("sent")
    make_print_order("in_production")
    one = client.simulate_get("/api/printer/print-orders", query_string="status=pending", headers=printer)
    assert one.status_code == 200, one.json
    assert [o["code"] for o in one.json["data"]["orders"]] == [pending.code]
    two = client.simulate_get("/api/printer/print-orders", query_string="status=pending&status=sent",
                              headers=printer)
    assert {o["code"] for o in two.json["data"]["orders"]} == {pending.code, sent.code}
    admin = signed_in(make_admin())
    listed = client.simulate_get("/api/admin/print-orders", query_string="status=sent", headers=admin)
    assert listed.status_code == 200, listed.json
    assert [o["code"] for o in listed.json["data"]["items"]] == [sent.code]
    bad = client.simulate_get("/api/admin/print-orders", query_string="status=shipped", headers=admin)
    assert bad.status_code == 400 and bad.json["error"]["code"] == "VALIDATION_ERROR"


def _query_schemas():
    for module in pkgutil.walk_packages(schemas.__path__, "schemas."):
        for name, value in inspect.getmembers(import_module(module.name), inspect.isclass):
            if issubclass(value, Schema) and name.endswith("Query"):
                yield name, value


def test_every_list_field_of_a_query_schema_takes_a_single_value():
    offenders = [f"{name}.{field}" for name, schema in _query_schemas()
                 for field, declared in schema().fields.items()
                 if isinstance(declared, fields.List) and not isinstance(declared, QueryList)]
    assert offenders == []


def test_each_list_item_is_the_dump_of_its_orders_view(client, printer, setting, sent_batch, make_print_order):
    """The printer list builds its items from plain rows (`order_views.printer_orders`); they are
    exactly what `PrinterPrintOrderListItemOut` dumps of each order's view: twin file names, a
    cancelled batch order (no `batchCode`), an order without a visual, scopes and statuses."""
    batch_code = sent_batch(3)
    alone = make_print_order("sent")
    batch_orders = [o for o in PrintOrder.select().where(PrintOrder.batch_id.is_null(False)).order_by(PrintOrder.code)]
    cancel_order(order_code=batch_orders[0].code, reason="refait", actor_user_id=make_admin().id)
    listed, total = order_views.printer_orders(printer_organization_id=setting.printer.id)
    assert total == 4 and {item["code"] for item in listed} == {alone.code, *(o.code for o in batch_orders)}
    for item in listed:
        view = order_views.printer_order(order_code=item["code"], printer_organization_id=setting.printer.id)
        assert item == PrinterPrintOrderListItemOut().dump(view)
    cancelled = next(item for item in listed if item["code"] == batch_orders[0].code)
    assert cancelled["batchCode"] is None and cancelled["batchId"] is not None
    live = next(item for item in listed if item["code"] == batch_orders[1].code)
    assert live["batchCode"] == batch_code
    assert [line["fileName"] for line in live["lines"]] == ["visuel_qte2.pdf", "visuel_2_qte4.pdf"]
    answer = client.simulate_get("/api/printer/print-orders", headers=printer)
    assert answer.json["data"]["orders"] == listed
    isolated, _ = order_views.printer_orders(printer_organization_id=setting.printer.id, scope="isolated")
    assert [item["code"] for item in isolated] == [alone.code]
    sent, sent_total = order_views.printer_orders(printer_organization_id=setting.printer.id, statuses=["pending"],
                                                  scope="batch", limit=1, offset=1)
    assert len(sent) == 1 and sent_total == 2
    beyond, beyond_total = order_views.printer_orders(printer_organization_id=setting.printer.id, limit=5, offset=10)
    assert beyond == [] and beyond_total == 4
