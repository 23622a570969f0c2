"""The environment variables, in one place: the table of docs/deploy.md, `.env.example` and the
settings the code reads say the same names, and `.env.example` can be sourced by a shell."""

from __future__ import annotations

import re
import subprocess

from backend import config as config_module
from backend.config import load_config
from ops.config_check import read_env_file
from tests.conftest import ROOT

TABLE_ROW = re.compile(r"^\| `([A-Z][A-Z0-9_]+)` \|", re.M)
# Read by the process around the configuration: gunicorn's settings, the data directory, the tests'
# servers, and create-admin's password (a command's, never in `.env`).
PROCESS_SETTINGS = re.compile(r"environ\.get\([\"']([A-Z][A-Z0-9_]+)")


def _table() -> set[str]:
    return set(TABLE_ROW.findall((ROOT / "docs" / "deploy.md").read_text()))


def _read_by_load_config(monkeypatch) -> set[str]:
    """Every name `load_config` asks the environment for (an empty one: each default taken)."""
    asked: set[str] = set()
    original = config_module._Env.get

    def get(self, name, default=None):
        asked.add(name)
        return original(self, name, default)

    monkeypatch.setattr(config_module._Env, "get", get)
    load_config({})
    return asked


def test_the_table_names_every_setting_the_code_reads_and_env_example_holds_them(monkeypatch):
    code = _read_by_load_config(monkeypatch)
    process = set(PROCESS_SETTINGS.findall((ROOT / "ops" / "gunicorn.conf.py").read_text()))
    example = set(read_env_file(ROOT / ".env.example")) | {
        line.split("=")[0].lstrip("# ") for line in (ROOT / ".env.example").read_text().splitlines()
        if re.match(r"^# [A-Z][A-Z0-9_]+=", line)}  # a commented-out secret
    table = _table()
    assert code and process <= table
    assert sorted(code - table) == []
    assert sorted((code | process) - example) == []
    assert sorted(example - table) == []
    commands_only = {"VITRINE_ADMIN_PASSWORD"}
    assert sorted(table - example - commands_only) == []


def test_env_example_is_sourced_by_a_shell_to_the_values_the_settings_file_reader_takes():
    script = "set -eu; set -a; . ./.env.example; set +a; env -0"
    run = subprocess.run(["bash", "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=10, env={})
    assert run.returncode == 0 and run.stderr == "", run.stderr
    shell = dict(item.split("=", 1) for item in run.stdout.split("\0") if "=" in item)
    for name, value in read_env_file(ROOT / ".env.example").items():
        assert shell.get(name) == value, name
