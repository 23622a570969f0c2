"""The Fichier des Écritures Comptables (FEC) of a fiscal year: article A47 A-1 of the Livre des
procédures fiscales (docs/accounting.md, "The FEC", lists every rule and how each is met).

- File name `<SIREN>FEC<closing date YYYYMMDD>.txt` (refused without `PLATFORM_LEGAL_SIRET`); a
  flat file, one record per entry line, records separated by LF, fields by a tab (a character no
  value holds: a tab, CR, LF, backslash, backspace, form feed or vertical tab inside a label
  becomes a space), the first
  record the 18 field names in their legal order.
- ISO 8859-15 (one of the character sets the article names); a character it lacks becomes `?`.
- A label (`CompAuxLib`, `EcritureLib`) never starts a formula: a control character becomes a
  space and a leading `=`, `+`, `-` or `@` is preceded by an apostrophe (a spreadsheet opening
  the file shows the text, runs nothing).
- Dates `YYYYMMDD`; amounts in decimal with a comma and two decimals, no thousands separator,
  `Debit` and `Credit` both given (one of them `0,00`); `Montantdevise` and `Idevise` empty (every
  amount is in euros).
- Entries in validation order (`validation_seq`), `EcritureNum` `<journal>-<number>` (gapless per
  journal in the fiscal year); no centralizing entry.
- From the second fiscal year on, the opening balances ("à nouveaux") come first: journal `AN`,
  one line per balance-sheet account and auxiliary account (classes 1 to 5) whose balance at the
  end of the previous years is not zero, and the previous years' result on 120 (so the opening
  entry balances).
- Lettering (`EcritureLet`, `DateLet`) as of the year's closing date: a line lettered later shows
  none.

Streamed: PostgreSQL formats the records (`COPY ... TO STDOUT`), this process only transcodes
them, chunk by chunk, so memory stays flat whatever the year's size.
"""

from __future__ import annotations

import codecs
import contextlib
import queue
import re
import threading
from collections.abc import Iterator
from typing import BinaryIO

from backend.billing.accounting.chart import journals_sql, labels_sql
from backend.billing.accounting.entries import fiscal_year_bounds
from backend.config import Config
from backend.db import database, transaction
from backend.errors import Conflict

FIELDS = ("JournalCode", "JournalLib", "EcritureNum", "EcritureDate", "CompteNum", "CompteLib", "CompAuxNum",
          "CompAuxLib", "PieceRef", "PieceDate", "EcritureLib", "Debit", "Credit", "EcritureLet", "DateLet",
          "ValidDate", "Montantdevise", "Idevise")
ENCODING = "iso8859_15"
CONTENT_TYPE = "text/plain; charset=ISO-8859-15"
OPENING_JOURNAL, OPENING_LABEL = "AN", "A nouveaux"
RESULT_ACCOUNT, RESULT_LABEL = "120", "Résultat de l''exercice"  # as a SQL literal
_CHUNK = 256 * 1024
WORK_MEM = "64MB"  # per export: its hash join and sort


def platform_siren(config: Config) -> str:
    """The SIREN naming the FEC: the first nine digits of `PLATFORM_LEGAL_SIRET`. Unset, there is
    no FEC to hand over (409 `CONFLICT`, `platform_siren_missing`): a file named after a placeholder
    SIREN is not the company's, and the administration reads the SIREN from the name."""
    if not config.platform_legal_siret:
        raise Conflict("the FEC is named after the company's SIREN: set PLATFORM_LEGAL_SIRET (its 14-digit SIRET)",
                       reason="platform_siren_missing")
    return config.platform_legal_siret[:9]


def file_name(siren: str, fiscal_year: int) -> str:
    return f"{siren}FEC{fiscal_year_bounds(fiscal_year)[1]:%Y%m%d}.txt"


def header() -> bytes:
    return ("\t".join(FIELDS) + "\n").encode(ENCODING)


def _amount(expression: str) -> str:
    """`1200,05` (no lpad: a CASE adds the tens' zero); one side of each line is 0: `0,00` at once."""
    return (f"CASE WHEN {expression} = 0 THEN '0,00' ELSE (({expression}) / 100)::text"
            f" || CASE WHEN mod({expression}, 100) < 10 THEN ',0' ELSE ',' END || mod({expression}, 100)::text END")


def neutralised(expression: str) -> str:
    """A free-text label as a spreadsheet cannot run it: control characters become spaces and a
    leading `=`, `+`, `-` or `@` (a formula) is preceded by an apostrophe. The validators refuse
    such names (`backend.legal_text`); this covers a value stored before them."""
    return rf"regexp_replace(regexp_replace({expression}, '[[:cntrl:]]', ' ', 'g'), '^([=+@-])', '''\1')"


def _ymd(expression: str) -> str:
    return f"to_char({expression}, 'YYYYMMDD')"


# The year's lines, sorted (the opening balances first, rank 0, then the entries in validation
# order), then formatted: a subquery with ORDER BY is never flattened, so PostgreSQL sorts the raw
# columns and the outer scan formats each record in that order (formatting first would sort rows
# three times as wide, spilling to disk).
_QUERY = f"""
WITH bounds AS (SELECT %(start)s::date AS start, %(end)s::date AS stop),
earlier AS (
    SELECT l.account, l.aux_account, max(l.aux_label) AS aux_label,
           sum(l.debit_cents - l.credit_cents)::bigint AS balance
      FROM accounting_line l JOIN accounting_entry e ON e.id = l.entry_id, bounds
     WHERE e.number IS NOT NULL AND e.entry_date < bounds.start
     GROUP BY l.account, l.aux_account),
opening AS (
    SELECT account, aux_account, aux_label, balance FROM earlier
     WHERE left(account, 1) BETWEEN '1' AND '5' AND balance <> 0
    UNION ALL
    SELECT '{RESULT_ACCOUNT}', NULL, NULL, sum(balance)::bigint FROM earlier
     WHERE left(account, 1) IN ('6', '7') HAVING sum(balance) <> 0),
records AS (
    SELECT 0 AS rank, 0::bigint AS seq, 0 AS line_no, '{OPENING_JOURNAL}' AS journal,
           '{OPENING_LABEL}' AS journal_label,
           '{OPENING_JOURNAL}-000001' AS num, {_ymd("bounds.start")} AS day, o.account,
           coalesce(chart.label, '{RESULT_LABEL}') AS account_label, o.aux_account, o.aux_label,
           '{OPENING_JOURNAL}' || extract(year FROM bounds.stop)::text AS piece_ref,
           {_ymd("bounds.start")} AS piece_day,
           '{OPENING_LABEL}' AS label, greatest(o.balance, 0) AS debit, greatest(-o.balance, 0) AS credit,
           NULL::text AS letter, NULL::date AS lettered_on, {_ymd("bounds.start")} AS valid_day
      FROM opening o CROSS JOIN bounds LEFT JOIN {labels_sql()} ON chart.number = o.account
    UNION ALL
    SELECT 1, e.seq, l.line_no, e.journal, e.journal_label, e.num, e.day, l.account, chart.label,
           l.aux_account, l.aux_label, e.piece_ref, e.piece_day, l.label, l.debit_cents, l.credit_cents,
           CASE WHEN lt.lettered_on <= bounds.stop THEN lt.code END,
           CASE WHEN lt.lettered_on <= bounds.stop THEN lt.lettered_on END, e.valid_day
      FROM (SELECT e.id, e.validation_seq AS seq, e.journal_code AS journal, journals.label AS journal_label,
                   e.journal_code || '-' || lpad(e.number::text, 6, '0') AS num, {_ymd("e.entry_date")} AS day,
                   e.piece_ref, {_ymd("e.piece_date")} AS piece_day,
                   {_ymd("(e.validated_at AT TIME ZONE 'Europe/Paris')::date")} AS valid_day
              FROM accounting_entry e JOIN {journals_sql()} ON journals.code = e.journal_code
             WHERE e.fiscal_year = %(year)s AND e.number IS NOT NULL
            OFFSET 0) AS e  -- not flattened: each entry's fields are formatted once, not once per line
      JOIN accounting_line l ON l.entry_id = e.id CROSS JOIN bounds
      LEFT JOIN {labels_sql()} ON chart.number = l.account
      LEFT JOIN accounting_lettered_line ll ON ll.line_id = l.id
      LEFT JOIN accounting_lettering lt ON lt.id = ll.lettering_id)
SELECT journal, journal_label, num, day, account, account_label, aux_account, {neutralised("aux_label")}, piece_ref,
       piece_day, {neutralised("label")}, {_amount("debit")}, {_amount("credit")}, letter, {_ymd("lettered_on")},
       valid_day, '', ''
  FROM (SELECT * FROM records ORDER BY rank, seq, line_no) AS sorted
"""  # noqa: S608 (constants only; the values are parameters)


def fec_sql(fiscal_year: int) -> str:
    """The `COPY` of the year's records (tab-separated, no header), its values inlined."""
    start, end = fiscal_year_bounds(fiscal_year)
    cursor = database.cursor()
    query = cursor.mogrify(_QUERY, {"start": start, "end": end, "year": fiscal_year}).decode()
    return f"COPY ({query}) TO STDOUT WITH (FORMAT text, DELIMITER E'\\t', NULL '')"


# COPY's text format writes a backslash, tab, LF, CR, backspace, form feed or vertical tab inside a
# value as a backslash sequence (`\\`, `\t`, ...): each becomes one space, so no value holds the
# field or record separator (cheaper than cleaning every value in SQL).
_ESCAPED = re.compile(rb"\\.")


class _Transcoder:
    """A file for `copy_expert`: UTF-8 from PostgreSQL in (psycopg2 writes one record at a time),
    ISO 8859-15 chunks of about `_CHUNK` bytes to `emit`, transcoded a chunk at a time."""

    def __init__(self, emit) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self._emit = emit
        self._pending: list[bytes] = []
        self._size = 0

    def write(self, data: bytes) -> None:
        self._pending.append(data)
        self._size += len(data)
        if self._size >= _CHUNK:
            self.flush()

    def flush(self) -> None:
        if self._pending:
            # whole records (psycopg2 writes one per call): an escape sequence is never cut in two
            data = b"".join(self._pending)
            text = self._decoder.decode(_ESCAPED.sub(b" ", data) if b"\\" in data else data)
            self._pending, self._size = [], 0
            if text:
                self._emit(text.encode(ENCODING, errors="replace"))


def _copy(fiscal_year: int, transcoder: _Transcoder) -> None:
    """The year's `COPY` into `transcoder`, in a transaction of its own whose `work_mem` lets the
    join hash the year's entries in memory (the default 4 MB spills a large year to disk)."""
    with transaction():
        database.execute_sql(f"SET LOCAL work_mem = '{WORK_MEM}'")
        database.cursor().copy_expert(fec_sql(fiscal_year), transcoder)
    transcoder.flush()


def write_fec(fiscal_year: int, out: BinaryIO) -> None:
    """Write the year's FEC, header first, to `out` (the command line)."""
    out.write(header())
    _copy(fiscal_year, _Transcoder(out.write))


_DONE = object()


def stream_fec(fiscal_year: int) -> Iterator[bytes]:
    """The year's FEC as chunks (the web route): the `COPY` runs in a thread of its own on a
    connection of its own and hands over its chunks through a short queue, so that at most a few
    chunks are ever held; closing the iterator (the client went away) stops the `COPY`."""
    chunks: queue.Queue = queue.Queue(maxsize=4)
    stopped = threading.Event()
    failures: list[BaseException] = []

    def put(item: object) -> None:
        while not stopped.is_set():
            try:
                chunks.put(item, timeout=0.5)
                return
            except queue.Full:
                continue
        raise ConnectionAbortedError("the FEC download was abandoned")

    def produce() -> None:
        try:
            with database.connection_context():
                _copy(fiscal_year, _Transcoder(put))
        except BaseException as exc:  # handed to the consumer, which raises it
            failures.append(exc)
        finally:
            with contextlib.suppress(ConnectionAbortedError):
                put(_DONE)

    yield header()
    worker = threading.Thread(target=produce, name=f"fec-{fiscal_year}", daemon=True)
    worker.start()
    try:
        while (chunk := chunks.get()) is not _DONE:
            yield chunk
        if failures:
            raise failures[0]
    finally:
        stopped.set()
        worker.join(timeout=5)

