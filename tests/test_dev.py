"""`vitrine dev` on its embedded defaults: starts, answers, stops every child on SIGTERM."""

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid

import psutil
import pytest
import requests

from tests.conftest import ROOT


@pytest.fixture
def data_dir():
    # Under the repository (not /tmp/pytest-of-root, which the embedded PostgreSQL user cannot enter).
    path = ROOT / "var" / "test" / f"dev-{uuid.uuid4().hex[:8]}"
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _wait_for(url: str, process: subprocess.Popen, timeout: float = 120) -> requests.Response:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, "vitrine dev exited early"
        try:
            return requests.get(url, timeout=1)
        except requests.ConnectionError:
            time.sleep(0.2)
    raise AssertionError(f"{url} did not answer within {timeout} s")


def test_vitrine_dev_starts_answers_health_and_stops_cleanly(free_port, data_dir):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "VITRINE_DATA_DIR")}
    process = subprocess.Popen(
        [sys.executable, "-m", "ops.cli", "dev", "--port", str(port), "--data-dir", str(data_dir)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        health = _wait_for(f"http://127.0.0.1:{port}/api/health", process)
        assert health.status_code == 200
        assert health.json()["data"]["status"] == "ok"
        children = psutil.Process(process.pid).children(recursive=True)
        assert len(children) >= 3  # web, worker and clock at least
        assert (data_dir / "postgres" / "postmaster.pid").exists()
        assert (data_dir / "redis" / "redis.sock").exists()
    finally:
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=60)
    assert process.returncode == 0, output[-3000:]
    assert f"http://127.0.0.1:{port}" in output
    assert not [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]
    assert not (data_dir / "redis" / "redis.sock").exists()
    assert not (data_dir / "postgres" / "postmaster.pid").exists()
    with pytest.raises(requests.ConnectionError):
        requests.get(f"http://127.0.0.1:{port}/api/health", timeout=1)
