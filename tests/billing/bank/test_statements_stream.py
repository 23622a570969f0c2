"""A large statement is read as a stream: the memory its import takes stays flat (no tree of the
whole document), whatever its size up to the limit."""

from __future__ import annotations

import gc
import io
from datetime import date

import psutil

from backend.billing.bank import camt
from ops.simulators.bank_store import camt053, entry_xml
from tests.billing.bank.statements_data import IBAN

ENTRIES = 6_000
# Each entry carries text the import does not read, as a real statement's entries do.
ENTRY = entry_xml("REF", True, 0, date(2026, 12, 3)).replace(
    "</Ntry>", "<AddtlNtryInf>" + "x" * 2000 + "</AddtlNtryInf></Ntry>")


class _Generated(io.RawIOBase):
    """A camt.053 of `ENTRIES` entries made as it is read, so the test holds no copy of it."""

    def __init__(self) -> None:
        head, self._tail = camt053(IBAN, "S-LARGE", "M-LARGE", 0, [ENTRY], date(2026, 12, 3)).decode().split(ENTRY)
        self._buffer = head.replace("<TtlNtries><NbOfNtries>1<", f"<TtlNtries><NbOfNtries>{ENTRIES}<").replace(
            "<TtlCdtNtries><NbOfNtries>1<", "<TtlCdtNtries><NbOfNtries>0<").encode()
        self._made = 0
        self.size = len(self._buffer)

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        while (size < 0 or len(self._buffer) < size) and self._made <= ENTRIES:
            part = (ENTRY.replace("REF", f"R{self._made}") if self._made < ENTRIES else self._tail).encode()
            self._buffer += part
            self.size += len(part)
            self._made += 1
        chunk, self._buffer = (self._buffer, b"") if size < 0 else (self._buffer[:size], self._buffer[size:])
        return chunk


def test_a_large_statement_is_parsed_with_flat_memory():
    document = _Generated()
    process = psutil.Process()
    gc.collect()
    before = process.memory_info().rss
    statement = camt.parse(document)
    grown = process.memory_info().rss - before
    assert len(statement.lines) == ENTRIES and document.size > 12 * 1024 * 1024
    # the tree of the whole document takes about three times its size; a stream, its lines only
    assert grown < document.size / 2, (grown, document.size)
