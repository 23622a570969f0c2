"""The closing table of a `vitrine bench` run: every figure of every scenario against its goal
(`ops.bench.goals`), as Markdown, and the run written as JSON (`--json FILE`) with the raw figures
and the machine they were measured on."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ops.bench.goals import goals_for, missing_labels
from ops.bench.report import Figure, Result, format_number, format_ratio


@dataclass
class Outcome:
    """What one scenario of a run gave: its result, or the error that stopped it."""

    name: str
    result: Result | None
    seconds: float = 0.0
    error: str | None = None  # the traceback, when the scenario failed to import or raised


@dataclass(frozen=True)
class Row:
    scenario: str
    figure: str
    goal: str
    measured: str
    verdict: str  # PASS, FAIL, n/a (no ratio to judge), MISSING (no such figure), ERROR, or "" (no goal)


def verdict_rows(outcomes: list[Outcome], goals=None) -> list[Row]:
    """One row per figure and goal of every scenario (`ops.bench.goals`), in run order."""
    rows = []
    for outcome in outcomes:
        if outcome.result is None:
            rows.append(Row(outcome.name, "(scenario)", "", "did not run: see its traceback above", "ERROR"))
            continue
        for figure in outcome.result.figures:
            found = goals_for(outcome.name, figure.label, goals)
            if not found:
                rows.append(Row(outcome.name, figure.label, "", _measured(figure, None), ""))
            for goal in found:
                holds = goal.holds(figure)
                rows.append(Row(outcome.name, figure.label, goal.describe(), _measured(figure, goal),
                                "n/a" if holds is None else "PASS" if holds else "FAIL"))
        for label in missing_labels(outcome.name, [f.label for f in outcome.result.figures], goals):
            rows.append(Row(outcome.name, label, ", ".join(g.describe() for g in goals_for(outcome.name, label, goals)),
                            "no such figure in this run", "MISSING"))
        if not outcome.result.ok:
            rows.append(Row(outcome.name, "(checks)", "all hold", "a check did not hold: see above", "FAIL"))
    return rows


def _measured(figure: Figure, goal) -> str:
    """What a goal bounds: the ratio (with both figures) or the value; without a goal, the ratio
    when there is a reference, else the value."""
    if goal is not None and goal.measure == "value":
        return format_number(figure.value) + (f" {goal.unit}" if goal.unit else "")
    if figure.ratio is None:
        return format_number(figure.value)
    return f"{format_ratio(figure.ratio)} ({format_number(figure.value)} / {format_number(figure.reference)})"


def format_summary(rows: list[Row], *, quick: bool) -> str:
    """The closing table, as Markdown (readable in a terminal, pasted as is in docs/performance.md)."""
    header = Row("scenario", "figure", "goal", "measured", "verdict")
    widths = [max(len(getattr(row, name)) for row in [header, *rows]) for name in Row.__dataclass_fields__]

    def line(row: Row) -> str:
        cells = (getattr(row, name).ljust(width) for name, width in zip(Row.__dataclass_fields__, widths, strict=True))
        return "| " + " | ".join(cells) + " |"

    counts = {v: sum(row.verdict == v for row in rows) for v in ("PASS", "FAIL", "MISSING", "ERROR", "n/a")}
    tally = ", ".join(f"{n} {v}" for v, n in counts.items() if n) or "no goal judged"
    lines = [line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(line, rows), "",
             f"goals: {tally}" + (" (quick run: smaller sizes than the goals'; verdicts indicative)" if quick else "")]
    return "\n".join(lines)


def machine_description() -> dict[str, object]:
    """Where the figures were measured: host, cores, CPU model, load, Python."""
    import contextlib
    import os
    import platform

    description: dict[str, object] = {"host": platform.node(), "cpus": os.cpu_count(),
                                      "platform": platform.platform(), "python": platform.python_version()}
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as cpuinfo:
        description["cpuModel"] = next((line.split(":", 1)[1].strip() for line in cpuinfo
                                        if line.startswith("model name")), None)
    with contextlib.suppress(OSError):
        description["loadAverage"] = [round(load, 2) for load in os.getloadavg()]
    return description


def results_json(outcomes: list[Outcome], rows: list[Row], *, quick: bool, started: str, finished: str,
                 machine: dict[str, object], commit: str | None) -> dict[str, object]:
    """`vitrine bench --json FILE`: the table's rows and every scenario's raw figures."""
    scenarios = {}
    for outcome in outcomes:
        result = outcome.result
        scenarios[outcome.name] = {
            "seconds": round(outcome.seconds, 3),
            "error": outcome.error,
            **({} if result is None else {
                "title": result.title, "reference": result.reference, "settings": result.settings,
                "ok": result.ok, "checks": result.checks, "notes": result.notes,
                "figures": [{"label": f.label, "value": f.value, "reference": f.reference, "ratio": f.ratio,
                             "summary": f.summary} for f in result.figures],
            }),
        }
    return {"started": started, "finished": finished, "quick": quick, "commit": commit, "machine": machine,
            "rows": [asdict(row) for row in rows], "scenarios": scenarios}
