"""`vitrine bench scaleout`: the month end's work on one worker process, then on two.

The platform scales out by adding worker processes (or hosts) against the same PostgreSQL and
Redis: nothing in a worker may serialize the work of another. This scenario runs the same month
end as `bench monthend` (`monthend.month_end`: reservations made due, one scheduler pass, every
invoice issued, its PDF stored, its e-mail written and its transmission acknowledged) twice from
an empty database: first on a `dramatiq` worker of one process, then on one of two processes,
each with `vitrine dev`'s threads. The figure is the invoices per second of wall time with two
processes, next to the same with one (the reference): the goal is the share of a second process
the work actually gets.
"""

from __future__ import annotations

from ops.bench import billing, monthend
from ops.bench.report import SHARED_CORES_NOTE, Figure, Result

NAME = "scaleout"
DESCRIPTION = ("the month end of 400 reservations on 2 dramatiq worker processes; reference: the same work "
               "on 1 process (same threads each)")


def run(stack, quick: bool) -> Result:
    from ops.dev import WORKER_THREADS

    count = 40 if quick else 400
    load_before = billing.load_average()
    runs = {}
    for processes in (1, 2):
        if runs:  # the second run starts from an empty database and Redis, as the first did
            stack.fresh()
        runs[processes] = monthend.month_end(stack, count, processes=processes, threads=WORKER_THREADS)
    load_after = billing.load_average()
    one, two = runs[1], runs[2]
    return Result(
        title=f"month end of {count:,} reservations on 1 then 2 worker processes",
        reference=f"the same month end on 1 dramatiq worker process x {WORKER_THREADS} threads",
        settings=[f"dramatiq worker, 1 then 2 process(es) x {WORKER_THREADS} threads (vitrine dev's threads)",
                  "each run from an empty database and Redis; operator simulator and polling in this process"],
        figures=[
            Figure("throughput, 2 worker processes (invoices/s)", count / two.run.seconds, count / one.run.seconds),
            Figure("month-end run (s)", two.run.seconds, one.run.seconds, summary=False),
            Figure("worker CPU per invoice (ms)", 1000 * two.run.worker_cpu / count,
                   1000 * one.run.worker_cpu / count, summary=False),
            Figure("PostgreSQL CPU per invoice (ms)", 1000 * two.run.postgres_cpu / count,
                   1000 * one.run.postgres_cpu / count, summary=False),
        ],
        checks=[*(f"{processes} process(es): {line}" for processes, done in runs.items() for line in done.checks)],
        notes=[f"cores busy with 2 processes: {', '.join(f'{100 * c:.0f} %' for c in two.run.cores)}; with 1: "
               f"{', '.join(f'{100 * c:.0f} %' for c in one.run.cores)} (the whole machine's use)",
               "two processes can only reach twice one's throughput with a core free for each beside PostgreSQL, "
               "the poller and the simulator: on a shared machine the ratio is a floor",
               f"load average (1, 5, 15 min): {load_before} before, {load_after} after", SHARED_CORES_NOTE],
        ok=one.ok and two.ok,
    )
