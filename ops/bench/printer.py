"""`vitrine bench printer`: the printer's order list over 10,000 orders, and the ZIP download of an
order with 50 visuals of 20 MB.

1. Order list: the first page of 100, or a page further down (random offset), of a printer holding
   10,000 orders of three lines each, most recently updated first. Three ways, alternated request by
   request: through the API in process (`GET /api/printer/print-orders` with a session cookie,
   falcon test client), the service alone (`order_views.printer_orders`: the page and its lines,
   two statements, and the views), and the reference: the same two statements written by hand on
   the same connection.
2. ZIP: the order's archive downloaded over HTTP from gunicorn (production settings) by a
   streaming client: MB/s, and the peak resident memory of the web processes (VmHWM), next to a
   bare WSGI app under the same gunicorn streaming the same blobs back to back.
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import falcon.testing

from api.app import create_app
from backend.db import database, transaction
from backend.marketplace import furniture
from backend.marketplace.furniture import ZoneSpec
from backend.marketplace.models import FurnitureZone, Reservation
from backend.model import new_id
from backend.printing import order_views
from backend.printing.models import PrintOrder, PrintOrderLine
from backend.printing.orders import allocate_order_code
from backend.runtime import current_runtime
from ops.bench import _printing
from ops.bench.report import Figure, Result
from ops.bench.stack import process_tree_peak_rss_mb

NAME = "printer"
DESCRIPTION = ("printer order list over 10,000 orders (reference: raw SQL) and ZIP download of 50 x 20 MB "
               "(reference: bare gunicorn app streaming the same files)")
# The best statements (EXPLAIN (ANALYZE, BUFFERS) in docs/benchmarks.md): the page's ids and order from
# the index `print_order_printer_list` alone, then, for a page, each row probed through the primary
# keys and the total read from the printer's tally (migration 164) in the same statement; for the whole
# list, hash joins and no count.
_PAGE = """
WITH page AS (
    SELECT o.id, o.updated_at FROM print_order o
     WHERE o.printer_organization_id = %s AND o.status <> 'draft'
     ORDER BY o.updated_at DESC, o.id DESC LIMIT %s OFFSET %s)
SELECT o.id, o.code, o.status, CASE WHEN o.status = 'cancelled' THEN NULL ELSE b.code END, o.batch_id, r.campaign_id,
       r.campaign_name, i.legal_name, r.store_name, r.store_city, o.delivery_target,
       to_char(o.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
       to_char(o.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), {total}
FROM page
{orders}
JOIN organization i ON i.id = o.industrial_organization_id
LEFT JOIN print_order_batch b ON b.id = o.batch_id
ORDER BY page.updated_at DESC, page.id DESC
"""
_RESERVATIONS = """SELECT r.id, r.campaign_id, c.name AS campaign_name, s.name AS store_name, s.city AS store_city
FROM reservation r JOIN campaign c ON c.id = r.campaign_id JOIN ad_space a ON a.id = r.ad_space_id
JOIN store s ON s.id = a.store_id"""
PAGE_SQL = _PAGE.format(
    total="""(SELECT COALESCE(SUM(t.orders), 0)::bigint FROM print_order_tally t
 WHERE t.printer_organization_id = %s AND t.status <> 'draft')""",
    orders=f"""CROSS JOIN LATERAL (SELECT * FROM print_order o WHERE o.id = page.id OFFSET 0) o
CROSS JOIN LATERAL ({_RESERVATIONS} WHERE r.id = o.reservation_id OFFSET 0) r""")  # noqa: S608 (constants only)
WHOLE_SQL = _PAGE.format(total="NULL", orders=f"""JOIN print_order o ON o.id = page.id
JOIN ({_RESERVATIONS}) r ON r.id = o.reservation_id""")
LINES_SQL = """
SELECT l.order_id, l.position, l.zone_id, z.code, z.label, z.width_mm, z.height_mm, l.face_index, l.quantity,
       l.asset_id, a.technical_name
FROM print_order_line l
JOIN furniture_zone z ON z.id = l.zone_id
LEFT JOIN print_asset a ON a.id = l.asset_id
WHERE l.order_id = ANY(ARRAY(SELECT unnest(%s::text[])))
"""
STATUSES = ("pending", "sent", "in_production", "produced", "delivered", "cancelled")


def _orders(world, reservation_ids: list[str], assets) -> None:


    fronton, joue, _ = world.zones
    began = datetime(2026, 11, 2, tzinfo=UTC)
    orders, lines = [], []
    for n, reservation_id in enumerate(reservation_ids):
        order_id = new_id()
        moment = began + timedelta(seconds=n)
        orders.append({"id": order_id, "code": f"PM-{n + 1:05d}", "reservation_id": reservation_id,
                       "printer_organization_id": _printing.PRINTER,
                       "industrial_organization_id": _printing.INDUSTRIAL, "status": STATUSES[n % len(STATUSES)],
                       "cancel_reason": "bench" if n % len(STATUSES) == len(STATUSES) - 1 else None,
                       "delivery_target": "none", "created_at": moment, "updated_at": moment})
        lines += [
            {"order": order_id, "position": 0, "zone_id": fronton.id, "face_index": None, "quantity": 2,
             "asset_id": assets[0].id, "qualifiers": ["face 1", "face 2"]},
            {"order": order_id, "position": 1, "zone_id": joue.id, "face_index": 0, "quantity": 1,
             "asset_id": assets[1].id, "qualifiers": ["face 1"]},
            {"order": order_id, "position": 2, "zone_id": joue.id, "face_index": 1, "quantity": 1,
             "asset_id": assets[2].id, "qualifiers": ["face 2"]},
        ]
    for start in range(0, len(orders), 1_000):
        PrintOrder.insert_many(orders[start:start + 1_000]).execute()
    for start in range(0, len(lines), 3_000):
        PrintOrderLine.insert_many(lines[start:start + 3_000]).execute()
    database.execute_sql("SELECT setval('print_order_code_seq', %s)", (len(orders) + 1,))


def _list_figures(world, requests_count: int, total: int, whole_runs: int):


    client = falcon.testing.TestClient(create_app(current_runtime().config))
    headers = {"Cookie": f"auth.session_token={world.printer_token}"}
    rng = random.Random(5)
    offsets = [0 if n % 2 == 0 else rng.randrange(0, total // 100) * 100 for n in range(requests_count)]

    def api(offset, limit=100):
        params = {"offset": offset} if limit is None else {"limit": limit, "offset": offset}
        answer = client.simulate_get("/api/printer/print-orders", headers=headers, params=params)
        assert answer.status_code == 200, answer.text
        return lambda: [o["code"] for o in answer.json["data"]["orders"]]  # decoded once timed: the client's cost

    def service(offset, limit=100):
        orders, _ = order_views.printer_orders(printer_organization_id=_printing.PRINTER, limit=limit, offset=offset)
        return lambda: [order["code"] for order in orders]

    def raw(offset, limit=100):
        if limit is None:
            rows = database.execute_sql(WHOLE_SQL, (_printing.PRINTER, limit, offset)).fetchall()
        else:
            rows = database.execute_sql(PAGE_SQL, (_printing.PRINTER, limit, offset, _printing.PRINTER)).fetchall()
        database.execute_sql(LINES_SQL, ([row[0] for row in rows],)).fetchall()
        return lambda: [row[1] for row in rows]

    def measure(runs, timings, limit):
        mismatches = 0
        for offset in runs:
            pages = []
            for name, action in (("raw", raw), ("service", service), ("api", api)):
                began = time.perf_counter()
                codes = action(offset, limit)
                timings[name].append((time.perf_counter() - began) * 1000)
                pages.append(codes())
            mismatches += not (pages[0] == pages[1] == pages[2])
        return mismatches

    timings: dict[str, list[float]] = {"api": [], "service": [], "raw": []}
    for offset in offsets[:6]:  # warm-up
        api(offset), service(offset), raw(offset)
    mismatches = measure(offsets, timings, 100)
    whole: dict[str, list[float]] = {"api": [], "service": [], "raw": []}
    mismatches += measure([0] * whole_runs, whole, None)
    p50 = {name: statistics.median(values) for name, values in timings.items()}
    p99 = {name: sorted(values)[max(0, int(len(values) * 0.99) - 1)] for name, values in timings.items()}
    figures = [
        Figure("list API p50 (ms)", p50["api"], p50["raw"]),
        Figure("list API p99 (ms)", p99["api"], p99["raw"]),
        Figure("list service p50 (ms)", p50["service"], p50["raw"], summary=False),
        Figure("list service p99 (ms)", p99["service"], p99["raw"], summary=False),
        Figure("whole list (ms)", statistics.median(whole["api"]), statistics.median(whole["raw"])),
        Figure("whole list service (ms)", statistics.median(whole["service"]), statistics.median(whole["raw"]),
               summary=False),
    ]
    return figures, mismatches


def _zip_order(world, visuals) -> str:
    """An order whose 50 lines each hold one of the visuals (one face each of a wide zone)."""

    wall = furniture.create_furniture_type(name="Mur d'images", printer_organization_id=_printing.PRINTER, zones=[
        ZoneSpec("mur", "Mur", len(visuals), True, 800, 1200)])
    zone = FurnitureZone.get(FurnitureZone.furniture_type_version == wall.id)
    reservation_id = _printing.approved_reservations(world, 1, impression_status="locked")[0]
    Reservation.update(furniture_type_version=wall.id).where(Reservation.id == reservation_id).execute()
    order = PrintOrder.create(code=allocate_order_code(), reservation_id=reservation_id, status="sent",
                              printer_organization_id=_printing.PRINTER, delivery_target="none",
                              industrial_organization_id=_printing.INDUSTRIAL)
    PrintOrderLine.insert_many([
        {"order": order.id, "position": n, "zone_id": zone.id, "face_index": n, "quantity": 1, "asset_id": asset.id}
        for n, asset in enumerate(visuals)
    ]).execute()
    return order.code


def run(stack, quick: bool) -> Result:

    total_orders = 2_000 if quick else 10_000
    visuals_count, visual_mb = (10, 5) if quick else (50, 20)
    storage = current_runtime().storage
    with database.connection_context():
        with transaction():
            world = _printing.build_world(stores=1_000, zones=_zones())
            small = _printing.store_visuals(storage, 3, 64 * 1024)
            _orders(world, _printing.approved_reservations(world, total_orders, impression_status="locked"), small)
        database.execute_sql("VACUUM (ANALYZE) print_order, print_order_line")  # as autovacuum leaves them
        database.execute_sql("ANALYZE")
        figures, mismatches = _list_figures(world, 60 if quick else 200, total_orders, 3 if quick else 7)
        with transaction():
            visuals = _printing.store_visuals(storage, visuals_count, visual_mb * 1024 * 1024)
            code = _zip_order(world, visuals)
    listing = Path(tempfile.mkdtemp(prefix="bench-zip-")) / "keys.txt"
    listing.write_text("\n".join(v.storage_key for v in visuals))
    headers = {"Cookie": f"auth.session_token={world.printer_token}"}
    rounds = 1 if quick else 2
    speeds: dict[str, list[float]] = {"vitrine": [], "reference": []}
    peaks: dict[str, float] = {}
    growth: dict[str, float] = {}
    sizes: dict[str, int] = {}
    for _ in range(rounds):
        for name, app in (("vitrine", "api.app:create_app()"), ("reference", "ops.bench._zip_reference:app()")):
            with stack.serve(app, name=f"zip-{name}", env={"BENCH_ZIP_KEYS": str(listing)}) as server:
                path = f"/api/printer/print-orders/{code}/download" if name == "vitrine" else "/blobs"
                _printing.download(server.url + path, headers)  # warm-up: first request, page cache
                before = process_tree_peak_rss_mb(server.pid)
                size, seconds = _printing.download(server.url + path, headers)
                speeds[name].append(size / seconds / 1e6)
                sizes[name] = size
                peak = process_tree_peak_rss_mb(server.pid)
                peaks[name] = max(peaks.get(name, 0.0), peak)
                growth[name] = max(growth.get(name, 0.0), peak - before)
    payload = visuals_count * visual_mb * 1024 * 1024
    figures += [
        Figure("ZIP download (MB/s)", statistics.median(speeds["vitrine"]), statistics.median(speeds["reference"])),
        Figure("web peak RSS (MB)", peaks["vitrine"], peaks["reference"]),
        Figure("web peak RSS growth in the download (MB)", growth["vitrine"], growth["reference"], summary=False),
    ]
    zip_ok = sizes["vitrine"] > payload and sizes["reference"] == payload
    return Result(
        title=f"printer order list over {total_orders:,} orders; ZIP of {visuals_count} x {visual_mb} MB",
        reference="list: the same two SELECTs by hand on the same connection; ZIP: a bare WSGI app streaming the "
                  "same files (ops/bench/_zip_reference.py) under the same gunicorn",
        settings=[
            "list: in process, falcon.testing client, pages of 100 (half the first page, half a random page), then the "
            "whole list (no limit)",
            f"ZIP: {stack.web_settings}, one streaming client, {rounds} round(s) alternated",
            "peak RSS: the highest VmHWM of the gunicorn master and workers (the app's baseline included); growth: "
            "its rise during the measured download, after a warm-up download",
        ],
        figures=figures,
        checks=[f"list pages that differ between API, service and SQL: {mismatches} (expected 0)",
                f"bytes downloaded: vitrine {sizes['vitrine']:,} (> {payload:,}: entries plus ZIP framing), "
                f"reference {sizes['reference']:,}"],
        ok=mismatches == 0 and zip_ok,
    )


def _zones():

    return [ZoneSpec("FRONTON", "Fronton", 2, True, 1000, 300), ZoneSpec("JOUE", "Joue", 2, True, 400, 1200),
            ZoneSpec("SOCLE", "Socle", 1, False, 1000, 150)]
