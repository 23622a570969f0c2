"""No dead code: `vulture` (configured in pyproject.toml, run by .ci/run too) finds nothing that no
production module uses; tests do not count as users."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _vulture(*args: str) -> subprocess.CompletedProcess:
    command = [str(Path(sys.executable).with_name("vulture")), *args]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_vulture_finds_no_unused_code():
    run = _vulture()
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]


def test_vulture_reports_a_function_nothing_calls(tmp_path):
    module = tmp_path / "module.py"
    module.write_text("def used():\n    return 1\n\n\ndef forgotten():\n    return 2\n\n\nused()\n")
    run = _vulture(str(module), "--min-confidence", "60")
    assert run.returncode == 3 and "unused function 'forgotten'" in run.stdout and "'used'" not in run.stdout
