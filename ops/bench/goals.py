"""The goals `vitrine bench` judges its figures against, keyed by scenario and figure label.

A goal bounds either a figure's ratio to its reference (`ratio("<=", 1.5)`) or its value itself
(`value("<=", 15, "ms")`, in the unit of the figure's label). The final table of `vitrine bench`
shows each figure with its goal(s) and PASS or FAIL; a figure with no goal is shown without a
verdict, and a goal whose figure a scenario no longer reports shows as MISSING (a label was
renamed: update it here in the same commit).

A label is matched ignoring case and runs of spaces; `*` stands for any text, for labels that
carry a size (`advance of * orders (ms)`: 1,000 orders in a full run, 200 in a quick one).

Every goal compares Vitrine with a reference measured side by side in the same run (same client,
settings and machine), with a margin a framework (middleware, ORM, schemas, a stock broker) can
meet, or bounds what a user or a provider waits for: spec A's webhook acknowledgement (the
provider's first attempt times out after 1 s), spec B's batch of 1,000 stores, the month end
against rendering its PDFs alone, a second worker process's share of the work (the platform
scales out by adding workers), the FEC against a bare COPY with flat memory, a statement import
against its parsing, e-invoicing against the operator's round trips, the large database against
the small one. docs/performance.md gives each goal's reason.

The goals hold for a full run on a quiet machine; a quick run's verdicts are indicative only.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from fnmatch import fnmatchcase

from ops.bench.report import Figure

_COMPARE = {"<=": operator.le, ">=": operator.ge}


@dataclass(frozen=True)
class Goal:
    measure: str  # "ratio" (value / reference) or "value"
    op: str  # "<=" or ">="
    bound: float
    unit: str = ""  # a value goal's unit, for display ("ms")

    def __post_init__(self) -> None:
        if self.measure not in ("ratio", "value") or self.op not in _COMPARE:
            raise ValueError(f"a goal is ratio|value with <= or >=, not {self.measure} {self.op}")

    def describe(self) -> str:
        """`ratio <= 1.50x`, `<= 15 ms`."""
        if self.measure == "ratio":
            return f"ratio {self.op} {self.bound:.2f}x"
        return f"{self.op} {self.bound:g}{' ' + self.unit if self.unit else ''}"

    def measured(self, figure: Figure) -> float | None:
        return figure.ratio if self.measure == "ratio" else figure.value

    def holds(self, figure: Figure) -> bool | None:
        """True or False, or None when the figure has no ratio to judge (a zero reference)."""
        measured = self.measured(figure)
        return None if measured is None else _COMPARE[self.op](measured, self.bound)


def ratio(op: str, bound: float) -> Goal:
    return Goal("ratio", op, bound)


def value(op: str, bound: float, unit: str = "") -> Goal:
    return Goal("value", op, bound, unit)


GOALS: dict[str, dict[str, tuple[Goal, ...]]] = {
    "health": {"server CPU per answer (ms)": (ratio("<=", 2.0),)},
    "session": {"server CPU per answer (ms)": (ratio("<=", 2.0),)},
    "webhook": {
        "server CPU per answer (ms)": (ratio("<=", 2.0),),
        "acknowledgement p99 (ms)": (value("<=", 1000, "ms"), value("<=", 200, "ms")),
    },
    "billing": {"server CPU per collection vs the bare same-SQL app (ms)": (ratio("<=", 2.0),)},
    "batch": {
        "preview p50 (ms)": (ratio("<=", 2.0),),
        "confirmation (ms)": (ratio("<=", 2.0),),
        "advance of * orders (ms)": (value("<=", 2000, "ms"),),
    },
    "monthend": {"month-end run (s)": (ratio("<=", 1.5),)},
    "scaleout": {"throughput, 2 worker processes (invoices/s)": (ratio(">=", 1.7),)},
    "fec": {
        "throughput (lines/s)": (ratio(">=", 0.3),),
        "web peak RSS growth in the download (MB)": (value("<=", 20, "MB"),),
    },
    "bank": {"import of * lines (ms)": (ratio("<=", 3),)},
    "einvoicing": {
        "draft to acknowledged, all (s)": (ratio("<=", 2),),
        "operator calls per transmission": (value("<=", 2),),
    },
    "growth": {
        "collection p50 (ms)": (ratio("<=", 1.2),),
        "invoice list p50 (ms)": (ratio("<=", 1.2),),
        "invoice download p50 (ms)": (ratio("<=", 1.2),),
        "printer order list p50 (ms)": (ratio("<=", 1.2),),
        "self-billing selection p50 (ms)": (ratio("<=", 1.5),),
        "operator calls per polling pass after 50 changes": (value("<=", 1),),
    },
}

def _normal(label: str) -> str:
    return re.sub(r"\s+", " ", label.strip().lower())


def label_matches(pattern: str, label: str) -> bool:
    return fnmatchcase(_normal(label), _normal(pattern))


def goals_for(scenario: str, label: str, goals: dict[str, dict[str, tuple[Goal, ...]]] | None = None,
              ) -> tuple[Goal, ...]:
    """The goals of one figure of a scenario (none when it has no goal)."""
    table = (GOALS if goals is None else goals).get(scenario, {})
    return tuple(goal for pattern, found in table.items() if label_matches(pattern, label) for goal in found)


def missing_labels(scenario: str, labels: list[str], goals: dict[str, dict[str, tuple[Goal, ...]]] | None = None,
                   ) -> list[str]:
    """The goal labels of a scenario that none of its figures matches (a renamed or dropped figure)."""
    table = (GOALS if goals is None else goals).get(scenario, {})
    return [pattern for pattern in table if not any(label_matches(pattern, label) for label in labels)]
