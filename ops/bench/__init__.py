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
own, this process booted on them); each starts the web, worker or reference processes it needs
with `stack.serve(...)` / `stack.worker()`, which stop when its block ends. `load.run_load` is the
HTTP client; `report.format_result` prints a result.
"""

from __future__ import annotations

import importlib
import pkgutil
import signal
import sys
import time
import traceback
from types import ModuleType

HARNESS_MODULES = frozenset({"stack", "load", "report", "bare_app"})


def scenario_names() -> list[str]:
    """Every scenario module's name, in name order (nothing imported)."""
    names = (module.name for module in pkgutil.iter_modules(__path__))
    return sorted(name for name in names if name not in HARNESS_MODULES and not name.startswith("_"))


def run_bench(scenario: str | None, *, quick: bool) -> int:
    """Run one scenario, or list and run them all; 0 when every one ran and its checks held."""
    names = scenario_names()
    if scenario is not None and scenario not in names:
        print(f"vitrine bench: unknown scenario {scenario!r}; available: {', '.join(names)}", file=sys.stderr)
        return 2
    status, modules = 0, {}
    for name in [scenario] if scenario else names:
        try:
            modules[name] = importlib.import_module(f"{__name__}.{name}")
        except Exception:  # a scenario being written must not stop the others from running
            print(f"== {name}: FAILED to import\n{traceback.format_exc()}", file=sys.stderr)
            status = 1
    if scenario is None:
        print("scenarios:")
        for name, module in modules.items():
            print(f"  {name:<10} {module.DESCRIPTION}")
        print()
    if not modules:
        return status

    from ops.bench.stack import StackBusy, open_stack

    # A SIGTERM (a closed terminal, a timeout) unwinds like Ctrl-C: the stack's processes stop.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    started = time.monotonic()
    try:
        with open_stack() as stack:
            from ops.progress import Progress

            progress = Progress("bench")  # a line per scenario on a terminal, nothing in a pipe
            for number, (name, module) in enumerate(modules.items(), start=1):
                progress.step(f"{name}: running ({'quick' if quick else 'full'})", number, len(modules))
                status = _run_one(name, module, stack, quick) or status
    except StackBusy as exc:
        print(f"vitrine bench: {exc}", file=sys.stderr)
        return 1
    print(f"bench finished in {time.monotonic() - started:.1f} s, {time.strftime('%Y-%m-%d %H:%M %Z')}")
    return status


def _run_one(name: str, module: ModuleType, stack, quick: bool) -> int:
    from ops.bench.report import format_result

    began = time.monotonic()
    try:
        result = module.run(stack, quick)
    except Exception:  # one broken scenario must not hide the figures of the others
        print(f"== {name}: FAILED\n{traceback.format_exc()}", flush=True)
        return 1
    print(format_result(name, result))
    print(f"({'quick' if quick else 'full'} run, {time.monotonic() - began:.1f} s)\n", flush=True)
    return 0 if result.ok else 1
