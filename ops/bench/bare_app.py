"""The bare references of the HTTP scenarios: Falcon with no middleware, psycopg2 with no ORM,
served by the same gunicorn settings as Vitrine (`stack.serve("ops.bench.bare_app:create_app()")`).

Each resource does by hand what Vitrine's route does, with the same SQL statements (the very
strings Vitrine runs, imported, so the two cannot drift apart) and the same JSON answer, so that
a ratio measures what Vitrine's framework adds (middleware, routing rules, schemas, logging, the
ORM), not PostgreSQL:

- `GET /api/health`: the same JSON envelope, no database.
- `GET /api/auth/session`: the cookie's SHA-256, the session statement with the user's
  organizations (the same text Vitrine sends), the pending-envelope check, the
  same answer.
- `POST /api/webhooks/esign`: the HMAC-SHA256 of the raw body compared in constant time, the
  issued-at window, the JSON parsed, then in one transaction the event `INSERT ... ON CONFLICT DO
  NOTHING` and the outbox row, and after the commit the Dramatiq message `LPUSH`ed to Redis in the
  request thread. Its rows are named `bare-...` and its messages go to a queue no worker reads
  (`REFERENCE_QUEUE`), so the scenario's own counts are left alone.

The collection's bare reference is an app of its own (`ops.bench._bare_billing:create_app()`,
with the same pools): it sends the billing area's own statements, so a change there touches the
`billing` scenario only.

Connections: a `psycopg2.pool.ThreadedConnectionPool` per process (made after gunicorn's fork),
checked out and given back per request, as a hand-written app would, keeping one open connection
per thread (psycopg2 closes a connection given back beyond `minconn`: with fewer kept, most
requests would open a new PostgreSQL connection, whose backend's CPU leaves the count when it
closes).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import threading
import time
from datetime import UTC, datetime

import falcon
import psycopg2.pool
from psycopg2.extras import Json

# Statements (strings) and the roles' permission table: the reference runs Vitrine's SQL and
# answers the same permissions, nothing else of its code.
from backend.identity.permissions import permissions_for
from backend.identity.sessions import SESSION_STATEMENTS
from backend.onboarding.envelopes import PENDING_ENVELOPE_SQL

SESSION_LOOKUP = SESSION_STATEMENTS[True]  # the session with its organizations
REFERENCE_QUEUE = "bench_reference"
REFERENCE_ACTOR = "bench_reference"
SESSION_COOKIE = "auth.session_token"
PENDING_STATUSES = ["draft", "pending_creation", "pending_signature", "signer_notified", "signer_opened"]
KYB_GATED = frozenset({"industrial", "distributor"})
HOMES = {"admin": "/admin", "industrial": "/industrial", "distributor": "/distributor", "printer": "/printer"}
EVENT_SQL = (
    'INSERT INTO "esign_webhook_event" ("event_id", "event_name", "provider_signature_request_id", "payload",'
    ' "retry_attempt", "processing_status", "received_at") VALUES (%s, %s, %s, %s, %s, %s, %s)'
    ' ON CONFLICT ("event_id") DO NOTHING RETURNING "id"'
)
OUTBOX_SQL = 'INSERT INTO "outbox_message" ("actor_name", "args", "created_at") VALUES (%s, %s, %s) RETURNING "id"'


class _Pools:
    """One PostgreSQL pool and one Redis client per process, made on first use (after the fork)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid = 0
        self._pg = None
        self._broker = None

    def _ensure(self) -> None:
        if self._pid != os.getpid():
            with self._lock:
                if self._pid != os.getpid():
                    # psycopg2's pool closes a connection given back beyond `minconn` idle ones: as many
                    # as the process has threads stay open, as Vitrine's pool keeps them.
                    threads = int(os.environ.get("WEB_THREADS", "8"))
                    self._pg = psycopg2.pool.ThreadedConnectionPool(threads, max(threads, 20),
                                                                    os.environ["DATABASE_URL"])
                    from dramatiq.brokers.redis import RedisBroker

                    self._broker = RedisBroker(url=os.environ["REDIS_URL"])
                    self._pid = os.getpid()

    def connection(self):
        """A pooled connection in autocommit, as peewee keeps Vitrine's: a read is one round trip,
        a write block says BEGIN and COMMIT."""
        self._ensure()
        conn = self._pg.getconn()
        conn.autocommit = True
        return conn

    def give_back(self, conn) -> None:
        self._pg.putconn(conn)

    def enqueue(self, args: list) -> None:
        import dramatiq

        self._ensure()
        self._broker.enqueue(dramatiq.Message(queue_name=REFERENCE_QUEUE, actor_name=REFERENCE_ACTOR,
                                              args=tuple(args), kwargs={}, options={}))


pools = _Pools()


class Health:
    def __init__(self) -> None:
        self.started = time.monotonic()

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        # The same envelope and fields as Vitrine's, so both serialize the same amount of JSON.
        resp.media = {
            "ok": True,
            "data": {
                "service": "vitrine",
                "status": "ok",
                "environment": "bench",
                "uptimeSeconds": round(time.monotonic() - self.started, 3),
                "telemetry": {"apiRequestsTotal": 0, "apiErrorsTotal": 0},
            },
        }


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(UTC).isoformat(timespec="milliseconds").replace(
        "+00:00", "Z")


class Session:
    """`GET /api/auth/session` by hand (the bench account is an industrial manager, no admin)."""

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        token = req.cookies.get(SESSION_COOKIE)
        if not token:
            raise falcon.HTTPUnauthorized()
        conn = pools.connection()
        try:
            with conn.cursor() as cursor:
                cursor.execute(SESSION_LOOKUP, {"token_hash": hashlib.sha256(token.encode()).hexdigest(),
                                                            "now": datetime.now(UTC)})
                row = cursor.fetchone()
                if row is None:
                    raise falcon.HTTPUnauthorized()
                (_, active_id, _, actor_type, kyb_status, user_id, email, name, verified_at, roles, granted,
                 created_at, organizations) = row
                redirect = None
                if actor_type is not None:
                    cursor.execute(PENDING_ENVELOPE_SQL, (active_id, PENDING_STATUSES))
                    if cursor.fetchone()[0]:
                        redirect = "/onboarding-signature-pending"
                    elif actor_type in KYB_GATED and kyb_status != "approved":
                        redirect = "/onboarding"
        finally:
            pools.give_back(conn)
        resp.media = {"ok": True, "data": {
            "user": {"id": user_id, "email": email, "name": name, "emailVerified": verified_at is not None,
                     "roles": sorted(roles), "createdAt": _iso(created_at)},
            "roles": sorted(roles),
            "permissions": sorted(permissions_for(roles, granted)),
            "activeOrganizationId": active_id,
            "organizations": [{"id": o[0], "actorType": o[1], "legalName": o[2], "kybStatus": o[3],
                               "membershipRole": o[4]} for o in organizations],
            "workspace": {"home": HOMES.get(actor_type), "redirectTo": redirect},
        }}


class Webhook:
    """`POST /api/webhooks/esign` by hand."""

    def __init__(self) -> None:
        self.secret = os.environ.get("ESIGN_WEBHOOK_SECRET", "").encode()

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = req.bounded_stream.read()
        expected = "sha256=" + hmac.new(self.secret, body, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected.encode(), (req.get_header("X-Esign-Signature-256") or "").encode()):
            raise falcon.HTTPUnauthorized()
        if abs(time.time() - int(req.get_header("X-Esign-Issued-At") or 0)) > 300:
            raise falcon.HTTPUnauthorized()
        event = json.loads(body)
        event_id = "bare-" + event["event_id"]
        conn = pools.connection()
        try:
            with conn.cursor() as cursor:
                cursor.execute("BEGIN")
                cursor.execute(EVENT_SQL, (event_id, event["event_name"], event["data"]["signature_request"]["id"],
                                           Json(event), int(req.get_header("X-Esign-Retry") or 1), "received",
                                           datetime.now(UTC)))
                inserted = cursor.fetchone() is not None
                if inserted:
                    cursor.execute(OUTBOX_SQL, (REFERENCE_ACTOR, Json([event_id]), datetime.now(UTC)))
                cursor.execute("COMMIT")
        finally:
            pools.give_back(conn)
        if inserted:
            pools.enqueue([event_id])
        resp.media = {"ok": True, "data": {"received": True, "duplicate": not inserted}}


def create_app() -> falcon.App:
    app = falcon.App()
    app.add_route("/api/health", Health())
    app.add_route("/api/auth/session", Session())
    app.add_route("/api/webhooks/esign", Webhook())
    return app
