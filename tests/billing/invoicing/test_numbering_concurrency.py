"""Gapless numbering under concurrency: 60 collections from 4 threads and 2 other processes into
one series give the numbers 1..N of the series with no gap and no duplicate, in issue order."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from backend.billing.collection import collect
from backend.billing.models import Invoice, PaymentMethod
from backend.db import database, transaction
from tests.billing.helpers import Market, approved_org, booted_config

ROOT = Path(__file__).resolve().parents[3]
NUMBERS = "numbers:"
THREADS, PER_THREAD, PROCESSES, PER_PROCESS = 4, 8, 2, 14


def _reservations(count: int) -> list[tuple[str, str]]:
    with database.connection_context(), transaction():
        market = Market()
        industrial = approved_org("industrial")
        distributors = [approved_org("distributor") for _ in range(4)]
        made = [market.reservation(industrial, distributors[i % 4], price_cents=10_000 + i, day=i)
                for i in range(count)]
    return [(r.id, r.industrial_organization_id) for r in made]


def _collect_all(pairs: list[tuple[str, str]], out: list[str], errors: list[BaseException]) -> None:
    try:
        with database.connection_context():
            for reservation_id, organization_id in pairs:
                result = collect.collect(reservation_id=reservation_id, industrial_organization_id=organization_id,
                                            method=PaymentMethod.BANK_TRANSFER, key=f"thread-{reservation_id}",
                                            user_id=None, config=booted_config())
                out.append(result.invoice_number)
    except BaseException as exc:  # reported by the test
        errors.append(exc)


@pytest.mark.committed
def test_numbers_are_gapless_unique_and_chronological_across_threads_and_processes():
    total = THREADS * PER_THREAD + PROCESSES * PER_PROCESS
    pairs = _reservations(total)
    by_process = [pairs[i * PER_PROCESS:(i + 1) * PER_PROCESS] for i in range(PROCESSES)]
    rest = pairs[PROCESSES * PER_PROCESS:]
    children = [
        subprocess.Popen([sys.executable, "-m", "tests.billing.invoicing.collect_worker", *[p[0] for p in chunk]],
                         cwd=ROOT,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                         env={**os.environ, "LOG_LEVEL": "error"})
        for chunk in by_process
    ]
    for child in children:  # boot log lines come first
        while (line := child.stdout.readline()) and line.strip() != "ready":
            pass
        assert line.strip() == "ready"
    results: list[list[str]] = [[] for _ in range(THREADS)]
    errors: list[BaseException] = []
    threads = [threading.Thread(target=_collect_all, args=(rest[i::THREADS], results[i], errors))
               for i in range(THREADS)]
    for child in children:
        child.stdin.write("go\n")
        child.stdin.flush()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    process_numbers = []
    for child in children:
        out, _ = child.communicate(timeout=120)
        assert child.returncode == 0
        process_numbers += json.loads(out.split(NUMBERS, 1)[1])
    assert not errors, errors
    numbers = process_numbers + [n for chunk in results for n in chunk]
    assert len(numbers) == total == len(set(numbers))

    with database.connection_context():
        invoices = list(Invoice.select().where(Invoice.kind == "platform_sale").order_by(Invoice.sequence))
    assert {i.number for i in invoices} == set(numbers)
    assert len({i.series for i in invoices}) == 1
    sequences = [i.sequence for i in invoices]
    assert sequences == list(range(1, total + 1))  # 1..N: no gap, no duplicate
    issued = [i.issued_at for i in invoices]
    assert issued == sorted(issued)  # number order is issue order
