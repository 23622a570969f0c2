"""`vitrine bench growth`: the cost of the same work on a small and on a large database, in the
same run (issue 36, "Cost as the data grows"). A platform's tables only grow: a figure that holds
on a fresh database and not after two years of history is a defect.

The two databases (`_growth_data`: built once per bench data directory by bulk SQL, then kept
and reused; each run measures a copy of each, one after the other) hold, small / large:
1,000 / 1,000,000 issued sale invoices with their journal entries, over 100 / 100,000
organizations; 10,000 / 1,000,000 reservations; 10,000 / 100,000 print orders of one printer;
100 / 10,000 open e-invoicing transmissions (`--quick`: smaller large sizes, see `QUICK`).

Measured on each, in process (falcon test client, one request at a time, the same code and
settings on both), the value on the large database next to the small one's (the reference):
- a collection `POST /api/billing/reservations/{id}/collect` (p50), into the same invoice series
  as the history's and posting to the same journals;
- `GET /api/billing/invoices?limit=50` and the download of one of its invoices for the
  organization of the 60 first invoices (p50 each);
- the printer's order list `GET /api/printer/print-orders?limit=100`, first page (p50);
- the self-billing pass's selection of its due reservations (`scheduler.candidates`, p50):
  100 due reservations on both;
- an e-invoicing polling pass (`polling.run_pass`) against the operator simulator holding a flow
  per open transmission: the operator calls of the catch-up pass (every flow changed since the
  oldest open transmission), then of a pass after 50 flows changed (goal: bounded by the changes,
  not by the open transmissions).
"""

from __future__ import annotations

import hashlib
import math
import statistics
import time
from datetime import UTC, datetime

from ops.bench import _growth_data
from ops.bench._growth_data import Sizes
from ops.bench.report import SHARED_CORES_NOTE, Figure, Result

NAME = "growth"
DESCRIPTION = ("collection, invoice list and download, printer list, self-billing selection and polling on a "
               "database of 1,000,000 invoices vs 1,000 (kept between runs); reference: the small database")
SMALL = Sizes(organizations=100, reservations=10_000, invoices=1_000, orders=10_000, transmissions=100)
FULL = Sizes(organizations=100_000, reservations=1_000_000, invoices=1_000_000, orders=100_000, transmissions=10_000)
QUICK = Sizes(organizations=2_000, reservations=20_000, invoices=20_000, orders=20_000, transmissions=10_000)
CHANGED = 50  # flows the operator changes between two polling passes
# The day the requests are made on (the domain's clock, `clock.frozen_at`), so that a kept database
# measures the same later on: its due reservations ended in 2026, the others start in 2027, and its
# invoices' series is 2026's.
AS_OF = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def run(stack, quick: bool) -> Result:
    from backend.billing.parties import platform_party
    from ops.bench.billing import _load_average
    from ops.bench.stack import BENCH_DATABASE

    sizes = {"small": SMALL, "large": QUICK if quick else FULL}
    repeats, collections = (15, 30) if quick else (60, 150)
    load_before = _load_average()
    built: dict[str, tuple[str, float] | None] = {}
    for label, size in sizes.items():
        built[label] = _growth_data.persisted(
            stack.admin_url, _database_name(label, size), _marker(size), work=BENCH_DATABASE, fresh=stack.fresh,
            fill=lambda size=size: _fill(size, platform_party(stack.config)), migrate=_migrate)
    measured, copies = {}, {}
    for label, size in sizes.items():
        copies[label] = _growth_data.copy_into(stack.admin_url, _database_name(label, size), BENCH_DATABASE)
        measured[label] = _measure(size, repeats=repeats, collections=collections)
    load_after = _load_average()
    small, large = measured["small"], measured["large"]
    figures = [
        Figure("collection p50 (ms)", large["collection"], small["collection"]),
        Figure("invoice list p50 (ms)", large["list"], small["list"]),
        Figure("invoice download p50 (ms)", large["download"], small["download"]),
        Figure("printer order list p50 (ms)", large["orders"], small["orders"]),
        Figure("self-billing selection p50 (ms)", large["selection"], small["selection"]),
        Figure("operator calls per polling pass after 50 changes", large["calls"], small["calls"]),
        Figure("operator calls of the catch-up polling pass", large["catch_up"], small["catch_up"], summary=False),
        Figure("polling pass after 50 changes (ms)", large["pass_ms"], small["pass_ms"], summary=False),
    ]
    checks = [line for label in sizes for line in measured[label]["checks"]]
    return Result(
        title=f"the same work on a database of {sizes['large'].invoices:,} invoices vs {SMALL.invoices:,}",
        reference=f"the small database ({_describe(SMALL)}), measured in the same run",
        settings=[
            f"large: {_describe(sizes['large'])}",
            "in process, falcon.testing client, one request at a time: "
            f"{repeats} of each read after 3 warm-ups, {collections} collections after 10",
            "databases built once per bench data directory (bulk SQL, every trigger and constraint on), kept "
            "with a marker (build version, migrations, sizes); a copy of each measured per run",
        ],
        figures=figures,
        checks=checks,
        notes=[*(f"{label} database: " + (f"{done[0]} in {done[1]:.1f} s" if done else "kept (built before)")
                 + f", copied for this run in {copies[label]:.1f} s" for label, done in built.items()),
               f"load average (1, 5, 15 min): {load_before} before, {load_after} after", SHARED_CORES_NOTE],
        ok=all(measured[label]["ok"] for label in sizes),
    )


def _database_name(label: str, size: Sizes) -> str:
    return f"vitrine_growth_{label}_{size.invoices}"


def _marker(size: Sizes) -> str:
    from backend.db import database

    with database.connection_context():
        return _growth_data.marker(size)


def _fill(size: Sizes, platform: dict) -> None:
    from backend.db import database

    with database.connection_context():
        _growth_data.build(size, platform=platform)
        database.execute_sql("VACUUM ANALYZE")  # as autovacuum leaves a table that grew over two years


def _migrate() -> None:
    from backend.db import database
    from backend.migrate import apply_migrations

    with database.connection_context():
        apply_migrations()
        database.execute_sql("ANALYZE")


def _describe(size: Sizes) -> str:
    return (f"{size.invoices:,} invoices over {size.organizations:,} organizations, {size.reservations:,} "
            f"reservations, {size.orders:,} print orders, {size.transmissions:,} open transmissions")


def _measure(size: Sizes, *, repeats: int, collections: int) -> dict:
    import falcon.testing

    from api.app import create_app
    from backend import clock
    from backend.db import database
    from backend.runtime import current_runtime

    figures: dict = {"checks": [], "ok": True}
    label = f"{size.invoices:,} invoices"
    with database.connection_context():
        client = falcon.testing.TestClient(create_app(current_runtime().config))
        with clock.frozen_at(AS_OF):
            figures["selection"], due = _selection(repeats)
            figures["checks"].append(f"{label}: due reservations selected {due} (expected {_growth_data.DUE})")
            figures["ok"] &= due == _growth_data.DUE
            figures.update(_invoices(client, repeats, figures))
            figures["orders"] = _orders(client, repeats, figures, size)
            figures["collection"] = _collections(client, collections, figures, size)
        figures.update(_polling(size, figures))  # the operator's clock and ours: real time
    return figures


def _timed(action, repeats: int, warmups: int = 3) -> tuple[float, object]:
    """p50 of `action()` in ms over `repeats` calls after `warmups`; its last answer."""
    for _ in range(warmups):
        action()
    timings, answer = [], None
    for _ in range(repeats):
        began = time.perf_counter()
        answer = action()
        timings.append((time.perf_counter() - began) * 1000)
    return statistics.median(timings), answer


def _selection(repeats: int) -> tuple[float, int]:
    from backend.billing.self_billing import scheduler

    p50, ids = _timed(scheduler.candidates, repeats)
    return p50, len(ids)


def _session(email: str, organization_id: str) -> dict:
    from backend.identity.models import User
    from backend.identity.sessions import open_session

    token = open_session(User.get(User.email == email), ttl_days=1, active_organization_id=organization_id)
    return {"Cookie": f"auth.session_token={token}"}


def _invoices(client, repeats: int, figures: dict) -> dict:
    """The measured organization's invoice list and one of its PDFs (stored now: the copy's PDFs
    are this run's)."""
    from backend.billing.models import Invoice
    from backend.db import transaction
    from backend.einvoicing.lifecycle import INVOICE_PDF_CONTEXT
    from backend.runtime import current_runtime
    from ops.bench import _printing
    from ops.simulators.esign_store import minimal_pdf

    numbers = _growth_data.own_invoice_numbers()
    storage = current_runtime().storage
    with transaction():
        for number in numbers:
            pdf, key = minimal_pdf(number), f"billing/invoices/{number}.pdf"
            storage.put_bytes(INVOICE_PDF_CONTEXT, key, pdf, "application/pdf")
            Invoice.update(pdf_storage_key=key, pdf_sha256=hashlib.sha256(pdf).hexdigest()).where(
                Invoice.number == number).execute()
    headers = _session("bench-industrial@example.com", _printing.INDUSTRIAL)

    def listing():
        answer = client.simulate_get("/api/billing/invoices", headers=headers, params={"limit": 50})
        return answer.status_code, [item["invoiceNumber"] for item in answer.json["data"]["items"]]

    def download():
        answer = client.simulate_get(f"/api/billing/invoices/{numbers[-1]}/download", headers=headers)
        return answer.status_code, len(answer.content)

    list_p50, (status, listed) = _timed(listing, 2 * (repeats // 2))
    download_p50, (download_status, size) = _timed(download, 2 * (repeats // 2))
    expected = sorted(numbers, reverse=True)[:50]
    ok = status == 200 and listed == expected and download_status == 200 and size > 0
    figures["ok"] &= ok
    figures["checks"].append(f"invoice list: {status}, {len(listed)} invoices, the organization's 50 latest "
                             f"{'in order' if listed == expected else 'NOT AS EXPECTED'}; download: {download_status}, "
                             f"{size:,} bytes")
    return {"list": list_p50, "download": download_p50}


def _orders(client, repeats: int, figures: dict, size: Sizes) -> float:
    from ops.bench import _printing

    headers = _session("bench-printer@example.com", _printing.PRINTER)

    def first_page():
        answer = client.simulate_get("/api/printer/print-orders", headers=headers, params={"limit": 100})
        return answer.status_code, len(answer.json["data"]["orders"])

    p50, (status, count) = _timed(first_page, repeats)
    ok = status == 200 and count == min(100, size.orders)
    figures["ok"] &= ok
    figures["checks"].append(f"printer order list over {size.orders:,} orders: {status}, {count} on the first page")
    return p50


def _collections(client, count: int, figures: dict, size: Sizes) -> float:
    """`count` collections (after 10 more, warm-up) of reservations added now to the measured
    industrial; their invoices continue the history's series."""
    from backend.billing.models import Invoice
    from ops.bench.billing import _populate

    warmups = 10
    ids, token = _populate(warmups + count)
    headers = {"Cookie": f"auth.session_token={token}", "Content-Type": "application/json"}
    statuses: list[int] = []

    def collect(reservation_id: str) -> None:
        answer = client.simulate_post(f"/api/billing/reservations/{reservation_id}/collect",
                                      body=b'{"paymentMethod": "bank_transfer"}',
                                      headers={**headers, "Idempotency-Key": f"growth-{reservation_id}"})
        statuses.append(answer.status_code)

    for reservation_id in ids[:warmups]:
        collect(reservation_id)
    timings = []
    for reservation_id in ids[warmups:]:
        began = time.perf_counter()
        collect(reservation_id)
        timings.append((time.perf_counter() - began) * 1000)
    sequences = [s for (s,) in Invoice.select(Invoice.sequence).where(Invoice.series == _growth_data.SERIES)
                 .where(Invoice.sequence > size.invoices).order_by(Invoice.sequence).tuples()]
    gapless = sequences == list(range(size.invoices + 1, size.invoices + warmups + count + 1))
    ok = statuses == [200] * (warmups + count) and gapless
    figures["ok"] &= ok
    figures["checks"].append(
        f"collections after {size.invoices:,} invoices: {statuses.count(200)} of {warmups + count} answered 200, "
        f"numbered {size.invoices + 1:,}..{size.invoices + len(sequences):,} "
        f"{'gapless' if gapless else 'WITH A GAP'} in {_growth_data.SERIES}")
    return statistics.median(timings)


def _polling(size: Sizes, figures: dict) -> dict:
    """A catch-up pass, then a pass after `CHANGED` flows changed, against the operator simulator
    holding a `Pending` flow per open transmission (as the dispatch left them)."""
    from backend.einvoicing import polling
    from backend.einvoicing.models import Transmission
    from backend.einvoicing.operator_client import SEARCH_PAGE_SIZE, OdpClient
    from backend.runtime import current_runtime
    from ops.bench.einvoicing import CLIENT_ID, CLIENT_SECRET, ENTITY_ID
    from ops.simulators.odp import OdpSimulator

    storage = current_runtime().storage
    client_mode = "Sandbox"  # OdpClient's default flow mode
    open_rows = list(Transmission.select(Transmission.provider_flow_id, Transmission.invoice_number)
                     .where(Transmission.status == "sent").order_by(Transmission.created_at, Transmission.id).tuples())
    with OdpSimulator(client_id=CLIENT_ID, client_secret=CLIENT_SECRET, entity_id=ENTITY_ID) as simulator:
        store = simulator.store
        # Submitted over the last hour; a pass re-reads the flows of the last `OPERATOR_LAG` (5 s)
        # before its watermark: a few of them.
        first, spacing = time.time() - 3600, 3000 / max(len(open_rows), 1)
        for n, (flow_id, number) in enumerate(open_rows):
            moment = first + n * spacing
            store.flows[flow_id] = {
                "flowId": flow_id, "trackingId": number, "name": f"{number}.pdf", "entityId": ENTITY_ID,
                "flowSyntax": "Factur-X", "flowType": "CustomerInvoice", "flowDirection": "Out",
                "processingRule": "B2B", "flowMode": client_mode, "sha256": "0" * 64, "fileName": f"{number}.pdf",
                "size": 1000, "flowStatus": "Pending", "lifecycle": [], "submittedAt": moment, "updatedAt": moment}
        client = OdpClient(base_url=simulator.url, token_url=simulator.token_url, client_id=CLIENT_ID,
                           client_secret=CLIENT_SECRET, entity_id=ENTITY_ID)

        def one_pass() -> tuple[int, float, dict]:
            before = dict(store.calls)
            began = time.perf_counter()
            counters = polling.run_pass(polling.start_pass_if_due(0), client=client, storage=storage)
            seconds = time.perf_counter() - began
            calls = sum(store.calls[route] - before[route] for route in store.calls if route != "token")
            return calls, seconds * 1000, counters

        catch_up, _, _ = one_pass()
        for flow_id, _ in open_rows[-CHANGED:]:
            store.act(flow_id, "ok")
        calls, pass_ms, counters = one_pass()
    expected_catch_up = math.ceil(len(open_rows) / SEARCH_PAGE_SIZE)
    bound = math.ceil(CHANGED / SEARCH_PAGE_SIZE)
    ok = counters["acknowledged"] == CHANGED and calls <= bound and catch_up <= expected_catch_up
    figures["ok"] &= ok
    figures["checks"].append(
        f"polling with {len(open_rows):,} open transmissions: catch-up pass {catch_up} operator calls "
        f"(at most {expected_catch_up}), after {CHANGED} changes {calls} (at most {bound}), "
        f"{counters['acknowledged']} acknowledged (expected {CHANGED})")
    return {"catch_up": catch_up, "calls": calls, "pass_ms": pass_ms}
