"""`vitrine bench einvoicing`: transmissions dispatched and acknowledged through the operator
simulator, against posting the same PDFs to the simulator directly.

Vitrine: 1,000 invoice PDFs are stored and their transmission drafts created (transactions of
`BATCH`); each draft's outbox row reaches the dispatch actor of a real worker subprocess, which
posts the PDF to the simulator (running in this process, over HTTP); meanwhile this process runs
polling passes back to back (`POLL_EVERY` apart: the short interval), each one search per page of
100 flows changed since the last pass. The simulator answers `Ok` to a search as soon as the flow
exists. Figures:
dispatch throughput (drafts created to the last one `sent`), time from the draft to `acknowledged`
(p50, p99), and operator calls per transmission (goal: at most 2, one post and a share of the
searches; a token call per process calling the operator). Reference: the same PDFs posted by
`OdpClient.submit_flow` from as many threads as the worker has, with no database and no lifecycle:
the floor the operator sets. With `EINVOICING_OPERATOR=afnor` in its environment, the same run goes
through the AFNOR XP Z12-013 platform simulator and client instead (docs/einvoicing.md, "Choosing
a platform").
"""

from __future__ import annotations

import os
import statistics
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

from ops.bench.report import SHARED_CORES_NOTE, Figure, Result

NAME = "einvoicing"
DESCRIPTION = ("1,000 transmissions dispatched by the worker and acknowledged by polling through the operator "
               "simulator; reference: the same posts made directly")
BATCH = 50
POLL_EVERY = 0.1  # seconds between polling passes
CLIENT_ID, CLIENT_SECRET, ENTITY_ID = "bench-client", "bench-odp-secret", "ent-bench"
AFNOR_SCOPE = "afnor:platform"
OPERATOR_PROCESSES = 2  # the worker subprocess (dispatch) and this process (polling), a token cache each


def run(stack, quick: bool) -> Result:
    from backend.db import database, transaction
    from backend.einvoicing import polling
    from backend.einvoicing.drafts import create_transmission_draft
    from backend.einvoicing.lifecycle import INVOICE_PDF_CONTEXT
    from backend.einvoicing.models import Transmission, TransmissionEvent
    from backend.runtime import current_runtime
    from ops.bench.stack import WORKER_THREADS
    from ops.simulators.esign_store import minimal_pdf

    count = 100 if quick else 1_000
    storage = current_runtime().storage
    run_id = uuid.uuid4().hex[:6]
    pdf = minimal_pdf("bench invoice")

    afnor = (os.environ.get("EINVOICING_OPERATOR") or "odp").strip().lower() == "afnor"
    simulator, new_client, env = _afnor_platform() if afnor else _odp_platform()
    with simulator, database.connection_context():

        # Reference: the same posts, straight to the simulator.
        reference_client = new_client()
        began = time.perf_counter()
        with ThreadPoolExecutor(max_workers=WORKER_THREADS) as pool:
            list(pool.map(lambda i: reference_client.submit_flow(tracking_id=f"REF-{run_id}-{i}", name="ref.pdf",
                                                                 content=pdf), range(count)))
        reference_seconds = time.perf_counter() - began
        reference_calls = dict(simulator.store.calls)
        # The reset also revokes the tokens issued so far: the poller, a process of its own in
        # production, starts with a client (and a token cache) of its own. Sharing the reference's
        # cached token made its first search a 401, counted, and that transmission searched again
        # by the next pass (1,001 searches for 1,000 transmissions, 2 token calls for the poller).
        simulator.store.reset()
        client = new_client()

        numbers = [f"FAC-BENCH-{run_id}-{i:06d}" for i in range(count)]
        for number in numbers:
            storage.put_bytes(INVOICE_PDF_CONTEXT, f"billing/invoices/{number}.pdf", pdf, "application/pdf")
        with stack.worker("worker", env=env):
            probe_worker(stack)
            stop = threading.Event()
            poller = threading.Thread(target=poll, args=(stop, client, storage, polling), daemon=True)
            poller.start()
            began = time.perf_counter()
            for start in range(0, count, BATCH):
                with transaction():
                    for number in numbers[start:start + BATCH]:
                        create_transmission_draft(invoice_number=number, document_kind="invoice",
                                                  flow_type="fr_domestic_b2b",
                                                  document_pdf_key=f"billing/invoices/{number}.pdf",
                                                  amount_incl_tax_cents=12_000, invoice_kind="platform_sale")
            mine = Transmission.invoice_number.startswith(f"FAC-BENCH-{run_id}-")
            undispatched = Transmission.status.in_(["pending_dispatch", "dispatching"])
            wait(stack, lambda: not Transmission.select().where(mine, undispatched).exists(), timeout=600)
            dispatched_seconds = time.perf_counter() - began
            settled = Transmission.status.in_(["acknowledged", "failed", "rejected"])
            wait(stack, lambda: Transmission.select().where(mine, settled).count() == count, timeout=600)
            acknowledged_seconds = time.perf_counter() - began
            stop.set()
            poller.join(timeout=30)
        calls = dict(simulator.store.calls)
        rows = list(Transmission.select(Transmission.created_at, TransmissionEvent.occurred_at.alias("acked"))
                    .join(TransmissionEvent, on=(TransmissionEvent.transmission == Transmission.id))
                    .where(mine, TransmissionEvent.to_status == "acknowledged").dicts())
        latencies = sorted((row["acked"] - row["created_at"]).total_seconds() for row in rows)
        statuses = {s: Transmission.select().where(mine, Transmission.status == s).count()
                    for s in ("acknowledged", "failed", "rejected", "sent")}
        flows_at_operator = len(simulator.store.flows)

    per_transmission = (calls["submit"] + calls["search"] + calls.get("get", 0)) / count
    p50, p99 = _percentile(latencies, 50), _percentile(latencies, 99)
    return Result(
        title=f"{count:,} transmissions: draft -> outbox -> dispatch actor -> "
              f"{'AFNOR platform' if afnor else 'operator'} simulator -> polling",
        reference=f"{'AfnorClient' if afnor else 'OdpClient'}.submit_flow x {count:,} from {WORKER_THREADS} threads, "
                  "no database",
        settings=[stack.worker_settings, f"polling passes every {POLL_EVERY * 1000:.0f} ms in the bench process, "
                  "one search per 100 changed flows; simulator answers Ok at the first search",
                  f"drafts in transactions of {BATCH}"],
        figures=[
            Figure("dispatch (transmissions/s)", count / dispatched_seconds, count / reference_seconds),
            Figure("draft to acknowledged, all (s)", acknowledged_seconds, reference_seconds, summary=False),
            Figure("draft to acknowledged p50 (s)", p50, 0.0, summary=False),
            Figure("draft to acknowledged p99 (s)", p99, 0.0, summary=False),
            Figure("operator calls per transmission", per_transmission,
                   (reference_calls["submit"] + reference_calls["search"]) / count, summary=False),
            Figure("token calls per operator process", calls["token"] / OPERATOR_PROCESSES, reference_calls["token"],
                   summary=False),
        ],
        checks=[
            f"acknowledged: {statuses['acknowledged']} of {count} (failed {statuses['failed']}, "
            f"rejected {statuses['rejected']}, still sent {statuses['sent']})",
            f"flows at the operator: {flows_at_operator} (expected {count}: none posted twice)",
            f"operator calls per transmission: {per_transmission:.3f} "
            f"({calls['submit']} posts, {calls['search']} searches, every call received counted, refused or not; "
            f"goal at most 2)",
            f"token calls: {calls['token']} for {OPERATOR_PROCESSES} processes calling the operator "
            f"(the worker, this process's poller; expected one each)",
        ],
        notes=[SHARED_CORES_NOTE, "p50/p99 have no reference (the reference has no lifecycle): shown as 0"],
        ok=statuses["acknowledged"] == count and flows_at_operator == count,
    )


def _odp_platform():
    """Specification C's operator: its simulator, a client maker, the worker's settings."""
    from backend.einvoicing.operator_client import OdpClient
    from ops.simulators.odp import OdpSimulator
    from ops.simulators.odp_store import Settings

    simulator = OdpSimulator(client_id=CLIENT_ID, client_secret=CLIENT_SECRET, entity_id=ENTITY_ID,
                             settings=Settings(auto_ok_after_seconds=0))

    def new_client() -> OdpClient:
        return OdpClient(base_url=simulator.url, token_url=simulator.token_url, client_id=CLIENT_ID,
                         client_secret=CLIENT_SECRET, entity_id=ENTITY_ID)

    return simulator, new_client, {"ODP_BASE_URL": simulator.url, "ODP_TOKEN_URL": simulator.token_url,
                                   "ODP_CLIENT_ID": CLIENT_ID, "ODP_CLIENT_SECRET": CLIENT_SECRET,
                                   "ODP_ENTITY_ID": ENTITY_ID}


def _afnor_platform():
    """An AFNOR XP Z12-013 platform: its simulator, a client maker, the worker's settings."""
    from backend.einvoicing.afnor_client import AfnorClient
    from ops.simulators.afnor import AfnorSimulator
    from ops.simulators.odp_store import Settings

    simulator = AfnorSimulator(client_id=CLIENT_ID, client_secret=CLIENT_SECRET,
                               settings=Settings(auto_ok_after_seconds=0, scope=AFNOR_SCOPE))

    def new_client() -> AfnorClient:
        return AfnorClient(flow_url=simulator.flow_url, directory_url=simulator.directory_url,
                           token_url=simulator.token_url, client_id=CLIENT_ID, client_secret=CLIENT_SECRET,
                           scope=AFNOR_SCOPE)

    return simulator, new_client, {"EINVOICING_OPERATOR": "afnor", "AFNOR_FLOW_URL": simulator.flow_url,
                                   "AFNOR_DIRECTORY_URL": simulator.directory_url,
                                   "AFNOR_TOKEN_URL": simulator.token_url, "AFNOR_CLIENT_ID": CLIENT_ID,
                                   "AFNOR_CLIENT_SECRET": CLIENT_SECRET, "AFNOR_SCOPE": AFNOR_SCOPE}


def probe_worker(stack) -> None:
    from actors.broker import queue_sizes
    from actors.diagnostics import noop

    broker = stack.broker()
    noop.send("probe")
    wait(stack, lambda: all(row["messages"] == 0 for row in queue_sizes(broker) if row["queue"] == "default"),
          timeout=60)


def poll(stop: threading.Event, client, storage, polling) -> None:
    from backend.db import database

    with database.connection_context():
        while not stop.is_set():
            polling_pass = polling.start_pass_if_due(1)
            if polling_pass is not None:
                polling.run_pass(polling_pass, client=client, storage=storage)
            stop.wait(POLL_EVERY)


def wait(stack, condition, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        stack.check_alive("worker")
        if time.monotonic() > deadline:
            raise RuntimeError(f"not done after {timeout:g} s")
        time.sleep(0.05)


def _percentile(values: list[float], percent: int) -> float:
    if not values:
        return 0.0
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[percent - 1]
