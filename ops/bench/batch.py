"""`vitrine bench batch`: a print batch over 1,000 stores (1,000 reservations, 3 printable zones).

Measured through the industrial's and printer's API in process (falcon test client, this
process's database connection), each next to a reference written by hand:

- preview (`POST /api/print-batches/{id}/preview`, nothing written), against the statement the
  preview runs to read and classify the selection (`batch_selection.SELECTION`: the reservations
  with their ad space and store, and the reason the batch leaves each out), run by hand on a
  psycopg2 cursor;
- confirmation (`POST .../confirm`: classification, allocation, 1,000 orders, their lines and
  reused faces, the batch sent), against a plain multi-row INSERT of the same rows (a copy, in a
  transaction rolled back);
- status advance of the 1,000 orders (`PATCH /api/printer/print-batches/{code}/status`: groups of
  10 through the single-order service, processed by a real Dramatiq worker), against one UPDATE of
  the same orders (spec B's batch size: the goal bounds the whole advance, not only its ratio).
"""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import replace

import falcon.testing

from api.app import create_app
from backend.db import database, transaction
from backend.marketplace.furniture import ZoneSpec
from backend.printing.batch_selection import SELECTION, Delivery, selection_parameters
from backend.printing.models import DeliveryTarget, PrintOrderBatch
from backend.runtime import current_runtime
from ops.bench import _printing, einvoicing
from ops.bench.report import Figure, Result
from storage import build_storage

NAME = "batch"
VISUAL_BYTES = 1024 * 1024  # the visuals are read by the preflight only: their size is not measured
DESCRIPTION = ("batch of 1,000 stores: preview, confirmation, advance of 1,000 orders; references: "
               "SELECT, multi-row INSERT, one UPDATE")


def _zones():

    return [ZoneSpec("FRONTON", "Fronton", 1, True, 1200, 300), ZoneSpec("JOUE", "Joue", 2, True, 400, 1600),
            ZoneSpec("FACADE", "Façade", 4, True, 900, 450)]


def _select(statement: str, params: dict) -> list[tuple]:
    cursor = database.cursor()
    cursor.execute(statement, params)
    return cursor.fetchall()


def _timed(action) -> tuple[float, object]:
    began = time.perf_counter()
    result = action()
    return (time.perf_counter() - began) * 1000, result


ORDER_COLUMNS = ("id, code, reservation_id, printer_organization_id, industrial_organization_id, batch_id, status, "
                 "created_at, updated_at, delivery_target, recipient_name, recipient_street, recipient_postal_code, "
                 "recipient_city, recipient_country")
LINE_COLUMNS = "order_id, position, zone_id, face_index, quantity, asset_id, qualifiers"
# The confirmation's rows as the copy the reference inserts: new ids, codes out of the way, and
# `cancelled` so that the one-active-order-per-reservation index lets them in.
ORDER_ROWS = ("SELECT md5(id), 'PM-9' || substr(code, 4), reservation_id, printer_organization_id, "
              "industrial_organization_id, batch_id, 'cancelled', created_at, updated_at, delivery_target, "
              "recipient_name, recipient_street, recipient_postal_code, recipient_city, recipient_country "
              "FROM print_order WHERE batch_id = %s ORDER BY code")
LINE_ROWS = ("SELECT md5(l.order_id), l.position, l.zone_id, l.face_index, l.quantity, l.asset_id, l.qualifiers "
             "FROM print_order_line l JOIN print_order o ON o.id = l.order_id WHERE o.batch_id = %s ORDER BY l.id")


def _reinsert_copy(batch_id: str) -> float:
    """Milliseconds to INSERT, in multi-row statements of 1,000, a copy of the confirmation's
    orders and lines (in a transaction rolled back)."""

    tables = (("print_order", ORDER_COLUMNS, ORDER_ROWS), ("print_order_line", LINE_COLUMNS, LINE_ROWS))
    rows = {table: database.execute_sql(select, (batch_id,)).fetchall() for table, _, select in tables}
    cursor = database.cursor()
    began = time.perf_counter()
    with database.atomic() as block:
        for table, columns, _ in tables:
            values = rows[table]
            for start in range(0, len(values), 1_000):
                chunk = values[start:start + 1_000]
                row = "(" + ",".join(["%s"] * len(chunk[0])) + ")"
                statement = f"INSERT INTO {table} ({columns}) VALUES " + ",".join([row] * len(chunk))  # noqa: S608
                cursor.execute(statement, [value for one in chunk for value in one])  # constants and placeholders
        elapsed = (time.perf_counter() - began) * 1000
        block.rollback()
    return elapsed


def run(stack, quick: bool) -> Result:
    stores = 200 if quick else 1_000
    config = replace(current_runtime().config, batch_advance_wait_seconds=600)
    client = falcon.testing.TestClient(create_app(config))
    storage = build_storage(config)
    with database.connection_context():
        with transaction():
            world = _printing.build_world(stores=stores, zones=_zones())
            ids = _printing.approved_reservations(world, stores)
            visuals = _printing.store_visuals(storage, 3, VISUAL_BYTES)
        database.execute_sql("ANALYZE")
        industrial = {"Cookie": f"auth.session_token={world.industrial_token}"}
        printer = {"Cookie": f"auth.session_token={world.printer_token}"}
        opened = client.simulate_post("/api/print-batches", headers=industrial, json={
            "campaignId": world.campaign_id, "promoFurnitureTypeId": world.furniture_type_id})
        batch_id = opened.json["data"]["batch"]["id"]
        for zone, visual in zip(world.zones, visuals, strict=True):
            client.simulate_post(f"/api/print-batches/{batch_id}/upload/preflight-from-asset", headers=industrial,
                                 json={"zoneId": zone.id, "faceIndex": None, "assetId": visual.id})
        body = {"reservationIds": ids, "delivery": {"target": "store"},
                "reuse": [{"zoneId": world.zones[2].id, "quantity": stores}]}  # one Façade face per store in stock

        selection = selection_parameters(PrintOrderBatch.get_by_id(batch_id), ids, Delivery(DeliveryTarget.STORE))
        # The body encoded once, as a client would send it: its encoding is not the server's work.
        encoded, json_headers = json.dumps(body), {**industrial, "Content-Type": "application/json"}
        previews, selects = [], []
        for _ in range(3 if quick else 5):
            ms, answer = _timed(lambda: client.simulate_post(f"/api/print-batches/{batch_id}/preview",
                                                             headers=json_headers, body=encoded))
            assert answer.status_code == 200, answer.text
            previews.append(ms)
            selects.append(_timed(lambda: _select(SELECTION, selection))[0])
        recap = answer.json["data"]["recap"]
        confirm_ms, confirmed = _timed(lambda: client.simulate_post(f"/api/print-batches/{batch_id}/confirm",
                                                                    headers=industrial, json=body))
        assert confirmed.status_code == 201, confirmed.text
        code = confirmed.json["data"]["batch"]["code"]
        insert_ms = _reinsert_copy(batch_id)

        with stack.worker("worker"):
            einvoicing.probe_worker(stack)
            advance_ms, advanced = _timed(lambda: client.simulate_patch(
                f"/api/printer/print-batches/{code}/status", headers=printer, json={"nextStatus": "sent"}))
        assert advanced.status_code == 200, advanced.text
        counters = advanced.json["data"]
        update_ms, _ = _timed(lambda: database.execute_sql(
            "UPDATE print_order SET status = 'in_production', updated_at = now() "
            "WHERE batch_id = %s AND status = 'sent'", (batch_id,)))

    orders = recap["ordersToCreate"]
    counters = {name: counters[name] for name in ("advanced", "skipped", "failed")}
    ok = counters == {"advanced": orders, "skipped": 0, "failed": 0} and orders == stores
    return Result(
        title=f"print batch over {stores:,} stores, 3 zones (7 faces, 1 in stock), {orders:,} orders",
        reference="preview: the selection's SELECT (the preview's own statement, by hand); confirmation: a "
                  "multi-row INSERT of the same orders and lines; advance: one UPDATE of the same orders",
        settings=[
            "API in process (falcon test client), one PostgreSQL connection; advance processed by "
            f"{stack.worker_settings}, groups of {config.advance_status_concurrency}",
        ],
        figures=[
            Figure("preview p50 (ms)", statistics.median(previews), statistics.median(selects)),
            Figure("confirmation (ms)", confirm_ms, insert_ms),
            Figure(f"advance of {orders:,} orders (ms)", advance_ms, update_ms),
        ],
        checks=[
            f"recap: {recap['selectedPlacements']:,} selected, {orders:,} orders, {recap['panelsToPrint']:,} panels "
            f"(expected {stores * 6:,})",
            f"advance counters: {counters} (expected {orders:,} advanced, none skipped or failed)",
        ],
        ok=ok and recap["panelsToPrint"] == stores * 6,
    )
