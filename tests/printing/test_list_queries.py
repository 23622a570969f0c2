"""Order lists: the printer list answers every order without `limit` (spec B `{orders}`), and a
list filter takes one value as well as repeated keys, on every query schema."""

from __future__ import annotations

import inspect
import pkgutil
from importlib import import_module

from marshmallow import Schema, fields

import schemas
from backend.printing.models import PrintOrder
from backend.printing.plans import Recipient
from schemas.common import QueryList
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
                 for field, declared in schema._declared_fields.items()
                 if isinstance(declared, fields.List) and not isinstance(declared, QueryList)]
    assert offenders == []
