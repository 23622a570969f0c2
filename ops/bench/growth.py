"""`vitrine bench growth`: the cost of the same work on a small and on a large database, in the
same run. A platform's tables only grow: a figure that holds
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
from contextlib import contextmanager
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
    from backend.billing.invoicing.parties import platform_party
    from ops.bench.billing import load_average
    from ops.bench.stack import BENCH_DATABASE

    sizes = {"small": SMALL, "large": QUICK if quick else FULL}
    rounds, repeats, collections = (2, 15, 15) if quick else (3, 20, 50)  # per round and database
    load_before = load_average()
    built: dict[str, tuple[str, float] | None] = {}
    for label, size in sizes.items():
        built[label] = _growth_data.persisted(
            stack.admin_url, _database_name(label, size), _marker(size), work=BENCH_DATABASE, fresh=stack.fresh,
            fill=lambda size=size: _fill(size, platform_party(stack.config)), migrate=_migrate)
    copies = {label: _growth_data.copy_into(stack.admin_url, _database_name(label, size), _run_copy(label))
              for label, size in sizes.items()}
    sides = _Sides(stack, sizes)
    try:
        for label in sizes:
            with sides.on(label) as side:
                side.prepare(rounds * collections)
        for number in range(rounds):  # the two databases alternately, each first in turn
            for label in (sizes if number % 2 == 0 else reversed(sizes)):
                with sides.on(label) as side:
                    side.measure(number, repeats=repeats, collections=collections)
        for label in sizes:
            with sides.on(label) as side:
                side.finish()
    finally:
        sides.close()
    load_after = load_average()
    small, large = sides.figures["small"], sides.figures["large"]
    figures = [
        *(Figure(label, statistics.median(large[key]), statistics.median(small[key])) for key, label in (
            ("collection", "collection p50 (ms)"), ("list", "invoice list p50 (ms)"),
            ("download", "invoice download p50 (ms)"), ("orders", "printer order list p50 (ms)"),
            ("selection", "self-billing selection p50 (ms)"))),
        Figure("operator calls per polling pass after 50 changes", large["calls"], small["calls"]),
        Figure("operator calls of the catch-up polling pass", large["catch_up"], small["catch_up"], summary=False),
        Figure("polling pass after 50 changes (ms)", large["pass_ms"], small["pass_ms"], summary=False),
    ]
    return Result(
        title=f"the same work on a database of {sizes['large'].invoices:,} invoices vs {SMALL.invoices:,}",
        reference=f"the small database ({_describe(SMALL)}), measured in the same run",
        settings=[
            f"large: {_describe(sizes['large'])}",
            "in process, falcon.testing client, one request at a time, on the domain's clock set to "
            f"{AS_OF:%Y-%m-%d %H:%M} UTC; {rounds} rounds alternating the databases (a connection pool each), "
            f"each of {repeats} of every read and {collections} collections, after 3 reads of each and 10 "
            "collections of warm-up",
            "databases built once per bench data directory (bulk SQL, every trigger and constraint on), kept "
            "with a marker (build version, sizes, migrations); a copy of each measured per run",
        ],
        figures=figures,
        checks=[line for label in sizes for line in sides.figures[label]["checks"]],
        notes=[*(f"{label} database: " + (f"{done[0]} in {done[1]:.1f} s" if done else "kept (built before)")
                 + f", copied for this run in {copies[label]:.1f} s" for label, done in built.items()),
               f"load average (1, 5, 15 min): {load_before} before, {load_after} after", SHARED_CORES_NOTE],
        ok=all(sides.figures[label]["ok"] for label in sizes),
    )


def _run_copy(label: str) -> str:
    return f"vitrine_growth_run_{label}"


class _Sides:
    """The two databases' copies, a connection pool each, one at a time behind the process's
    `database` proxy (`on`), and what was measured on each."""

    def __init__(self, stack, sizes: dict[str, Sizes]) -> None:
        from urllib.parse import urlsplit, urlunsplit

        from backend.db import database

        self.admin_url, self.original = stack.admin_url, database.obj
        self.sizes = sizes
        url = urlsplit(stack.env["DATABASE_URL"])
        self.urls = {label: urlunsplit(url._replace(path="/" + _run_copy(label))) for label in sizes}
        self.pools: dict = {}
        self.sides: dict[str, _Side] = {}
        self.figures: dict[str, dict] = {}

    @contextmanager
    def on(self, label: str):
        from backend import clock
        from backend.db import database, init_database

        if label not in self.pools:
            self.pools[label] = init_database(self.urls[label])
            self.figures[label] = {"checks": [], "ok": True}
            self.sides[label] = _Side(self.sizes[label], self.figures[label])
        database.initialize(self.pools[label])
        with database.connection_context(), clock.frozen_at(AS_OF):
            yield self.sides[label]

    def close(self) -> None:
        from backend.db import database

        for pool in self.pools.values():
            pool.close_all()
        database.initialize(self.original)
        for label in self.sizes:
            _growth_data.drop(self.admin_url, _run_copy(label))


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


class _Side:
    """The measures on one database: `prepare` (sessions, PDFs, reservations to collect, warm-up),
    `measure` a round, `finish` (polling, checks)."""

    def __init__(self, size: Sizes, figures: dict) -> None:
        for key in ("selection", "list", "download", "orders", "collection"):
            figures[key] = []
        self.size, self.figures = size, figures

    def prepare(self, collections: int) -> None:
        import falcon.testing

        from api.app import create_app
        from backend.runtime import current_runtime
        from ops.bench import _printing
        from ops.bench.billing import populate

        self.client = falcon.testing.TestClient(create_app(current_runtime().config))
        self.numbers = _store_pdfs()
        self.industrial = _session("bench-industrial@example.com", _printing.INDUSTRIAL)
        self.printer = _session("bench-printer@example.com", _printing.PRINTER)
        self.to_collect, token = populate(_WARMUP_COLLECTIONS + collections)
        self.collector = {"Cookie": f"auth.session_token={token}", "Content-Type": "application/json"}
        self.statuses: list[int] = []
        for _ in range(3):
            self._select(), self._list(), self._download(), self._orders()
        for _ in range(_WARMUP_COLLECTIONS):
            self._collect()

    def measure(self, number: int, *, repeats: int, collections: int) -> None:
        for key, action in (("selection", self._select), ("list", self._list), ("download", self._download),
                            ("orders", self._orders)):
            self.figures[key] += [_timed(action) for _ in range(repeats)]
        self.figures["collection"] += [_timed(self._collect) for _ in range(collections)]

    def finish(self) -> None:
        from backend.billing.models import Invoice
        from ops.bench import _printing

        size, checks = self.size, self.figures["checks"]
        due = len(self._select())
        listed = [item["invoiceNumber"] for item in self._list().json["data"]["items"]]
        download, orders = self._download(), self._orders().json["data"]["orders"]
        # The organization's 50 latest: the collections of this run are its own too.
        expected = [n for (n,) in Invoice.select(Invoice.number)
                    .where(Invoice.customer_organization_id == _printing.INDUSTRIAL)
                    .order_by(Invoice.issued_at.desc(), Invoice.sequence.desc()).limit(50).tuples()]
        sequences = [s for (s,) in Invoice.select(Invoice.sequence).where(Invoice.series == _growth_data.SERIES)
                     .where(Invoice.sequence > size.invoices).order_by(Invoice.sequence).tuples()]
        collected = len(self.statuses)
        gapless = sequences == list(range(size.invoices + 1, size.invoices + collected + 1))
        checks += [
            f"{size.invoices:,} invoices: due reservations selected {due} (expected {_growth_data.DUE})",
            f"invoice list: {len(listed)} invoices, the organization's 50 latest "
            f"{'in order' if listed == expected else 'NOT AS EXPECTED'}; download: {download.status_code}, "
            f"{len(download.content):,} bytes",
            f"printer order list over {size.orders:,} orders: {len(orders)} on the first page",
            f"collections after {size.invoices:,} invoices: {self.statuses.count(200)} of {collected} answered 200, "
            f"numbered {size.invoices + 1:,}..{size.invoices + len(sequences):,} "
            f"{'gapless' if gapless else 'WITH A GAP'} in {_growth_data.SERIES}",
        ]
        self.figures["ok"] &= (due == _growth_data.DUE and listed == expected and download.status_code == 200
                               and len(orders) == min(100, size.orders) and gapless
                               and self.statuses == [200] * collected)
        self.figures.update(_polling(self.figures))

    def _select(self) -> list[str]:
        from backend.billing.self_billing import scheduler

        return scheduler.candidates()

    def _list(self):
        answer = self.client.simulate_get("/api/billing/invoices", headers=self.industrial, params={"limit": 50})
        assert answer.status_code == 200, answer.text
        return answer

    def _download(self):
        return self.client.simulate_get(f"/api/billing/invoices/{self.numbers[-1]}/download", headers=self.industrial)

    def _orders(self):
        answer = self.client.simulate_get("/api/printer/print-orders", headers=self.printer, params={"limit": 100})
        assert answer.status_code == 200, answer.text
        return answer

    def _collect(self) -> None:
        reservation_id = self.to_collect[len(self.statuses)]
        answer = self.client.simulate_post(f"/api/billing/reservations/{reservation_id}/collect",
                                           body=b'{"paymentMethod": "bank_transfer"}',
                                           headers={**self.collector, "Idempotency-Key": f"growth-{reservation_id}"})
        self.statuses.append(answer.status_code)


_WARMUP_COLLECTIONS = 10


def _timed(action) -> float:
    """The time `action()` takes, in ms."""
    began = time.perf_counter()
    action()
    return (time.perf_counter() - began) * 1000


def _session(email: str, organization_id: str) -> dict:
    from backend.identity.models import User
    from backend.identity.sessions import open_session

    token = open_session(User.get(User.email == email), ttl_days=1, active_organization_id=organization_id)
    return {"Cookie": f"auth.session_token={token}"}


def _store_pdfs() -> list[str]:
    """The measured organization's invoices with their PDFs (stored now: the copy's are this run's)."""
    from backend.billing.models import Invoice
    from backend.db import transaction
    from backend.einvoicing.lifecycle import INVOICE_PDF_CONTEXT
    from backend.runtime import current_runtime
    from ops.simulators.esign_store import minimal_pdf

    numbers = _growth_data.own_invoice_numbers()
    storage = current_runtime().storage
    with transaction():
        for number in numbers:
            pdf, key = minimal_pdf(number), f"billing/invoices/{number}.pdf"
            storage.put_bytes(INVOICE_PDF_CONTEXT, key, pdf, "application/pdf")
            Invoice.update(pdf_storage_key=key, pdf_sha256=hashlib.sha256(pdf).hexdigest()).where(
                Invoice.number == number).execute()
    return numbers


def _polling(figures: dict) -> dict:
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
