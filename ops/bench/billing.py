"""`vitrine bench billing`: 1,000 collections `POST /api/billing/reservations/{id}/collect` over
HTTP on gunicorn at 16 keep-alive connections, next to the same collections by hand.

Each collection is the whole flow of spec C in one transaction and one commit (Idempotency-Key
held and its answer stored, KYB and reservation checks under locks, payment order, financial
status, the sale and its payment in the books, the `invoice.issued` outbox row, the
`platform_sale` invoice numbered from the locked counter of its series): every collection of the
run is numbered in the one series `FAC-RES-<year>`, so they all queue on its counter row, as a
busy day's collections do.

Reference: the same collection by hand (`ops/bench/_bare_billing.py`: the same statements with
the same values, no framework), served by the same gunicorn settings, on reservations of its own,
in rounds alternating with Vitrine's; its invoices are numbered in the same series and its entries
verified with the rest. The goal is on the web server's CPU per collection (gunicorn's processes),
which the client's share of the cores hardly moves; PostgreSQL's is shown beside it (the server's
process tree, when it runs on this machine: the embedded one does). After the run the series is
checked gapless (numbers 1..N, no duplicate, number order = issue order) and the books verified
(`vitrine accounting verify`). The load average before and after the run is printed.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ops.bench.load import LoadResult, PlannedRequest, run_plan
from ops.bench.report import SHARED_CORES_NOTE, Figure, Result
from ops.bench.stack import process_tree_cpu_seconds

NAME = "billing"
DESCRIPTION = ("1,000 collections over HTTP at 16 connections into one invoice series, checked gapless; "
               "reference: the same collections by hand (bare Falcon + psycopg2, same statements)")
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


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:  # not Linux
        return "unknown"


def run(stack, quick: bool) -> Result:
    from backend.db import database

    collections, rounds = (200, 1) if quick else (1_000, 2)
    per_round = collections // rounds
    # CPU seconds used while each side ran: the web server's and PostgreSQL's.
    cpu = {(side, what): 0.0 for side in ("vitrine", "bare") for what in ("web", "postgres")}
    results: dict[str, list[LoadResult]] = {"vitrine": [], "bare": []}
    postgres = None

    def measured(side: str, server, ids: list[str], token: str) -> None:
        meters = {"web": server.cpu_seconds,
                  "postgres": (lambda: process_tree_cpu_seconds(postgres)) if postgres else (lambda: 0.0)}
        before = {what: meter() for what, meter in meters.items()}
        results[side].append(run_plan(server.url, _plan(ids, token), connections=CONNECTIONS,
                                      processes=CLIENT_PROCESSES))
        for what, meter in meters.items():
            cpu[side, what] += meter() - before[what]

    load_before = load_average()
    with database.connection_context():
        ids, token = populate(2 * (WARMUP + collections))
        ours, theirs = ids[:WARMUP + collections], ids[WARMUP + collections:]
        database.execute_sql("ANALYZE")
        postgres = postgres_pid()
        with stack.serve(APP, "web") as server, stack.serve(BARE_APP, "bare") as reference:
            sides = {"vitrine": (server, ours), "bare": (reference, theirs)}
            warm = [run_plan(app.url, _plan(own[:WARMUP], token), connections=CONNECTIONS,
                             processes=CLIENT_PROCESSES) for app, own in sides.values()]
            for n in range(rounds):
                start, end = WARMUP + n * per_round, WARMUP + (n + 1) * per_round
                for side in (("vitrine", "bare") if n % 2 == 0 else ("bare", "vitrine")):  # each first in turn
                    app, own = sides[side]
                    measured(side, app, own[start:end], token)
        series_ok, series_line = _series_check()
    load_after = load_average()
    done, by_hand = LoadResult.combine(results["vitrine"]), LoadResult.combine(results["bare"])
    failures = sum(r.non_2xx + r.errors for r in (done, by_hand, *warm))

    def per_answer(side: str, what: str, result: LoadResult) -> float:
        return 1000 * cpu[side, what] / max(result.answered, 1)

    return Result(
        title=f"{collections:,} collections POST /api/billing/reservations/{{id}}/collect, {CONNECTIONS} keep-alive "
              "connections, one invoice series",
        reference="the same collection by hand (ops/bench/_bare_billing.py) under the same gunicorn settings, on "
                  "reservations of its own, in rounds alternating with Vitrine's",
        settings=[
            stack.web_settings,
            f"client: {CLIENT_PROCESSES} processes x {CONNECTIONS // CLIENT_PROCESSES} connections, closed loop; "
            f"{rounds} round(s) of {per_round:,} collections per app after {WARMUP} warm-up collections each; "
            "no worker (the outbox rows wait)",
        ],
        figures=[
            Figure("server CPU per collection vs the bare same-SQL app (ms)", per_answer("vitrine", "web", done),
                   per_answer("bare", "web", by_hand)),
            *(Figure("PostgreSQL CPU per collection (ms)", per_answer("vitrine", "postgres", done),
                     per_answer("bare", "postgres", by_hand), summary=False),) * bool(postgres),
            Figure("throughput (req/s)", done.throughput, by_hand.throughput),
            Figure("p50 (ms)", done.p50_ms, by_hand.p50_ms),
            Figure("p99 (ms)", done.p99_ms, by_hand.p99_ms),
            Figure("requests measured", done.requests, by_hand.requests, summary=False),
        ],
        checks=[
            f"non-2xx answers: {done.non_2xx + warm[0].non_2xx} vitrine, {by_hand.non_2xx + warm[1].non_2xx} bare "
            "(expected 0)",
            f"connection errors: {done.errors + warm[0].errors} vitrine, {by_hand.errors + warm[1].errors} bare "
            "(expected 0)",
            series_line,
        ],
        notes=["every collection serializes on the series' counter row from the number allocation to the commit",
               f"load average (1, 5, 15 min): {load_before} before, {load_after} after", SHARED_CORES_NOTE],
        ok=failures == 0 and series_ok,
    )
