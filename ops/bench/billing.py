"""`vitrine bench billing`: 1,000 collections `POST /api/billing/reservations/{id}/collect` over
HTTP on gunicorn at 16 keep-alive connections, next to `GET /api/health` on the same server.

Each collection is the whole flow of spec C in one transaction and one commit (Idempotency-Key
held and its answer stored, KYB and reservation checks under locks, payment order, financial
status, the sale and its payment in the books, the `invoice.issued` outbox row, the `platform_sale` invoice
numbered from the locked counter of its series): every collection of the run is numbered in the
one series `FAC-RES-<year>`, so they all queue on its counter row, which is the point of the
measure. The load average before and after the run is printed (the machine is shared).
Reference: `GET /api/health` on the same server, same client and connections, in windows
alternating with the collection rounds. After the run the series is checked gapless (numbers
1..N, no duplicate, number order = issue order) and the books verified (`vitrine accounting verify`).

Second reference, which the goal judges: the same collection by hand (`ops/bench/_bare_billing.py`: the same
prepared statements with the same values, no framework), served by the same gunicorn settings, on
reservations of its own, in rounds alternating with Vitrine's; its invoices are numbered in the
same series and its entries verified with the rest. The figure is the web server's CPU per
collection, Vitrine's against the bare app's.

CPU per answer is given for the web server (gunicorn's processes), for PostgreSQL (the server's
process tree, when it runs on this machine: the embedded one does) and for the whole machine
(`/proc/stat`: client, web, PostgreSQL and whatever else runs; meaningful on a quiet machine only),
each next to the same figure for `GET /api/health`: what a collection costs, component by
component, whatever the load does to its latency.
"""

from __future__ import annotations

import json
import os
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ops.bench.load import LoadResult, PlannedRequest, run_load, run_plan
from ops.bench.report import SHARED_CORES_NOTE, Figure, Result
from ops.bench.stack import process_tree_cpu_seconds

NAME = "billing"
DESCRIPTION = ("1,000 collections over HTTP at 16 connections into one invoice series, checked gapless; "
               "reference: GET /api/health on the same server")
APP = "api.app:create_app()"
BARE_APP = "ops.bench._bare_billing:create_app()"
CONNECTIONS = 16
CLIENT_PROCESSES = 2
WARMUP = 100


def populate(count: int) -> tuple[list[str], str]:
    """An approved industrial with a manager session, a distributor, `count` approved
    principal_seller reservations (rows written directly: the marketplace flow is not measured)."""
    from backend.db import transaction
    from backend.identity.models import BillingProfile, Membership, Organization, User
    from backend.identity.sessions import open_session
    from backend.marketplace import furniture, store_zones
    from backend.marketplace.furniture import ZoneSpec
    from backend.marketplace.models import AdSpace, Campaign, Reservation, Store
    from backend.model import new_id

    tag = uuid.uuid4().hex[:6]
    industrial, distributor = "industrial:552100554", "distributor:385347927"
    with transaction():
        for org_id, actor in ((industrial, "industrial"), (distributor, "distributor")):
            siren = org_id.split(":")[1]
            Organization.insert(id=org_id, actor_type=actor, siren=siren, legal_name=f"Bench {actor}",
                                kyb_status="approved").on_conflict_ignore().execute()
            BillingProfile.insert(organization=org_id, legal_name=f"Bench {actor} SAS", siret=siren + "00013",
                                  street="1 rue du Banc", postal_code="75001", city="Paris", country="FR",
                                  signer_first_name="A", signer_last_name="B", signer_email="a@example.com",
                                  signer_phone="+33612345678", signer_on_registry_extract=True,
                                  ).on_conflict_ignore().execute()
        user = User.create(email=f"bench-billing-{tag}@example.com", name="Bench", roles=["industrial"])
        Membership.create(user=user.id, organization=industrial, role="manager")
        token = open_session(user, ttl_days=1, active_organization_id=industrial)
        universe = store_zones.create_universe(label=f"Bench billing {tag}")
        kind = furniture.create_furniture_type(name=f"Gondole {tag}", zones=[
            ZoneSpec(code="front", label="Fronton", face_quantity=1, printable=True, width_mm=1000, height_mm=300)])
        store = Store.create(organization_id=distributor, name="Bench", street="1 rue", postal_code="75001",
                             city="Paris", country="FR")
        starts = datetime(2027, 1, 4, tzinfo=UTC)
        campaign = Campaign.create(organization_id=industrial, name="Bench", starts_at=starts,
                                   ends_at=starts + timedelta(days=14))
        spaces = [{"id": new_id(), "store_id": store.id, "name": f"E{n}", "promo_furniture_type_id":
                   kind.furniture_type_id, "placement_universe_id": universe.id, "price_cents": 10_000 + 37 * n}
                  for n in range(count)]
        AdSpace.insert_many(spaces).execute()
        rows = []
        for space in spaces:
            base = space["price_cents"]
            commission = (base * 2000 + 5000) // 10_000
            rows.append({"id": new_id(), "industrial_organization_id": industrial,
                         "distributor_organization_id": distributor, "campaign_id": campaign.id,
                         "ad_space_id": space["id"], "furniture_type_version_id": kind.id, "starts_at": starts,
                         "ends_at": starts + timedelta(days=14), "status": "approved",
                         "billing_model": "principal_seller", "base_amount_cents": base,
                         "commission_amount_cents": commission, "total_amount_cents": base + commission,
                         "commission_rate_bps": 2000, "approved_at": starts})
        for start in range(0, len(rows), 500):
            Reservation.insert_many(rows[start:start + 500]).execute()
    return [row["id"] for row in rows], token


def _plan(ids: list[str], token: str) -> list[PlannedRequest]:
    body = json.dumps({"paymentMethod": "bank_transfer"}).encode()
    return [PlannedRequest("POST", f"/api/billing/reservations/{rid}/collect", body, (
        ("Cookie", f"auth.session_token={token}"), ("Content-Type", "application/json"),
        ("Idempotency-Key", f"bench-{rid}"))) for rid in ids]


def _series_check() -> tuple[bool, str]:
    from backend.billing.models import Invoice

    series = [s for (s,) in Invoice.select(Invoice.series).where(Invoice.kind == "platform_sale").distinct()
              .tuples()]
    lines, ok = [], True
    for name in series:
        rows = list(Invoice.select(Invoice.sequence, Invoice.issued_at).where(Invoice.series == name)
                    .order_by(Invoice.sequence).tuples())
        sequences = [s for s, _ in rows]
        gapless = sequences == list(range(1, len(rows) + 1))
        ordered = [t for _, t in rows] == sorted(t for _, t in rows)
        ok &= gapless and ordered
        lines.append(f"series {name}: {len(rows):,} invoices, numbers 1..{len(rows):,} "
                     f"{'gapless, no duplicate' if gapless else 'WITH A GAP OR A DUPLICATE'}, "
                     f"{'number order = issue order' if ordered else 'NUMBER ORDER != ISSUE ORDER'}")
    from backend.billing.accounting.verify import verify

    breaches = verify()  # the books: every entry balanced and numbered, each invoice and payment posted once
    ok &= not breaches
    lines.append(f"breaches of the books: {len(breaches)} (expected 0){': ' + breaches[0] if breaches else ''}")
    return ok, "; ".join(lines)


def postgres_pid() -> int | None:
    """The PostgreSQL server's postmaster, when it runs on this machine (its backends are its children)."""
    from backend.db import database

    try:
        directory = database.execute_sql("SELECT current_setting('data_directory')").fetchone()[0]
        pid = int((Path(directory) / "postmaster.pid").read_text().split()[0])
    except Exception:  # not a local server, or not readable: the figure is left out
        return None
    return pid if Path(f"/proc/{pid}").exists() else None


def _machine_busy_seconds() -> float:
    """CPU seconds every process of the machine used so far (Linux /proc/stat, idle and iowait left out)."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except OSError:
        return 0.0
    return (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:  # not Linux
        return "unknown"


def run(stack, quick: bool) -> Result:
    from backend.db import database

    collections, rounds, window, warmup = (200, 1, 2.0, 0.5) if quick else (1_000, 2, 3.0, 1.0)
    per_round = collections // rounds
    # CPU seconds used while each side ran: the web server's, PostgreSQL's, the whole machine's.
    cpu = {(side, what): 0.0 for side in ("collect", "health", "bare") for what in ("web", "postgres", "machine")}
    collected: list[LoadResult] = []
    health: list[LoadResult] = []
    postgres = None

    def measured(name: str, server, load):
        meters = {"web": server.cpu_seconds, "machine": _machine_busy_seconds,
                  "postgres": (lambda: process_tree_cpu_seconds(postgres)) if postgres else (lambda: 0.0)}
        before = {what: meter() for what, meter in meters.items()}
        result = load()
        for what, meter in meters.items():
            cpu[name, what] += meter() - before[what]
        return result

    load_before = load_average()
    bare: list[LoadResult] = []
    with database.connection_context():
        ids, token = populate(2 * (WARMUP + collections))
        ours, theirs = ids[:WARMUP + collections], ids[WARMUP + collections:]
        database.execute_sql("ANALYZE")
        postgres = postgres_pid()
        with stack.serve(APP, "web") as server, stack.serve(BARE_APP, "bare") as reference:
            warm = run_plan(server.url, _plan(ours[:WARMUP], token), connections=CONNECTIONS,
                            processes=CLIENT_PROCESSES)
            warm_bare = run_plan(reference.url, _plan(theirs[:WARMUP], token), connections=CONNECTIONS,
                                 processes=CLIENT_PROCESSES)
            for n in range(rounds):
                health.append(measured("health", server, lambda: run_load(
                    server.url + "/api/health", connections=CONNECTIONS, duration=window, warmup=warmup,
                    processes=CLIENT_PROCESSES)))
                start, end = WARMUP + n * per_round, WARMUP + (n + 1) * per_round
                collected.append(measured("collect", server, lambda start=start, end=end: run_plan(
                    server.url, _plan(ours[start:end], token), connections=CONNECTIONS, processes=CLIENT_PROCESSES)))
                bare.append(measured("bare", reference, lambda start=start, end=end: run_plan(
                    reference.url, _plan(theirs[start:end], token), connections=CONNECTIONS,
                    processes=CLIENT_PROCESSES)))
        series_ok, series_line = _series_check()
    load_after = load_average()
    done, ref, by_hand = LoadResult.combine(collected), LoadResult.combine(health), LoadResult.combine(bare)
    failures = (done.non_2xx + done.errors + warm.non_2xx + warm.errors + ref.non_2xx + ref.errors
                + by_hand.non_2xx + by_hand.errors + warm_bare.non_2xx + warm_bare.errors)
    return Result(
        title=f"{collections:,} collections POST /api/billing/reservations/{{id}}/collect, {CONNECTIONS} keep-alive "
              "connections, one invoice series",
        reference="GET /api/health on the same gunicorn server, same client and connections, alternating windows; "
                  "for the CPU per collection, the same statements by hand (ops/bench/_bare_billing.py) under the same "
                  "gunicorn settings, in rounds alternating with Vitrine's",
        settings=[
            stack.web_settings,
            f"client: {CLIENT_PROCESSES} processes x {CONNECTIONS // CLIENT_PROCESSES} connections, closed loop; "
            f"{rounds} round(s) of {per_round:,} collections after {WARMUP} warm-up collections, each round after a "
            f"{window:g} s health window ({warmup:g} s warm-up) and before as many collections on the bare "
            f"same-SQL app (its own reservations, {WARMUP} warm-up); no worker (the outbox rows wait)",
        ],
        figures=[
            # `GET /api/health` does not query PostgreSQL: its PostgreSQL figure is no reference.
            *(Figure(label, 1000 * cpu["collect", what] / max(done.answered, 1),
                     0.0 if what == "postgres" else 1000 * cpu["health", what] / max(ref.answered, 1),
                     summary=what == "web")
              for label, what in (("server CPU per answer (ms)", "web"), ("PostgreSQL CPU per answer (ms)", "postgres"),
                                  ("machine CPU per answer (ms)", "machine")) if what != "postgres" or postgres),
            Figure("throughput (req/s)", done.throughput, ref.throughput),
            Figure("p50 (ms)", done.p50_ms, ref.p50_ms),
            Figure("p99 (ms)", done.p99_ms, ref.p99_ms),
            Figure("requests measured", done.requests, ref.requests, summary=False),
            # What Vitrine's framework adds to the same statements (ops/bench/_bare_billing.py).
            Figure("server CPU per collection vs the bare same-SQL app (ms)", 1000 * cpu["collect", "web"]
                   / max(done.answered, 1), 1000 * cpu["bare", "web"] / max(by_hand.answered, 1)),
            *(Figure("PostgreSQL CPU per collection vs the bare same-SQL app (ms)", 1000 * cpu["collect", "postgres"]
                     / max(done.answered, 1), 1000 * cpu["bare", "postgres"] / max(by_hand.answered, 1),
                     summary=False),) * bool(postgres),
            Figure("p99 vs the bare same-SQL app (ms)", done.p99_ms, by_hand.p99_ms, summary=False),
        ],
        checks=[
            f"non-2xx answers: {done.non_2xx + warm.non_2xx} collect, {ref.non_2xx} health (expected 0)",
            f"connection errors: {done.errors + warm.errors} collect, {ref.errors} health (expected 0)",
            f"bare same-SQL app: {by_hand.non_2xx + warm_bare.non_2xx} non-2xx, {by_hand.errors + warm_bare.errors} "
            "connection errors (expected 0)",
            series_line,
        ],
        notes=["every collection serializes on the series' counter row from the number allocation to the commit",
               "machine CPU: every process of the machine (client, web, PostgreSQL, and anyone else's) per answer",
               f"load average (1, 5, 15 min): {load_before} before, {load_after} after", SHARED_CORES_NOTE],
        ok=failures == 0 and series_ok,
    )
