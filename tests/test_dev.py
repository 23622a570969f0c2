"""`vitrine dev` on its embedded defaults: starts, answers, stops every child on SIGTERM."""

import os
import shutil
import signal
import subprocess
import sys
import threading
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


class Output:
    """Reads the supervisor's output as it comes (a full pipe would block the children that
    write to it) and says when the ready line, printed once the web answers, has appeared."""

    READY = "Vitrine is running at"

    def __init__(self, process: subprocess.Popen) -> None:
        self.lines: list[str] = []
        self.ready = threading.Event()
        self._thread = threading.Thread(target=self._read, args=(process.stdout,), daemon=True)
        self._thread.start()

    def _read(self, stream) -> None:
        for line in stream:
            self.lines.append(line)
            if self.READY in line:
                self.ready.set()
        self.ready.set()  # the process ended: stop waiting

    def text(self) -> str:
        self._thread.join(timeout=30)
        return "".join(self.lines)


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
    output, children = Output(process), []
    try:
        assert output.ready.wait(timeout=180), "vitrine dev did not print its URL within 180 s"
        assert process.poll() is None, "vitrine dev exited early:\n" + output.text()[-3000:]
        health = requests.get(f"http://127.0.0.1:{port}/api/health", timeout=10)
        assert health.status_code == 200
        assert health.json()["data"]["status"] == "ok"
        children = psutil.Process(process.pid).children(recursive=True)
        assert len(children) >= 3  # web, worker and clock at least
        assert (data_dir / "postgres" / "postmaster.pid").exists()
        assert (data_dir / "redis" / "redis.sock").exists()
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
    text = output.text()
    assert process.returncode == 0, text[-3000:]
    assert f"http://127.0.0.1:{port}" in text
    assert not [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]
    assert not (data_dir / "redis" / "redis.sock").exists()
    assert not (data_dir / "postgres" / "postmaster.pid").exists()
    with pytest.raises(requests.ConnectionError):
        requests.get(f"http://127.0.0.1:{port}/api/health", timeout=1)
