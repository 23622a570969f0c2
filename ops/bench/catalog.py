"""`vitrine bench catalog`: the ad-space search over 10,000 ad spaces in 1,000 stores.

Three ways of running one search (a universe, or a rayon, and a store city, first page of 25,
sorted by creation date), alternated query by query, each way first in turn, so the shared
machine's load hits each alike:

- through the API in process (`GET /api/ad-spaces` with a session cookie: middleware, policy and
  session lookup, query schema, service, serialization, JSON): the WSGI app called with the
  request's environ, as gunicorn calls it (falcon's test client would add its own WSGI validator
  and signature inspection, about 0.2 ms of client CPU per request); the answer is decoded after
  its timing;
- the service alone (`catalog.search_ad_spaces`: the written-out statement, the page and the
  total in one round trip, a tuple per row);
- the reference: the same SQL statement written by hand, run on the same connection.
"""

from __future__ import annotations

import json
import random
import statistics
import time
from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

from ops.bench.report import Figure, Result

NAME = "catalog"
DESCRIPTION = "ad-space search, 10,000 ad spaces in 1,000 stores: API and service; reference: raw SQL"
CITIES = ("Paris", "Lyon", "Marseille", "Toulouse", "Nice", "Nantes", "Strasbourg", "Montpellier", "Bordeaux",
          "Lille", "Rennes", "Reims", "Le Havre", "Saint-Étienne", "Toulon", "Grenoble", "Dijon", "Angers",
          "Nîmes", "Villeurbanne")
RAW_SQL = """
SELECT a.id, a.store_id, a.name, a.promo_furniture_type_id, a.placement_universe_id, a.placement_rayon_id,
       a.price_cents, a.created_at, s.id, s.organization_id, s.name, s.street, s.postal_code, s.city, s.country,
       s.created_at, COUNT(*) OVER ()
FROM ad_space a JOIN store s ON s.id = a.store_id
WHERE {zone} = %s AND lower(s.city) = %s
ORDER BY a.created_at ASC NULLS LAST, a.id ASC
LIMIT 25 OFFSET 0
"""


def _populate(stores: int, per_store: int):
    """The zone tree, one furniture type, a distributor with `stores` x `per_store` ad spaces."""
    from backend.db import transaction
    from backend.identity.models import Membership, Organization, User
    from backend.identity.sessions import open_session
    from backend.marketplace import furniture, store_zones
    from backend.marketplace.furniture import ZoneSpec
    from backend.marketplace.models import AdSpace, Store
    from backend.model import new_id

    rng = random.Random(7)
    with transaction():
        universes = [store_zones.create_universe(label=f"Univers {n}") for n in range(12)]
        rayons = [store_zones.create_rayon(universe_id=u.id, label=f"Rayon {n}") for u in universes for n in range(4)]
        kind = furniture.create_furniture_type(name="Gondole", zones=[
            ZoneSpec(code="front", label="Fronton", face_quantity=2, printable=True, width_mm=1200, height_mm=300)])
        Organization.create(id="distributor:552100554", actor_type="distributor", siren="552100554",
                            legal_name="Bench Distribution", kyb_status="approved")
        user = User.create(email="bench-catalog@example.com", name="Bench", roles=["distributor"])
        Membership.create(user=user.id, organization="distributor:552100554", role="manager")
        token = open_session(user, ttl_days=1, active_organization_id="distributor:552100554")
        began = datetime(2026, 1, 1, tzinfo=UTC)
        store_rows = [
            {"id": new_id(), "organization_id": "distributor:552100554", "name": f"Magasin {n}",
             "street": f"{n} rue du Commerce", "postal_code": "75001", "city": CITIES[n % len(CITIES)],
             "country": "FR"}
            for n in range(stores)
        ]
        Store.insert_many(store_rows).execute()
        space_rows = []
        for n in range(stores * per_store):
            rayon = rng.choice(rayons)
            space_rows.append({
                "id": new_id(), "store_id": store_rows[n % stores]["id"], "name": f"Emplacement {n}",
                "promo_furniture_type_id": kind.furniture_type_id, "placement_universe_id": rayon.universe_id,
                "placement_rayon_id": rayon.id, "price_cents": rng.randrange(1_000, 500_000),
                "created_at": began + timedelta(minutes=n),
            })
        for start in range(0, len(space_rows), 1_000):
            AdSpace.insert_many(space_rows[start:start + 1_000]).execute()
    return universes, rayons, token


def run(stack, quick: bool) -> Result:
    import falcon.testing

    from api.app import create_app
    from backend.db import database
    from backend.listing import ListParams
    from backend.marketplace import catalog

    searches = 150 if quick else 1_000
    app = create_app(stack.config)
    with database.connection_context():
        universes, rayons, token = _populate(stores=1_000, per_store=10)
        database.execute_sql("ANALYZE store; ANALYZE ad_space")
        headers = {"Cookie": f"auth.session_token={token}"}
        rng = random.Random(11)
        cases = []
        for n in range(searches):
            by_rayon = n % 2 == 1
            zone = rng.choice(rayons).id if by_rayon else rng.choice(universes).id
            cases.append((by_rayon, zone, rng.choice(CITIES)))

        def api(by_rayon, zone, city):
            environ = falcon.testing.create_environ(
                path="/api/ad-spaces", headers=headers,
                query_string=urlencode({"rayonId" if by_rayon else "universeId": zone, "city": city}))
            status = []
            body = b"".join(app(environ, lambda line, headers, exc_info=None: status.append(line)))
            return status[0], body

        def service(by_rayon, zone, city):
            key = "rayon_id" if by_rayon else "universe_id"
            return catalog.search_ad_spaces(params=ListParams(), city=city, **{key: zone})

        def raw(by_rayon, zone, city):
            column = "a.placement_rayon_id" if by_rayon else "a.placement_universe_id"
            return database.execute_sql(RAW_SQL.format(zone=column), (zone, city.lower())).fetchall()

        def totals(raw_rows, page, answer) -> set[int]:
            """The three totals, read once the timings are taken."""
            status, body = answer
            assert status.startswith("200"), (status, body)
            return {raw_rows[0][-1] if raw_rows else 0, page.total, json.loads(body)["data"]["total"]}

        timings: dict[str, list[float]] = {"api": [], "service": [], "raw": []}
        cpu = dict.fromkeys(timings, 0.0)  # this thread's CPU: survives the machine's load better
        mismatches = 0
        for case in cases[:10]:  # warm-up: plans, caches, the app's first requests (statements it prepares)
            totals(raw(*case), service(*case), api(*case))
        statements = {name: _statements(action, cases[0]) for name, action in
                      (("api", api), ("service", service), ("raw", raw))}
        same_statement = _normalized(statements["service"][-1]) == _normalized(statements["raw"][0])
        ways = (("raw", raw), ("service", service), ("api", api))
        for n, case in enumerate(cases):
            outcomes = {}
            for name, action in ways[n % 3:] + ways[:n % 3]:  # each way first in turn: no order bias
                began, began_cpu = time.perf_counter(), time.thread_time()
                outcomes[name] = action(*case)
                timings[name].append((time.perf_counter() - began) * 1000)
                cpu[name] += time.thread_time() - began_cpu
            mismatches += len(totals(outcomes["raw"], outcomes["service"], outcomes["api"])) != 1
    p50 = {name: statistics.median(values) for name, values in timings.items()}
    p99 = {name: sorted(values)[max(0, int(len(values) * 0.99) - 1)] for name, values in timings.items()}
    return Result(
        title="ad-space search (first page of 25, with total) over 10,000 ad spaces in 1,000 stores",
        reference="the same SELECT written by hand (psycopg2 cursor, same connection)",
        settings=[
            "in process (no network): the WSGI app called with each request's environ; one PostgreSQL connection",
            f"{searches} searches per side, alternating universe+city and rayon+city filters",
        ],
        figures=[
            Figure("API p50 (ms)", p50["api"], p50["raw"]),
            Figure("API p99 (ms)", p99["api"], p99["raw"]),
            Figure("service p50 (ms)", p50["service"], p50["raw"]),
            Figure("service p99 (ms)", p99["service"], p99["raw"]),
        ],
        checks=[
            f"searches whose totals differ between the three: {mismatches} (expected 0)",
            f"statements per search: API {len(statements['api'])} (expected 2: the session, the search), "
            f"service {len(statements['service'])} (expected 1)",
            f"the service's statement is the reference's: {'yes' if same_statement else 'NO'}",
        ],
        notes=[
            "the API figure includes the session lookup of the policy (see `vitrine bench session`)",
            "Python CPU per search (this process, PostgreSQL's own not included): "
            + ", ".join(f"{name} {cpu[name] * 1000 / searches:.3f} ms" for name in ("api", "service", "raw")),
        ],
        ok=mismatches == 0 and len(statements["api"]) == 2 and len(statements["service"]) == 1 and same_statement,
    )


def _statements(action, case) -> list[str]:
    """The SQL statements `action(*case)` sends to PostgreSQL, as sent (parameters bound)."""
    from backend.db import database

    seen: list[str] = []
    original = database.obj.execute_sql

    def recording(sql, params=None, *args, **kwargs):
        with database.obj.cursor() as cursor:
            seen.append(cursor.mogrify(sql, params).decode())
        return original(sql, params, *args, **kwargs)

    database.obj.execute_sql = recording
    try:
        action(*case)
    finally:
        del database.obj.execute_sql
    return seen


def _normalized(statement: str) -> str:
    return " ".join(statement.split())
