"""`vitrine dev` on its embedded defaults: starts, answers, owns its data directory, restarts a
crashed child, and stops every child on SIGHUP, SIGTERM or the death of its parent."""

import fcntl
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import termios
import threading
import time
import uuid
from pathlib import Path

import psutil
import pytest
import requests

from tests.conftest import ROOT


@pytest.fixture
def data_dir():
    # Under the repository (not /tmp/pytest-of-root, which the embedded PostgreSQL user cannot enter).
    path = ROOT / "var" / "test" / f"dev-{uuid.uuid4().hex[:8]}"
    yield path
    from backend import embedded

    embedded.stop_redis(path)  # a failed test must not leave its servers behind
    embedded.stop_postgres(path)
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def seeded_data_dir(data_dir, dev_template):
    """`data_dir` as a first `vitrine dev` on it left it (initialised, migrated, seeded, stopped):
    a copy of the run's `dev_template`, for the tests whose subject is not that first start. `cp -a`
    keeps the owner and modes PostgreSQL insists on (its data directory private to its server's user)."""
    subprocess.run(["cp", "-a", str(dev_template), str(data_dir)], check=True)
    return data_dir


def dev_env() -> dict[str, str]:
    """The test process's environment without what points at its own servers (its database, Redis
    and registry simulator): a `vitrine dev` brings its own."""
    return {k: v for k, v in os.environ.items()
            if k not in ("DATABASE_URL", "REDIS_URL", "VITRINE_DATA_DIR", "REGISTRY_BASE_URL")}


def vitrine(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ops.cli", *args], env=env or dev_env(), capture_output=True,
                          text=True, timeout=timeout)


class Output:
    """Reads the supervisor's output as it comes (a full pipe would block the children that
    write to it) and says when a line containing some text has appeared."""

    READY = "Vitrine is running at"

    def __init__(self, process: subprocess.Popen) -> None:
        self.lines: list[str] = []
        self.ready = threading.Event()
        self._changed = threading.Condition()
        self._done = False
        self._thread = threading.Thread(target=self._read, args=(process.stdout,), daemon=True)
        self._thread.start()

    def _read(self, stream) -> None:
        for line in stream:
            with self._changed:
                self.lines.append(line)
                self._changed.notify_all()
            if self.READY in line:
                self.ready.set()
        with self._changed:
            self._done = True
            self._changed.notify_all()
        self.ready.set()  # the process ended: stop waiting

    def wait_for(self, text: str, timeout: float) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: self._done or any(text in line for line in self.lines), timeout)

    def text(self) -> str:
        self._thread.join(timeout=30)
        return "".join(self.lines)


def start_dev(port: int, data_dir, *, parent: bool = False) -> tuple[subprocess.Popen, Output]:
    argv = [sys.executable, "-m", "ops.cli", "dev", "--port", str(port), "--data-dir", str(data_dir)]
    if parent:  # a parent process of its own, that the test can kill
        argv = [sys.executable, "-c", "import subprocess, sys, time; subprocess.Popen(sys.argv[1:]); time.sleep(600)",
                *argv]
    process = subprocess.Popen(argv, env=dev_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return process, Output(process)


def alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def assert_all_stopped(children, data_dir, port) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        alive = [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]
        if not alive:
            break
        time.sleep(0.1)
    assert not alive
    assert not (data_dir / "redis" / "redis.sock").exists()
    assert not (data_dir / "postgres" / "postmaster.pid").exists()
    with pytest.raises(requests.ConnectionError):
        requests.get(f"http://127.0.0.1:{port}/api/health", timeout=1)


def test_vitrine_dev_owns_its_data_directory_restarts_a_crashed_worker_and_stops_on_sighup(free_port, data_dir):
    port = free_port()
    process, output = start_dev(port, data_dir)
    children = []
    try:
        assert output.ready.wait(timeout=180), "vitrine dev did not print its URL within 180 s"
        assert process.poll() is None, "vitrine dev exited early:\n" + output.text()[-3000:]
        assert output.wait_for("Press Ctrl-C to stop.", timeout=10)
        health = requests.get(f"http://127.0.0.1:{port}/api/health", timeout=10)
        assert health.status_code == 200
        assert health.json()["data"]["status"] == "ok"
        root = requests.get(f"http://127.0.0.1:{port}/", timeout=10, allow_redirects=False)
        assert (root.status_code, root.headers["Location"].endswith("/api/docs")) == (302, True)
        banner = "".join(output.lines)
        for text in ("DATABASE_URL  postgresql://", "REDIS_URL     unix://", f"{data_dir / 'mail'}",
                     f"http://127.0.0.1:{port + 1}", f"http://127.0.0.1:{port + 2}", f"http://127.0.0.1:{port + 4}",
                     f"boot log      {data_dir / 'logs' / 'dev.log'}"):
            assert text in banner
        # Before the banner: one line saying where the boot log is (and the warnings), no log line.
        before = banner[:banner.index(Output.READY)].splitlines()
        assert before[0] == f"Starting Vitrine in {data_dir} (boot log: {data_dir / 'logs' / 'dev.log'}) ..."
        assert not [line for line in before if line.startswith("{")], before
        boot_log = (data_dir / "logs" / "dev.log").read_text()
        assert "migrations applied:" in boot_log and '"message": "boot"' in boot_log

        # A second `vitrine dev` on the same data directory refuses, naming the first.
        second = vitrine("dev", "--port", str(free_port()), "--data-dir", str(data_dir))
        assert second.returncode == 1
        assert f"pid {process.pid}, port {port}" in second.stderr
        # ... and nothing stops the servers it uses.
        stop = vitrine("stop-embedded", "--data-dir", str(data_dir))
        assert stop.returncode == 1 and f"pid {process.pid}" in stop.stderr
        assert requests.get(f"http://127.0.0.1:{port}/api/health", timeout=10).json()["data"]["status"] == "ok"

        # A worker killed outright is restarted; the others keep running.
        supervisor = psutil.Process(process.pid)
        worker = next(c for c in supervisor.children() if "dramatiq" in " ".join(_cmdline(c)))
        web = next(c for c in supervisor.children() if "gunicorn" in " ".join(_cmdline(c)))
        left_behind = worker.children(recursive=True)  # its worker process, which a kill -9 orphans
        worker.kill()
        assert output.wait_for("worker restarted", timeout=30), output.text()[-3000:]
        assert web.is_running()
        # (SIGKILLed with the restart; dying takes the kernel a moment on a loaded machine)
        deadline = time.monotonic() + 10
        while [p for p in left_behind if alive(p)] and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [p for p in left_behind if alive(p)]
        children = supervisor.children(recursive=True)
        assert any("dramatiq" in " ".join(_cmdline(c)) and c.pid != worker.pid for c in children)
    finally:
        process.send_signal(signal.SIGHUP)  # a closed terminal
        process.wait(timeout=60)
    text = output.text()
    assert process.returncode == 0, text[-3000:]
    assert_all_stopped(children, data_dir, port)
    assert not (data_dir / "dev.lock").read_text()


def start_dev_on_a_terminal(port: int, data_dir) -> tuple[subprocess.Popen, int]:
    """`vitrine dev` with a pseudo-terminal as its controlling terminal; returns it and the master."""
    master, slave = os.openpty()

    def controlling_terminal() -> None:  # after setsid (start_new_session): the pty becomes the ctty
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    argv = [sys.executable, "-m", "ops.cli", "dev", "--port", str(port), "--data-dir", str(data_dir)]
    process = subprocess.Popen(argv, env=dev_env(), stdin=slave, stdout=slave, stderr=slave, start_new_session=True,
                               preexec_fn=controlling_terminal)
    os.close(slave)
    return process, master


def read_until(master: int, text: str, timeout: float) -> str:
    """The terminal's output until `text` appears (it is read all along: a full pty blocks the writer)."""
    seen, deadline = b"", time.monotonic() + timeout
    while text.encode() not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 1)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the other side is gone
                break
            if not chunk:
                break
            seen += chunk
    return seen.decode("utf-8", errors="replace")


def embedded_servers(data_dir) -> list[int]:
    """The pids of the PostgreSQL and Redis servers of `data_dir`."""
    pids = []
    for process in psutil.process_iter(["cmdline"]):
        argv = process.info["cmdline"] or []
        if argv and Path(argv[0]).name in ("postgres", "redis-server") and str(data_dir) in " ".join(argv):
            pids.append(process.pid)
    return pids


@pytest.mark.usefixtures("seeded_data_dir")  # a second start: the first is the test above's
@pytest.mark.parametrize("killed", [False, True], ids=["hang-up", "hang-up-then-sigkill"])
def test_a_terminal_that_goes_away_leaves_no_embedded_server_running(free_port, data_dir, killed):
    # The terminal goes away (its pty hangs up): every write to it fails from then on. script(1)
    # also kills its command outright about 2 s later, leaving it no chance to stop anything.
    port = free_port()
    process, master = start_dev_on_a_terminal(port, data_dir)
    children = []
    try:
        seen = read_until(master, "Press Ctrl-C to stop.", timeout=180)
        assert "Press Ctrl-C to stop." in seen, seen[-3000:]
        assert embedded_servers(data_dir), "no embedded server found to begin with"
        # Its processes (the guard, in a session of its own, is meant to outlive it a moment).
        children = [c for c in psutil.Process(process.pid).children(recursive=True)
                    if "ops.devguard" not in _cmdline(c)]
        assert len(children) >= 4  # web, worker, clock and the simulators at least
    finally:
        os.close(master)
    if killed:
        process.kill()
    process.wait(timeout=90)
    if not killed:
        assert process.returncode == 0
    deadline = time.monotonic() + 60
    while embedded_servers(data_dir) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not embedded_servers(data_dir)
    assert_all_stopped(children, data_dir, port)  # none orphaned, even by a killed supervisor


def _cmdline(process: psutil.Process) -> list[str]:
    """Its command line, or none when it ended meanwhile (a short-lived child: nothing to orphan)."""
    try:
        return process.cmdline()
    except psutil.NoSuchProcess:
        return []


GUARDED = """
import signal, subprocess, sys
from ops.devguard import Guard

guard = Guard(__import__("pathlib").Path(sys.argv[1]), [], grace=0.5)
stubborn = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"
# A child that ignores SIGTERM, with a process of its own in its group (a Dramatiq worker, say).
leader = f"import subprocess, sys; subprocess.Popen([sys.executable, '-c', {stubborn!r}]); exec({stubborn!r})"
child = subprocess.Popen([sys.executable, "-c", leader], start_new_session=True)
guard.watch(child.pid)
ended = subprocess.Popen([sys.executable, "-c", stubborn], start_new_session=True)
guard.watch(ended.pid)
guard.forget(ended.pid)  # the supervisor ended that one itself: the guard leaves its group alone
print(child.pid, ended.pid, flush=True)
signal.pause()
"""


def test_the_guard_ends_what_a_killed_supervisor_leaves_and_only_that(tmp_path):
    supervisor = subprocess.Popen([sys.executable, "-c", GUARDED, str(tmp_path)], stdout=subprocess.PIPE, text=True,
                                  cwd=ROOT)
    child_pid, forgotten_pid = map(int, supervisor.stdout.readline().split())
    forgotten = psutil.Process(forgotten_pid)
    try:
        group = [psutil.Process(child_pid)]
        deadline = time.monotonic() + 30
        while len(group) < 2 and time.monotonic() < deadline:  # the child's own process has started
            time.sleep(0.05)
            group = [psutil.Process(child_pid), *psutil.Process(child_pid).children()]
        assert len(group) == 2
        guard = next(p for p in psutil.Process(supervisor.pid).children() if "ops.devguard" in _cmdline(p))
        supervisor.kill()  # no chance to stop anything: the SIGTERM-proof group is the guard's to end
        supervisor.wait(timeout=10)
        guard.wait(timeout=30)  # it ends once it has done its work
        assert not [p for p in group if alive(p)]
        assert alive(forgotten)
    finally:
        forgotten.kill()


def test_the_banner_masks_passwords_and_names_the_boot_log(tmp_path):
    from ops.dev import Output as DevOutput
    from ops.dev import Supervisor

    supervisor = Supervisor(port=8000, data_dir=tmp_path)
    supervisor.output = DevOutput(tmp_path / "logs" / "dev.log")
    supervisor.env = dict(os.environ, DATABASE_URL="postgresql://app:s3cret-pw@db:5432/vitrine",
                          REDIS_URL="redis://:hunter22-pw@cache:6379/0")
    banner = supervisor.banner()
    supervisor.output.close()
    assert "DATABASE_URL  postgresql://app:***@db:5432/vitrine" in banner
    assert "REDIS_URL     redis://:***@cache:6379/0" in banner
    assert "s3cret-pw" not in banner and "hunter22-pw" not in banner
    assert f"boot log      {tmp_path / 'logs' / 'dev.log'}" in banner


def test_a_childs_output_goes_to_the_boot_log_and_to_the_terminal_only_once_live(tmp_path):
    import io

    from ops.dev import Output as DevOutput

    terminal = io.StringIO()
    output = DevOutput(tmp_path / "dev.log", terminal=terminal)

    def child(name: str, text: str) -> None:
        process = subprocess.Popen([sys.executable, "-c", f"print({text!r})"], stdout=subprocess.PIPE)
        output.follow(name, process.stdout)
        process.wait()
        output.drain(name)

    child("web", "booting\nboot done")
    assert terminal.getvalue() == ""  # before the banner: the file only
    assert output.tail("web") == "  booting\n  boot done"
    output.live = True
    child("worker", "a request")
    output.close()
    output.write("after the end\n")  # a straggler once closed: dropped, not an error
    assert terminal.getvalue() == "a request\n"
    assert (tmp_path / "dev.log").read_text() == "booting\nboot done\na request\n"


def test_a_child_dying_before_the_platform_is_up_is_reported_with_its_last_lines(tmp_path):
    from ops.dev import Output as DevOutput
    from ops.dev import Supervisor

    supervisor = Supervisor(port=8000, data_dir=tmp_path)
    supervisor.output = DevOutput(tmp_path / "logs" / "dev.log")
    supervisor.add("web", [sys.executable, "-c", "import sys; print('booting', flush=True); sys.exit('bad setting')"],
                   dict(os.environ))
    supervisor.children["web"].process.wait(timeout=30)
    with pytest.raises(RuntimeError) as raised:
        supervisor.check_children()
    supervisor.output.close()
    assert str(raised.value) == (f"web exited with status 1; its last lines (all in {tmp_path / 'logs' / 'dev.log'}):"
                                 "\n  booting\n  bad setting")


@pytest.mark.usefixtures("seeded_data_dir")
def test_vitrine_dev_stops_everything_when_its_parent_dies(free_port, data_dir):
    port = free_port()
    parent, output = start_dev(port, data_dir, parent=True)
    try:
        assert output.ready.wait(timeout=180), "vitrine dev did not print its URL within 180 s"
        supervisor = psutil.Process(parent.pid).children()[0]
        children = supervisor.children(recursive=True)
        assert len(children) >= 4  # web, worker, clock and the simulator at least
    finally:
        parent.kill()
        parent.wait(timeout=10)
    supervisor.wait(timeout=60)
    assert_all_stopped(children, data_dir, port)


@pytest.mark.parametrize("held", ["api", "esign"])
def test_vitrine_dev_refuses_a_busy_port_before_migrating_and_leaves_no_data_directory(data_dir, held):
    from ops.dev import port_free

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        if held == "esign":  # the e-signature simulator's port is --port + 1
            port -= 1
            if not port_free(port):
                pytest.skip(f"port {port} is taken by something else")
        result = vitrine("dev", "--port", str(port), "--data-dir", str(data_dir))
    assert result.returncode == 1
    if held == "api":
        assert f"port {port} in use (a previous vitrine dev?); choose another with --port" in result.stderr
    else:
        assert f"port {port + 1} in use: the esign simulator listens on --port + 1 ({port} + 1;" in result.stderr
    assert not data_dir.exists()  # refused: no data directory, no dev.lock, nothing started


@pytest.mark.parametrize("command", [["dev"], ["migrate"], ["web"], ["worker"], ["clock"], ["queues"]])
def test_a_configuration_error_is_one_line_and_status_2_in_every_process(command, data_dir):
    env = dict(dev_env(), PLATFORM_COMMISSION_RATE_BPS="twenty")
    result = vitrine(*command, "--data-dir", str(data_dir), env=env)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "vitrine: configuration error: PLATFORM_COMMISSION_RATE_BPS must be an integer number of basis points, "
        "got 'twenty'"
    ]
    assert not data_dir.exists()  # checked before anything started


def test_procfile_runs_every_process_through_the_checked_entry_points():
    lines = dict(line.split(": ", 1) for line in (ROOT / "Procfile").read_text().splitlines() if line.strip())
    assert lines == {"release": "vitrine migrate", "web": "vitrine web", "worker": "vitrine worker",
                     "clock": "vitrine clock"}
