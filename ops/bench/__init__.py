"""Benchmarks (`vitrine bench [SCENARIO] [--quick]`): speed is measured here, never asserted in tests.

A scenario is a module `ops/bench/<name>.py` exposing:

- `NAME: str`, the name given on the command line (the module's name);
- `DESCRIPTION: str`, one line: what is measured and against which reference;
- `run(stack: ops.bench.stack.Stack, quick: bool) -> ops.bench.report.Result`: measure Vitrine and
  the reference it names with the same client and settings (alternating them when the run is
  long, since the machine is shared), and return the figures: `Figure(label, value, reference)`
  rows, `checks` lines (`ok=False` when one fails) and `notes`. `quick` means a smoke run under
  ~15 s; a full run stays under ~60 s.

Every module of this package is a scenario except the harness's own (`HARNESS_MODULES`) and those
named `_*` (a scenario's helpers), so adding one is adding its file. The chosen scenarios run in
name order on one stack (`stack.open_stack()`: a `vitrine_bench` database and a Redis of their
own, this process booted on them), each from an empty migrated database and an empty Redis
(`stack.fresh()` between scenarios); each starts the web, worker or reference processes it needs
with `stack.serve(...)` / `stack.worker()`, which stop when its block ends. `load.run_load` is the
HTTP client; `report.format_result` prints a result. The run ends with one table of every figure
against its goal (`summary.py`; the goals are `goals.py`'s, keyed by scenario and figure label: a
scenario file holds no goal), written with the raw figures as JSON by `--json FILE`.
"""

from __future__ import annotations

import gc
import importlib
import json
import pkgutil
import signal
import subprocess
import sys
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType

from ops.bench.report import format_result
from ops.bench.summary import Outcome, format_summary, machine_description, results_json, verdict_rows

HARNESS_MODULES = frozenset({"stack", "load", "report", "summary", "goals", "bare_app"})


def scenario_names() -> list[str]:
    """Every scenario module's name, in name order (nothing imported)."""
    names = (module.name for module in pkgutil.iter_modules(__path__))
    return sorted(name for name in names if name not in HARNESS_MODULES and not name.startswith("_"))


def run_bench(scenario: str | None, *, quick: bool, json_path: str | None = None) -> int:
    """Run one scenario, or list and run them all, then print the closing table (each figure
    against its goal in `ops.bench.goals`) and write it with the raw figures to `json_path`.

    0 when every scenario ran and its checks held; a goal not met does not change the status
    (the figures depend on the machine's load: the table says PASS or FAIL)."""
    names = scenario_names()
    if scenario is not None and scenario not in names:
        print(f"vitrine bench: unknown scenario {scenario!r}; available: {', '.join(names)}", file=sys.stderr)
        return 2
    started_at, commit, machine = _now(), _commit(), machine_description()  # what ran, where, at what load
    outcomes: dict[str, Outcome] = {}
    modules: dict[str, ModuleType] = {}
    for name in [scenario] if scenario else names:
        try:
            modules[name] = importlib.import_module(f"{__name__}.{name}")
        except Exception:  # a scenario being written must not stop the others from running
            print(f"== {name}: FAILED to import\n{traceback.format_exc()}", file=sys.stderr)
            outcomes[name] = Outcome(name, None, error=traceback.format_exc())
    if scenario is None:
        print("scenarios:")
        for name, module in modules.items():
            print(f"  {name:<10} {module.DESCRIPTION}")
        print()

    from ops.bench.stack import StackBusy, open_stack

    # A SIGTERM (a closed terminal, a timeout) unwinds like Ctrl-C: the stack's processes stop.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    started = time.monotonic()
    if modules:
        try:
            with open_stack() as stack:
                from ops.progress import Progress

                progress = Progress("bench")  # a line per scenario on a terminal, nothing in a pipe
                for number, (name, module) in enumerate(modules.items(), start=1):
                    if number > 1:  # each scenario starts from an empty database and Redis
                        progress.step(f"{name}: fresh database", number, len(modules))
                        stack.fresh()
                    progress.step(f"{name}: running ({'quick' if quick else 'full'})", number, len(modules))
                    # As a web worker after boot (ops/gunicorn.conf.py): what this process holds so far
                    # (the earlier scenarios' leftovers too) leaves the collector's generations, so a
                    # scenario measures the same alone or in a full run.
                    gc.collect()
                    gc.freeze()
                    outcomes[name] = _run_one(name, module, stack, quick)
        except StackBusy as exc:
            print(f"vitrine bench: {exc}", file=sys.stderr)
            return 1
    ordered = [outcomes[name] for name in ([scenario] if scenario else names) if name in outcomes]
    rows = verdict_rows(ordered)
    print(format_summary(rows, quick=quick))
    print(f"bench finished in {time.monotonic() - started:.1f} s, {time.strftime('%Y-%m-%d %H:%M %Z')}")
    if json_path:
        machine["loadAverageAtEnd"] = machine_description().get("loadAverage")
        document = results_json(ordered, rows, quick=quick, started=started_at, finished=_now(),
                                machine=machine, commit=commit)
        Path(json_path).write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
        print(f"results written to {json_path}")
    failed = any(o.result is None or not o.result.ok for o in ordered)
    return 1 if failed else 0


def _run_one(name: str, module: ModuleType, stack, quick: bool) -> Outcome:
    began = time.monotonic()
    try:
        result = module.run(stack, quick)
    except Exception:  # one broken scenario must not hide the figures of the others
        print(f"== {name}: FAILED\n{traceback.format_exc()}", flush=True)
        return Outcome(name, None, time.monotonic() - began, error=traceback.format_exc())
    seconds = time.monotonic() - began
    print(format_result(name, result))
    print(f"({'quick' if quick else 'full'} run, {seconds:.1f} s)\n", flush=True)
    return Outcome(name, result, seconds)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _commit() -> str | None:
    """The checked-out commit (with `-dirty` when the tree has changes), for comparing runs."""
    root = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if head.returncode != 0:
        return None
    return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
