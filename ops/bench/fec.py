"""`vitrine bench fec`: the FEC of a fiscal year of 1,000,000 entry lines downloaded through the
admin route (`GET /api/admin/accounting/fec`, gunicorn with the production settings, a streaming
client), next to a bare `COPY (SELECT ...) TO STDOUT` of the same rows.

The year is written straight into the books by `COPY` (not through the API: the postings are not
what is measured): 500,000 validated bank entries of two lines each (512 against 411 with a SIREN
auxiliary account), numbered and in validation order as the database numbers them, the books'
triggers set aside while loading, as the owner. It is built once per run, in the scenario's fresh
database.

- Vitrine: the whole file over HTTP (header, 1,000,000 records formatted by PostgreSQL,
  transcoded to ISO 8859-15 by the web process, streamed): lines per second, and the rise of the
  web processes' peak resident memory (VmHWM) during the download, after a warm-up request.
- Reference: `COPY (SELECT <the entries' and lines' columns> ... ORDER BY validation order) TO
  STDOUT` read by this process on its own connection, to nowhere: what reading the same rows in
  the same order costs the database, without formatting, transcoding or HTTP. The FEC as the
  command writes it (`write_fec`, to nowhere) is shown too, not a goal: the web's share.
"""

from __future__ import annotations

import os
import statistics
import time
from datetime import UTC, datetime, timedelta

import requests

from backend.billing.accounting import fec
from backend.db import database, transaction
from ops.bench import _printing
from ops.bench.report import Figure, Result
from ops.bench.stack import process_tree_peak_rss_mb

NAME = "fec"
DESCRIPTION = ("FEC of 1,000,000 entry lines downloaded through the admin route; reference: a bare "
               "COPY (SELECT ...) TO STDOUT of the same rows")
YEAR = 2026
SIRET = "73282932000074"
REFERENCE_SQL = """COPY (
    SELECT e.journal_code, e.number, e.entry_date, e.piece_ref, e.piece_date, e.validated_at, l.account,
           l.aux_account, l.aux_label, l.label, l.debit_cents, l.credit_cents
      FROM accounting_entry e JOIN accounting_line l ON l.entry_id = e.id
     WHERE e.fiscal_year = {year} AND e.number IS NOT NULL
     ORDER BY e.validation_seq, l.line_no) TO STDOUT"""
_BOOKS = ("accounting_entry", "accounting_line")


def _entries(count: int):
    """COPY text of `count` validated BQ entries of fiscal year YEAR."""
    start = datetime(YEAR, 1, 1, 9, tzinfo=UTC)
    for n in range(1, count + 1):
        moment = start + timedelta(seconds=n * 60)
        day = moment.date().isoformat()
        yield (f"bench-{n:07d}\tBQ\t{YEAR}\t{n}\t{day}\tFAC-RES-{YEAR}-{n:06d}\t{day}\tEncaissement "
               f"FAC-RES-{YEAR}-{n:06d}\tcollection\t{moment.isoformat()}\t{moment.isoformat()}\t{n}\n").encode()


def _lines(count: int):
    """COPY text of the two lines of each entry: 512 debit, 411<SIREN> credit."""
    for n in range(1, count + 1):
        cents = 10_000 + n % 90_000
        siren = f"{552100554 + n % 97:09d}"
        label = f"Encaissement FAC-RES-{YEAR}-{n:06d}"
        yield (f"bench-{n:07d}\t1\t512\t\\N\t\\N\t{label}\t{cents}\t0\n"
               f"bench-{n:07d}\t2\t411\t{siren}\tClient {siren} SAS\t{label}\t0\t{cents}\n").encode()


def _chunked(rows, size: int = 1 << 16):
    pending, length = [], 0
    for row in rows:
        pending.append(row)
        length += len(row)
        if length >= size:
            yield b"".join(pending)
            pending, length = [], 0
    if pending:
        yield b"".join(pending)


def _build_year(entries: int) -> float:
    """Write the year's entries and lines by COPY, the books' own triggers set aside (the rows are
    as the validation would leave them); seconds taken."""
    began = time.perf_counter()
    with transaction():
        cursor = database.cursor()
        for table in _BOOKS:
            database.execute_sql(f"ALTER TABLE {table} DISABLE TRIGGER USER")
        cursor.copy_expert("COPY accounting_entry (id, journal_code, fiscal_year, number, entry_date, piece_ref,"
                           " piece_date, label, event, created_at, validated_at, validation_seq) FROM STDIN",
                           _printing.Reader(_chunked(_entries(entries))))
        cursor.copy_expert("COPY accounting_line (entry_id, line_no, account, aux_account, aux_label, label,"
                           " debit_cents, credit_cents) FROM STDIN", _printing.Reader(_chunked(_lines(entries))))
        database.execute_sql("SET CONSTRAINTS ALL IMMEDIATE")  # the deferred foreign keys checked now
        for table in _BOOKS:
            database.execute_sql(f"ALTER TABLE {table} ENABLE TRIGGER USER")
    database.execute_sql("VACUUM (ANALYZE) accounting_entry, accounting_line")
    return time.perf_counter() - began


def _admin_token() -> str:
    from backend.identity.models import User
    from backend.identity.sessions import open_session

    with transaction():
        return open_session(User.create(email="bench-accountant@example.com", name="Bench", roles=["admin"]),
                            ttl_days=1)


class _Sink:
    """A file for `copy_expert` that keeps nothing: bytes and lines counted."""

    def __init__(self) -> None:
        self.size = self.lines = 0

    def write(self, data: bytes) -> None:
        self.size += len(data)
        self.lines += data.count(b"\n")


def _reference() -> tuple[int, int, float]:
    """(lines, bytes, seconds) of the bare `COPY ... TO STDOUT`, read by this process."""
    sink = _Sink()
    began = time.perf_counter()
    with database.connection_context():
        database.cursor().copy_expert(REFERENCE_SQL.format(year=YEAR), sink)
    return sink.lines, sink.size, time.perf_counter() - began


def _command() -> tuple[int, int, float]:
    """(records, bytes, seconds) of the FEC as `vitrine accounting fec` writes it (`write_fec`)."""
    sink = _Sink()
    began = time.perf_counter()
    with database.connection_context():
        fec.write_fec(YEAR, sink)
    return sink.lines - 1, sink.size, time.perf_counter() - began


def _download(url: str, headers: dict) -> tuple[int, int, float]:
    """(lines, bytes, seconds) of the streamed answer, kept nowhere."""
    began = time.perf_counter()
    lines = size = 0
    with requests.get(url, headers=headers, stream=True, timeout=600) as answer:
        answer.raise_for_status()
        for chunk in answer.iter_content(chunk_size=_printing.CHUNK):
            size += len(chunk)
            lines += chunk.count(b"\n")
    return lines, size, time.perf_counter() - began


def run(stack, quick: bool) -> Result:
    lines_wanted = 100_000 if quick else 1_000_000
    rounds = 1 if quick else 3
    load_before = os.getloadavg()
    with database.connection_context():
        built = _build_year(lines_wanted // 2)
        token = _admin_token()
    headers = {"Cookie": f"auth.session_token={token}"}
    speeds: dict[str, list[float]] = {"vitrine": [], "reference": [], "command": []}
    counts: dict[str, int] = {}
    sizes: dict[str, int] = {}
    growth = peak = 0.0
    with stack.serve("api.app:create_app()", name="fec-web", env={"PLATFORM_LEGAL_SIRET": SIRET}) as server:
        url = f"{server.url}/api/admin/accounting/fec?fiscalYear="
        _download(url + str(YEAR - 1), headers)  # warm-up: an empty year (routes, session, connection)
        for _ in range(rounds):  # alternated: the machine is shared
            before = process_tree_peak_rss_mb(server.pid)
            counts["vitrine"], sizes["vitrine"], seconds = _download(url + str(YEAR), headers)
            speeds["vitrine"].append(counts["vitrine"] / seconds)
            peak = max(peak, process_tree_peak_rss_mb(server.pid))
            growth = max(growth, process_tree_peak_rss_mb(server.pid) - before)
            for name, measure in (("reference", _reference), ("command", _command)):
                counts[name], sizes[name], seconds = measure()
                speeds[name].append(counts[name] / seconds)
    load_after = os.getloadavg()
    median = {name: statistics.median(values) for name, values in speeds.items()}
    records = counts["vitrine"] - 1  # the header
    return Result(
        title=f"FEC of {lines_wanted:,} entry lines ({lines_wanted // 2:,} entries), fiscal year {YEAR}",
        reference="COPY (SELECT the entries' and lines' columns ORDER BY validation order) TO STDOUT, read by the "
                  "bench process on its own connection, to nowhere (ops/bench/fec.py)",
        settings=[f"web: {stack.web_settings}, one streaming client, {rounds} round(s) alternated with the reference",
                  f"the year written by COPY in {built:.1f} s (books triggers set aside, as the owner)",
                  "load average (1, 5, 15 min) before {:.1f} {:.1f} {:.1f}, after {:.1f} {:.1f} {:.1f}: the machine is "
                  "shared, throughputs move with it".format(*load_before, *load_after),
                  "peak RSS: the highest VmHWM of the gunicorn master and workers; growth: its rise during the "
                  "measured download, after a warm-up request (an empty year)"],
        figures=[
            Figure("throughput (lines/s)", median["vitrine"], median["reference"]),
            Figure("FEC by the command, no HTTP (lines/s)", median["command"], median["reference"], summary=False),
            Figure("download size (MB)", sizes["vitrine"] / 1e6, sizes["reference"] / 1e6, summary=False),
            Figure("web peak RSS (MB)", peak, 0.0, summary=False),
            Figure("web peak RSS growth in the download (MB)", growth, 0.0),
        ],
        checks=[f"FEC records downloaded: {records:,} (expected {lines_wanted:,}); reference rows "
                f"{counts['reference']:,}, FEC records by the command {counts['command']:,}"],
        ok=records == counts["reference"] == counts["command"] == lines_wanted,
    )
