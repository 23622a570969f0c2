"""No dead code: `.ci/dead_code.py` (vulture as configured in pyproject.toml, run by .ci/run too)
finds nothing that no production module uses; tests do not count as users."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _dead_code(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / ".ci" / "dead_code.py"), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_nothing_is_unused():
    run = _dead_code()
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]


def test_a_function_nothing_calls_is_reported(tmp_path):
    module = tmp_path / "module.py"
    module.write_text("def used():\n    return 1\n\n\ndef forgotten():\n    return 2\n\n\nused()\n")
    run = _dead_code(str(module))
    assert run.returncode == 3 and "unused function 'forgotten'" in run.stdout and "'used'" not in run.stdout
