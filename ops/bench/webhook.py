"""`vitrine bench webhook`: signed provider deliveries to `POST /api/webhooks/esign` over HTTP on
gunicorn, next to the same deliveries to a bare reference app, then their processing by a real worker.

Vitrine: 5,000 deliveries (quick: 500) at 32 keep-alive connections, each with its own body and
`X-Esign-Signature-256` / `X-Esign-Issued-At` / `X-Esign-Retry` headers; one delivery in five is
a provider retry of an event of the same round (same `event_id`, shuffled in, so a retry may race
its first delivery). Every acknowledgement costs the HMAC over the raw body, the issued-at
window, `INSERT ... ON CONFLICT (event_id) DO NOTHING` with the outbox row in one transaction,
and, after the commit, the hand-over to Redis. Reference: the same deliveries (the same plan, so
the same retries) to the bare app (`ops/bench/bare_app.py`: Falcon without middleware doing the
HMAC, the window, the same two INSERTs in one transaction by hand with psycopg2 and the
Dramatiq message's `LPUSH` in the request thread) on a second gunicorn with the same settings,
in rounds alternating with Vitrine's. Its rows (`bare-...`) and messages (a queue no worker reads)
are deleted at the end.
The events name 50 onboarding envelopes in `pending_signature` (progress events only: no
provider call). Once every delivery is answered, a Dramatiq worker processes the queued events;
the run counts, from the database and from the worker's log, that each event was stored once and
processed exactly once.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import random
import time
import uuid
from collections import Counter
from functools import partial

from ops.bench.load import PlannedRequest, ServerCost, run_plan
from ops.bench.report import SHARED_CORES_NOTE, Figure, Result

NAME = "webhook"
DESCRIPTION = ("5,000 signed deliveries to POST /api/webhooks/esign at 32 connections, then processed once each; "
               "reference: a bare Falcon + psycopg2 app doing the HMAC, the same INSERTs and the Redis send")
SECRET = "whsec_bench_0123456789"  # noqa: S105 (a benchmark-only HMAC key, not a credential)
PATH = "/api/webhooks/esign"
APP = "api.app:create_app()"
BARE_APP = "ops.bench.bare_app:create_app()"
CONNECTIONS = 32
CLIENT_PROCESSES = 2
ENVELOPES = 50
REPLAY_EVERY = 5  # one delivery in five is a provider retry of an event already in the round
WARMUP_DELIVERIES = 256
EVENT_NAMES = ("signer.notified", "signer.link_opened")
PROCESSED_LINE = "signature event processed"


def _deliveries(prefix: str, count: int, provider_ids: list[str], rng: random.Random) -> tuple[list, int]:
    """`count` signed deliveries (retries included, shuffled) and how many distinct events they carry."""
    distinct = count - count // REPLAY_EVERY
    now = int(time.time())
    events = []
    for i in range(distinct):
        body = json.dumps({
            "event_id": f"{prefix}-{i}", "event_name": EVENT_NAMES[i % len(EVENT_NAMES)], "event_time": str(now),
            "sandbox": True, "data": {
                "signature_request": {"id": provider_ids[i % len(provider_ids)], "status": "ongoing",
                                      "external_id": None},
                "signer": {"id": f"{prefix}-signer-{i % len(provider_ids)}", "status": "notified"}},
        }, separators=(",", ":")).encode()
        events.append(body)
    sends = [(body, 1) for body in events] + [(body, 2) for body in rng.sample(events, count - distinct)]
    rng.shuffle(sends)
    plan = [PlannedRequest("POST", PATH, body, (
        ("Content-Type", "application/json"),
        ("X-Esign-Signature-256", "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()),
        ("X-Esign-Issued-At", str(int(time.time()))),
        ("X-Esign-Retry", str(retry)),
    )) for body, retry in sends]
    return plan, distinct


def _envelopes(token: str) -> list[str]:
    """Organizations with an envelope each in `pending_signature`; returns the provider ids."""
    from stdnum.luhn import calc_check_digit

    from backend.db import transaction
    from backend.identity.models import Organization
    from backend.onboarding.models import SignatureRequest

    provider_ids = []
    with transaction():
        for n in range(ENVELOPES):
            prefix = f"{random.randrange(10_000_000, 99_999_999):08d}"
            siren = prefix + calc_check_digit(prefix)
            organization = Organization.create(id=f"industrial:{siren}", actor_type="industrial", siren=siren,
                                               legal_name=f"Banc d'essai {n}")
            pid = f"bench-{token}-request-{n}"
            SignatureRequest.create(organization=organization.id, status="pending_signature",
                                    provider_signature_request_id=pid, identity_verification_policy="qualified",
                                    signature_level="qualified_electronic_signature", signer_on_registry_extract=True)
            provider_ids.append(pid)
    return provider_ids


def _delete_reference_rows(stack) -> tuple[int, int]:
    """Delete the bare app's events, outbox rows and Redis messages: (events, outbox rows)."""
    from backend.db import database
    from ops.bench.bare_app import REFERENCE_ACTOR, REFERENCE_QUEUE

    with database.atomic():
        events = database.execute_sql("DELETE FROM esign_webhook_event WHERE event_id LIKE 'bare-%%'").rowcount
        rows = database.execute_sql("DELETE FROM outbox_message WHERE actor_name = %s", (REFERENCE_ACTOR,)).rowcount
    broker = stack.broker()
    broker.client.delete(f"{broker.namespace}:{REFERENCE_QUEUE}", f"{broker.namespace}:{REFERENCE_QUEUE}.msgs")
    return events, rows


def _processing_counts(log_path, prefix: str) -> Counter:
    """How many times the worker logged the processing of each of our events."""
    seen: Counter = Counter()
    with log_path.open(encoding="utf-8", errors="replace") as log:
        for line in log:
            if PROCESSED_LINE not in line or not line.startswith("{"):
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if entry.get("message") == PROCESSED_LINE and str(entry.get("eventId", "")).startswith(prefix):
                seen[entry["eventId"]] += 1
    return seen


def run(stack, quick: bool) -> Result:
    from backend.db import database
    from backend.onboarding.models import ProcessingStatus, SignatureEvent
    from backend.outbox import OutboxMessage

    deliveries, rounds = (500, 1) if quick else (5_000, 2)
    per_round = deliveries // rounds
    token = uuid.uuid4().hex[:8]
    prefix = f"bench-{token}-"
    rng = random.Random(6)
    distinct = 0

    with database.connection_context():
        provider_ids = _envelopes(token)
        stack.broker()  # the web processes hand committed outbox rows to this Redis
        secret = {"ESIGN_WEBHOOK_SECRET": SECRET}
        with stack.serve(APP, "web", env=secret) as server, stack.serve(BARE_APP, "bare", env=secret) as bare:
            plan, count = _deliveries(f"{prefix}warmup", WARMUP_DELIVERIES, provider_ids, rng)
            warm = run_plan(server.url, plan, connections=CONNECTIONS, processes=CLIENT_PROCESSES)
            warm_bare = run_plan(bare.url, plan, connections=CONNECTIONS, processes=CLIENT_PROCESSES)
            distinct += count
            hooks, bare_hooks = ServerCost(server), ServerCost(bare)
            for n in range(rounds):
                # The same deliveries to both, alternating which goes first: load other users put
                # on the machine hits both alike.
                plan, count = _deliveries(f"{prefix}{n}", per_round, provider_ids, rng)
                for side in (bare_hooks, hooks) if n % 2 == 0 else (hooks, bare_hooks):
                    side.measure(partial(run_plan, plan=plan, connections=CONNECTIONS, processes=CLIENT_PROCESSES))
                distinct += count
        reference_rows = _delete_reference_rows(stack)
        ours = SignatureEvent.select().where(SignatureEvent.event_id.startswith(prefix))
        stored = ours.count()
        queued = (OutboxMessage.select().where(OutboxMessage.actor_name == "process_signature_event").count())
        began = time.monotonic()
        with stack.worker("worker"):
            deadline = began + 300
            while (left := ours.where(SignatureEvent.processing_status == ProcessingStatus.RECEIVED).count()) and (
                    time.monotonic() < deadline):
                stack.check_alive("worker")
                time.sleep(0.1)
            drained = time.monotonic() - began
        processed = ours.where(SignatureEvent.processing_status == ProcessingStatus.PROCESSED).count()
    per_event = _processing_counts(stack.log_path("worker"), prefix)
    twice = sum(1 for times in per_event.values() if times > 1)

    ack, ref = hooks.combined, bare_hooks.combined
    slow = sum(1 for latency in ack.latencies_ms if latency >= 1000)
    failures = (ack.non_2xx + ack.errors + ref.non_2xx + ref.errors + warm.non_2xx + warm.errors
                + warm_bare.non_2xx + warm_bare.errors)
    exactly_once = stored == distinct and queued == distinct and processed == distinct and left == 0 and (
        len(per_event) == distinct and twice == 0)
    return Result(
        title=f"{deliveries:,} signed deliveries to POST {PATH}, {CONNECTIONS} keep-alive connections, "
              "then processed by a worker",
        reference="the same deliveries to a bare Falcon + psycopg2 app (ops/bench/bare_app.py): HMAC, window, "
                  "the same INSERTs in one transaction, the Redis send; same gunicorn settings, alternating rounds",
        settings=[
            stack.web_settings,
            f"client: {CLIENT_PROCESSES} processes x {CONNECTIONS // CLIENT_PROCESSES} connections, closed loop; "
            f"{rounds} round(s) of {per_round:,} deliveries per app (1 in {REPLAY_EVERY} a provider retry of an "
            f"event of the round) after {WARMUP_DELIVERIES} warm-up deliveries",
            f"{stack.worker_settings}, started once every delivery was answered; "
            f"events name {ENVELOPES} envelopes in pending_signature",
        ],
        figures=[
            Figure("server CPU per answer (ms)", hooks.cpu_ms_per_answer, bare_hooks.cpu_ms_per_answer),
            Figure("throughput (req/s)", ack.throughput, ref.throughput),
            Figure("acknowledgement p50 (ms)", ack.p50_ms, ref.p50_ms),
            Figure("acknowledgement p99 (ms)", ack.p99_ms, ref.p99_ms),
            Figure("requests measured", ack.requests, ref.requests, summary=False),
        ],
        checks=[
            f"non-2xx answers: {ack.non_2xx + warm.non_2xx} webhook, {ref.non_2xx + warm_bare.non_2xx} bare "
            "(expected 0)",
            f"connection errors: {ack.errors + warm.errors} webhook, {ref.errors + warm_bare.errors} bare (expected 0)",
            f"reference rows deleted after the run: {reference_rows[0]:,} events, {reference_rows[1]:,} outbox rows "
            f"(expected {distinct:,} each)",
            f"acknowledgements of 1 s or more (Specification A: under 1 s): {slow}",
            f"events stored: {stored:,} for {deliveries + WARMUP_DELIVERIES:,} deliveries (expected {distinct:,}, "
            f"one row per event_id); processing messages queued: {queued:,} (expected {distinct:,})",
            f"events processed exactly once: {processed:,} of {distinct:,} (worker log: {len(per_event):,} events "
            f"processed, {twice} more than once, {left} left unprocessed) in {drained:.1f} s from the worker's start, "
            f"{processed / drained if drained else 0:,.0f} events/s",
        ],
        notes=[
            "each acknowledgement commits the event and its outbox row, then hands the message to Redis (Vitrine: "
            "its hand-over thread, which also marks the row sent; the bare app: in the request thread)",
            SHARED_CORES_NOTE,
        ],
        ok=failures == 0 and exactly_once and reference_rows == (distinct, distinct),
    )
