"""What a scenario returns (`Result`) and how it is printed: a table of figures next to the
reference's, the ratio of each, then one `ratio vs reference:` line to quote in a closing note.

The run's closing table (every figure against its goal) is `ops.bench.summary`'s: this module
imports neither it nor `ops.bench.goals`, which both read `Figure` from here."""

from __future__ import annotations

from dataclasses import dataclass, field

SHARED_CORES_NOTE = (
    "client, servers and workers share this machine's cores: absolute figures are modest; "
    "the ratio to the reference, measured with the same client and settings, is what compares"
)


@dataclass(frozen=True)
class Figure:
    """One measured quantity, for Vitrine and for the reference; `ratio` is value / reference."""

    label: str
    value: float
    reference: float
    summary: bool = True  # quoted on the `ratio vs reference` line

    @property
    def ratio(self) -> float | None:
        return self.value / self.reference if self.reference else None


@dataclass
class Result:
    title: str
    reference: str
    settings: list[str]
    figures: list[Figure]
    checks: list[str] = field(default_factory=list)  # lines such as "outbox rows unsent: 0 (expected 0)"
    notes: list[str] = field(default_factory=list)
    ok: bool = True  # False when a check failed: the figures are then not to be trusted


def format_result(name: str, result: Result) -> str:
    label_width = max(len(f.label) for f in result.figures)
    lines = [
        f"== {name}: {result.title}",
        f"reference: {result.reference}",
        *(f"settings:  {line}" for line in result.settings),
        "",
        f"  {'':<{label_width}}  {'vitrine':>12}  {'reference':>12}  {'ratio':>8}",
    ]
    for figure in result.figures:
        lines.append(
            f"  {figure.label:<{label_width}}  {format_number(figure.value):>12}  {format_number(figure.reference):>12}"
            f"  {format_ratio(figure.ratio):>8}"
        )
    lines.append("")
    lines.extend(result.checks)
    quoted = [f"{format_ratio(f.ratio)} {f.label}" for f in result.figures if f.summary]
    lines.append("ratio vs reference: " + ", ".join(quoted))
    lines.extend(f"note: {note}" for note in result.notes)
    if not result.ok:
        lines.append("FAILED: a check above did not hold")
    return "\n".join(lines)


def format_number(value: float) -> str:
    # Three significant digits or so: whole counts and rates, small durations to the microsecond.
    if abs(value) >= 100 or value == int(value):
        return f"{value:,.0f}"
    return f"{value:.2f}" if abs(value) >= 1 else f"{value:.3f}"


def format_ratio(ratio: float | None) -> str:
    return "n/a" if ratio is None else f"{ratio:.2f}x"
