"""`vitrine bench monthend`: the month-end run. 1,000 collected reservations are due for
self-billing; one pass of the self-billing scheduler runs on a worker configured as `vitrine dev`
runs it (`ops.dev.WORKER_PROCESSES` x `WORKER_THREADS`), with `vitrine dev`'s settings (the
platform's legal identity, the scheduler on) and the self-billed invoices' e-invoicing on.
Measured: from the scheduler's message to the moment every invoice is issued, its Factur-X PDF
stored, its e-mail written (an `.eml` file: no `SMTP_URL`) and its transmission acknowledged
through the operator simulator (running in this process, over HTTP; this process polls it every
`POLL_EVERY`, as the clock's polling job would, see `ops.bench.einvoicing`).

Reference: weasyprint alone rendering the same invoices' final HTML with the same PDF/A-3 options
(the `invoice` scenario's reference), by as many processes as the worker has, warmed up and frozen
(`gc.freeze()`, as the worker's boot heap is) first, with the worker's collector thresholds.
Printed: the CPU use of each core during both, and the CPU seconds of the worker, PostgreSQL and
this process (poller and simulator) during the run.

Set-up (not measured): the `billing` scenario's reservations (`ops.bench.billing.populate`: one
industrial customer, one distributor, approved `principal_seller` reservations), moved to a
fortnight that ended a month ago, collected through the collection service in this process (the
sales, their payments and their entries, as in production), the distributor's billing e-mail set
and its self-billing mandate signed. The sales' own follow-ups (their PDFs) ran long before a
month end: their outbox rows are closed and their messages dropped before the worker starts.
Checks: the pass issued every invoice and failed none; one e-mail and one transmission per
invoice, one flow per invoice at the operator; the books and the invoice series verified
(`backend.billing.accounting.verify`, stored PDFs read back included); no outbox row left.
"""

from __future__ import annotations

import gc
import hashlib
import multiprocessing
import os
import threading
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from ops.bench import billing, einvoicing
from ops.bench.report import SHARED_CORES_NOTE, Figure, Result
from ops.bench.stack import process_tree_cpu_seconds

NAME = "monthend"
DESCRIPTION = ("1,000 reservations self-billed by one scheduler pass on vitrine dev's worker: invoice, PDF, "
               "e-mail, transmission acknowledged; reference: weasyprint alone on the same PDFs, as many processes")
KIND = "supplier_self_billed"
BILLING_EMAIL = "facturation@distributeur.example"
ENDED_AGO = timedelta(days=30)  # the reservations' fortnight ended a month ago: every one is due
TIMEOUT = 1_800  # seconds: a run that has not finished by then failed
# When the last invoice reached each step, in seconds from the scheduler's message: where a run's
# time goes (the PDF's is its transmission draft's, made once the PDF is stored).
MILESTONES = (
    ("last invoice issued (s)", "SELECT max(issued_at) FROM billing_invoice WHERE kind = %(kind)s"),
    ("last PDF stored (s)", "SELECT max(created_at) FROM einvoice_transmission WHERE invoice_kind = %(kind)s"),
    ("last e-mail written (s)", "SELECT max(sent_at) FROM email_message WHERE template = 'self_billed_document'"),
    ("last transmission sent (s)", "SELECT max(e.occurred_at) FROM einvoice_transmission_event e JOIN "
     "einvoice_transmission t ON t.id = e.transmission_id WHERE t.invoice_kind = %(kind)s AND e.to_status = 'sent'"),
)
PROGRESS = """
SELECT (SELECT count(*) FROM billing_invoice WHERE kind = %(kind)s),
       (SELECT count(*) FROM billing_invoice WHERE kind = %(kind)s AND pdf_sha256 IS NOT NULL),
       (SELECT count(*) FROM billing_document_mailing m JOIN billing_invoice i ON i.id = m.invoice_id
         JOIN email_message e ON e.id = ANY(m.email_message_ids)
         WHERE i.kind = %(kind)s AND e.status = 'sent'),
       (SELECT count(*) FROM einvoice_transmission WHERE invoice_kind = %(kind)s AND status = 'acknowledged')
"""


def run(stack, quick: bool) -> Result:
    from backend.config import load_config
    from backend.db import database
    from backend.documents import rendering
    from backend.runtime import current_runtime
    from ops.dev import WORKER_PROCESSES, WORKER_THREADS

    count = 100 if quick else 1_000
    storage = current_runtime().storage
    load_before = billing.load_average()
    done = month_end(stack, count, processes=WORKER_PROCESSES, threads=WORKER_THREADS)
    with database.connection_context():
        reference = _reference(count, config=load_config(dict(stack.env, **done.env)), storage=storage,
                               processes=WORKER_PROCESSES)
    load_after = billing.load_average()
    run = done.run
    return Result(
        title=f"month-end run: {count:,} reservations self-billed in one scheduler pass, each invoice's PDF, e-mail "
              "and acknowledged transmission",
        reference=f"weasyprint.HTML(string=<each invoice's final HTML>).write_pdf(pdf_variant='pdf/a-3b') x {count:,}, "
                  f"{WORKER_PROCESSES} process(es), warmed up",
        settings=[f"worker as vitrine dev runs it: dramatiq, {WORKER_PROCESSES} process(es) x {WORKER_THREADS} threads "
                  "(ops/dev.py)",
                  f"operator simulator and e-invoicing polling every {einvoicing.POLL_EVERY * 1000:.0f} ms in this "
                  "process; e-mails written as .eml files",
                  f"set-up (not measured): {done.setup_seconds:.1f} s for {count:,} reservations collected by the "
                  "service",
                  f"weasyprint's font subsetting: {rendering.font_subsetting()} (fonttools is the slower path)"],
        figures=[
            Figure("month-end run (s)", run.seconds, reference.seconds),
            Figure("per invoice (ms)", 1000 * run.seconds / count, 1000 * reference.seconds / count, summary=False),
            *(Figure(label, at, 0.0, summary=False) for label, at in run.milestones),
            *(Figure(f"core {n} busy (%)", 100 * mine, 100 * theirs, summary=False)
              for n, (mine, theirs) in enumerate(zip(run.cores, reference.cores, strict=True))),
            Figure("worker CPU per invoice (ms)", 1000 * run.worker_cpu / count, 1000 * reference.cpu / count,
                   summary=False),
            Figure("PostgreSQL CPU per invoice (ms)", 1000 * run.postgres_cpu / count, 0.0, summary=False),
            Figure("bench process CPU per invoice (ms)", 1000 * run.bench_cpu / count, 0.0, summary=False),
        ],
        checks=[*done.checks,
                f"reference PDF + the invoice's Factur-X XML = the stored PDF of {reference.sample}: "
                f"{reference.identical} (expected True: the reference renders the same documents)"],
        notes=[f"cores busy: {', '.join(f'{100 * c:.0f} %' for c in run.cores)} during the run, "
               f"{', '.join(f'{100 * c:.0f} %' for c in reference.cores)} during the reference (the whole machine's "
               "use, other users included)",
               "reference CPU: the rendering processes'; PostgreSQL and this process have no reference (shown as 0)",
               f"load average (1, 5, 15 min): {load_before} before, {load_after} after", SHARED_CORES_NOTE],
        ok=done.ok and reference.identical,
    )


@dataclass
class MonthEnd:
    """One month-end run: its timings, the environment its worker ran with, what it checked."""

    run: _Run
    env: dict[str, str]
    setup_seconds: float
    checks: list[str]
    ok: bool


def month_end(stack, count: int, *, processes: int, threads: int) -> MonthEnd:
    """`count` reservations made due (not measured), then one scheduler pass on a worker of
    `processes` x `threads` until every invoice is issued, stored, mailed and acknowledged."""
    from backend.db import database
    from backend.documents.seeding import seed_default_versions
    from backend.runtime import current_runtime
    from ops.dev import DEMO_LEGAL_IDENTITY
    from ops.simulators.odp import OdpSimulator
    from ops.simulators.odp_store import Settings

    storage = current_runtime().storage
    with database.connection_context():
        seed_default_versions(storage)
        setup_began = time.perf_counter()
        prepare_due_reservations(count, config=stack.config, broker=stack.broker())
        setup_seconds = time.perf_counter() - setup_began
        postgres = billing.postgres_pid()
        with OdpSimulator(client_id=einvoicing.CLIENT_ID, client_secret=einvoicing.CLIENT_SECRET,
                          entity_id=einvoicing.ENTITY_ID, settings=Settings(auto_ok_after_seconds=0)) as simulator:
            env = dict(DEMO_LEGAL_IDENTITY, ODP_BASE_URL=simulator.url, ODP_TOKEN_URL=simulator.token_url,
                       ODP_CLIENT_ID=einvoicing.CLIENT_ID, ODP_CLIENT_SECRET=einvoicing.CLIENT_SECRET,
                       ODP_ENTITY_ID=einvoicing.ENTITY_ID, EINVOICING_SELF_BILLING_ENABLED="true",
                       SELF_BILLING_SCHEDULER_ENABLED="true", SELF_BILLING_SCHEDULER_INTERVAL_MS="60000")
            with stack.worker("worker", env=env, processes=processes, threads=threads) as worker:
                einvoicing.probe_worker(stack)
                run = _month_end(stack, worker.pid, postgres, simulator, count)
            flows, posts = len(simulator.store.flows), simulator.store.calls["submit"]
        checks, ok = month_end_checks(count, storage=storage, data_dir=Path(stack.config.data_dir))
    checks.append(f"flows at the operator: {flows} from {posts} posts (expected {count}: none posted twice)")
    return MonthEnd(run, env, setup_seconds, checks, ok and flows == count == posts)


def prepare_due_reservations(count: int, *, config, broker) -> list[str]:
    """`count` reservations in the state the scheduler's pass selects (`scheduler.candidates`):
    approved `principal_seller`, ended `ENDED_AGO`, collected (`reservation_total_paid`), their
    distributor's self-billing mandate signed and its billing e-mail set. The sales' follow-ups
    are closed and dropped (`broker`'s queues emptied): only the month end's work remains."""
    from backend import clock, outbox
    from backend.billing.collection import collect
    from backend.billing.models import PaymentMethod, SelfBillingMandate, SelfBillingMandateStatus
    from backend.db import database, transaction
    from backend.identity.models import BillingProfile
    from backend.marketplace.models import Campaign, Reservation

    ids, _ = billing.populate(count)
    reservation = Reservation.get_by_id(ids[0])
    shift = reservation.ends_at - (clock.now() - ENDED_AGO)
    with transaction():
        Campaign.update(starts_at=Campaign.starts_at - shift, ends_at=Campaign.ends_at - shift).where(
            Campaign.id == reservation.campaign_id).execute()
        Reservation.update(starts_at=Reservation.starts_at - shift, ends_at=Reservation.ends_at - shift,
                           approved_at=Reservation.approved_at - shift).where(Reservation.id.in_(ids)).execute()
        distributor = reservation.distributor_organization_id
        BillingProfile.update(billing_email=BILLING_EMAIL).where(BillingProfile.organization == distributor).execute()
        SelfBillingMandate.create(organization_id=distributor, status=SelfBillingMandateStatus.SIGNED,
                                  esign_request_ref=f"bench-{distributor}", requested_at=clock.now(),
                                  signed_at=clock.now())
    customer = reservation.industrial_organization_id
    for reservation_id in ids:
        collect.collect(reservation_id=reservation_id, industrial_organization_id=customer,
                           method=PaymentMethod.BANK_TRANSFER, key=f"bench-monthend-{reservation_id}", user_id=None,
                           config=config)
    outbox.flush()
    broker.flush_all()
    database.execute_sql("UPDATE outbox_message SET done_at = now() WHERE done_at IS NULL")
    database.execute_sql("ANALYZE")
    return ids


class _Run:
    def __init__(self, seconds: float, cores: list[float], worker_cpu: float, postgres_cpu: float,
                 bench_cpu: float, milestones: list[tuple[str, float]]) -> None:
        self.seconds, self.cores, self.milestones = seconds, cores, milestones
        self.worker_cpu, self.postgres_cpu, self.bench_cpu = worker_cpu, postgres_cpu, bench_cpu


def _month_end(stack, worker_pid: int, postgres: int | None, simulator, count: int) -> _Run:
    """The scheduler's message sent, then waited for until every invoice is through (this process
    polling the operator meanwhile): wall time, each core's use, CPU seconds by process."""
    from actors.billing.self_billing import self_billing_scheduler
    from backend import clock
    from backend.db import database
    from backend.einvoicing import polling
    from backend.einvoicing.operator_client import OdpClient
    from backend.runtime import current_runtime

    client = OdpClient(base_url=simulator.url, token_url=simulator.token_url, client_id=einvoicing.CLIENT_ID,
                       client_secret=einvoicing.CLIENT_SECRET, entity_id=einvoicing.ENTITY_ID)
    stop = threading.Event()
    poller = threading.Thread(target=einvoicing.poll, args=(stop, client, current_runtime().storage, polling),
                              daemon=True)
    meters = {"worker": lambda: process_tree_cpu_seconds(worker_pid),
              "postgres": (lambda: process_tree_cpu_seconds(postgres)) if postgres else (lambda: 0.0),
              "bench": lambda: sum(os.times()[:2])}
    before, cores = {what: meter() for what, meter in meters.items()}, core_ticks()
    began = time.perf_counter()
    poller.start()
    sent_at = clock.now()
    self_billing_scheduler.send()

    def done() -> bool:
        return all(n == count for n in database.execute_sql(PROGRESS, {"kind": KIND}).fetchone())

    try:
        einvoicing.wait(stack, done, timeout=TIMEOUT)
    finally:
        stop.set()
        poller.join(timeout=30)
    seconds = time.perf_counter() - began
    milestones = [(label, (database.execute_sql(sql, {"kind": KIND}).fetchone()[0] - sent_at).total_seconds())
                  for label, sql in MILESTONES]
    spent = {what: meter() - before[what] for what, meter in meters.items()}
    return _Run(seconds, cores_busy(cores, core_ticks()), spent["worker"], spent["postgres"], spent["bench"],
                milestones)


def month_end_checks(count: int, *, storage, data_dir: Path) -> tuple[list[str], bool]:
    """What the run must have done, exactly once each (lines, and whether all hold)."""
    from backend import outbox
    from backend.billing.accounting.verify import verify
    from backend.billing.self_billing.scheduler import SelfBillingPass
    from backend.db import database

    last = SelfBillingPass.select().order_by(SelfBillingPass.started_at.desc()).first()
    issued, failed = (last.issued, last.failed) if last else (0, 0)
    (invoices, series, mailings, emails, messages_per_invoice, transmissions, per_invoice, retried) = (
        database.execute_sql("""
        SELECT (SELECT count(*) FROM billing_invoice WHERE kind = %(kind)s),
               (SELECT count(DISTINCT series) FROM billing_invoice WHERE kind = %(kind)s),
               (SELECT count(*) FROM billing_document_mailing m JOIN billing_invoice i ON i.id = m.invoice_id
                 WHERE i.kind = %(kind)s),
               (SELECT count(*) FROM email_message WHERE template = 'self_billed_document'),
               (SELECT coalesce(max(cardinality(m.email_message_ids)), 0) FROM billing_document_mailing m),
               (SELECT count(*) FROM einvoice_transmission WHERE invoice_kind = %(kind)s),
               (SELECT count(DISTINCT invoice_number) FROM einvoice_transmission WHERE invoice_kind = %(kind)s),
               (SELECT count(*) FROM einvoice_transmission WHERE invoice_kind = %(kind)s AND dispatch_attempts <> 1)
        """, {"kind": KIND}).fetchone())
    ids = [row[0] for row in database.execute_sql("SELECT id FROM email_message WHERE template = %s",
                                                  ("self_billed_document",))]
    # `<stamp>-<message id>.eml` (`backend.email.messages`): the stamp holds no dash, the id does.
    files = {path.name.partition("-")[2].removesuffix(".eml"): path for path in (data_dir / "mail").glob("*.eml")}
    written = sum(message_id in files for message_id in ids)
    for message_id in ids:  # counted: the run's files do not pile up in the bench's data directory
        if message_id in files:
            files[message_id].unlink()
    breaches = verify(storage=storage)
    backlog = outbox.backlog()
    unsent = outbox.unsent_count()
    checks = [
        (f"scheduler pass: {issued} issued, {failed} failed (expected {count}, 0)", issued == count and not failed),
        (f"self-billed invoices: {invoices} in {series} series (expected {count})", invoices == count),
        (f"e-mails: {mailings} documents mailed, {emails} messages, at most {messages_per_invoice} per document, "
         f"{written} .eml files written (expected {count}, {count}, 1, {count})",
         mailings == emails == written == count and messages_per_invoice == 1),
        (f"transmissions: {transmissions} for {per_invoice} invoices, {retried} dispatched more than once "
         f"(expected {count}, {count}, 0)", transmissions == per_invoice == count and not retried),
        (f"breaches of the books, the series and the stored PDFs: {len(breaches)} (expected 0)"
         f"{': ' + breaches[0] if breaches else ''}", not breaches),
        (f"outbox: {unsent} unsent, {backlog.get('dead', 0)} dead (expected 0, 0)",
         not unsent and not backlog.get("dead", 0)),
    ]
    return [line for line, _ in checks], all(held for _, held in checks)


class _Reference:
    def __init__(self, seconds: float, cores: list[float], cpu: float, sample: str, identical: bool) -> None:
        self.seconds, self.cores, self.cpu, self.sample, self.identical = seconds, cores, cpu, sample, identical


def _reference(count: int, *, config, storage, processes: int) -> _Reference:
    """weasyprint alone on each self-billed invoice's final HTML (what `render_invoice_pdf` gives
    weasyprint), in `processes` spawned processes warmed up first; one result checked against the
    stored PDF once the Factur-X XML is embedded."""
    from backend.billing.documents.cii import build_cii
    from backend.billing.documents.facturx import embed_facturx
    from backend.billing.documents.invoice_snapshot import snapshot_of_invoice
    from backend.billing.documents.render import TEMPLATE_KEY, pdf_options, template_context
    from backend.billing.models import Invoice
    from backend.documents import rendering, versions
    from backend.documents.catalog import catalog_entry

    entry = catalog_entry(TEMPLATE_KEY)
    template = versions.require_current_version(TEMPLATE_KEY, versions.Kind.MARKDOWN)
    style = versions.require_current_version(rendering.PDF_STYLE_KEY, versions.Kind.PDF_CSS)
    content, css = versions.read_content(storage, template), versions.read_content(storage, style)
    invoices = list(Invoice.select().where(Invoice.kind == KIND).order_by(Invoice.sequence))
    snapshots = [snapshot_of_invoice(invoice, config) for invoice in invoices]
    work = [(rendering.render_html(entry, content, css, template_context(snapshot), config,
                                   title=snapshot.document_label), pdf_options(snapshot)) for snapshot in snapshots]
    context = multiprocessing.get_context("spawn")
    ready = context.Barrier(processes + 1)
    before = {child.pid for child in multiprocessing.active_children()}
    with context.Pool(processes, initializer=_warm_up, initargs=(work[0], ready)) as pool:
        ready.wait()
        pids = [child.pid for child in multiprocessing.active_children() if child.pid not in before]
        cpu_before, cores = sum(process_tree_cpu_seconds(pid) for pid in pids), core_ticks()
        began = time.perf_counter()
        first = pool.map(render_reference, work, chunksize=max(1, count // (8 * processes)))[0]
        seconds = time.perf_counter() - began
        busy, cpu = cores_busy(cores, core_ticks()), sum(process_tree_cpu_seconds(pid) for pid in pids) - cpu_before
    embedded = embed_facturx(first, build_cii(snapshots[0]), moment=snapshots[0].issued_at)
    identical = hashlib.sha256(embedded).hexdigest() == invoices[0].pdf_sha256
    return _Reference(seconds, busy, cpu, invoices[0].number, identical)


def _warm_up(item: tuple[str, dict], ready) -> None:
    from actors.broker import WORKER_GC_THRESHOLD
    from backend.billing.documents.render import FONT_TIMESTAMP_EPOCH

    os.environ.setdefault("SOURCE_DATE_EPOCH", FONT_TIMESTAMP_EPOCH)  # as `render_invoice_pdf`
    render_reference(item)
    # What the process holds once warm leaves the collector's generations, and the collector
    # runs as often, as in the worker (`actors.broker.FrozenBootHeap`): the reference renders at
    # its best.
    gc.collect()
    gc.freeze()
    gc.set_threshold(*WORKER_GC_THRESHOLD)
    ready.wait()


def render_reference(item: tuple[str, dict]) -> bytes:
    from weasyprint import HTML

    document_html, options = item
    return HTML(string=document_html).write_pdf(**options)


def core_ticks() -> list[tuple[int, int]]:
    """(busy, total) clock ticks of each core so far (Linux /proc/stat; idle and iowait are not busy)."""
    ticks = []
    for line in Path("/proc/stat").read_text().splitlines():
        name, *fields = line.split()
        if name.startswith("cpu") and name != "cpu":
            numbers = [int(x) for x in fields[:8]]
            ticks.append((sum(numbers) - numbers[3] - numbers[4], sum(numbers)))
    return ticks


def cores_busy(before: list[tuple[int, int]], after: list[tuple[int, int]]) -> list[float]:
    """Each core's busy fraction between two `core_ticks` readings."""
    return [(b1 - b0) / max(t1 - t0, 1) for (b0, t0), (b1, t1) in zip(before, after, strict=True)]
