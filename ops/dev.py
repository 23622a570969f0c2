"""`vitrine dev`: the whole platform on one machine, under one supervisor.

Embedded PostgreSQL and Redis when `DATABASE_URL` / `REDIS_URL` are unset, migrations, demo data
on an empty database, the provider simulators, then gunicorn (one process, threads: in-memory
rate limits and counters stay exact), a Dramatiq worker and the clock.

- One `vitrine dev` per data directory (`ops.datadir`): a second one refuses, naming the first.
- The ports (the API's and the simulators') are checked free before anything starts.
- Its terminal shows a progress line per boot step, the configuration warnings once, then the
  banner (URLs, `DATABASE_URL` and `REDIS_URL` with any password masked, the mail folder, the
  simulators, the data directory); what `migrate`, `seed-demo` and the processes print before the
  banner goes only to `<data dir>/logs/dev.log`. After the banner, the processes' JSON log lines go
  to the terminal too (and always to that file).
- A child that dies once the platform is up is restarted after a growing delay (1 s, 2 s, ... up
  to 30 s; back to 1 s once it has stayed up a minute); the others keep running.
- Ctrl-C, SIGTERM, SIGHUP (a closed terminal) or the death of the supervisor's parent stop every
  child, then the embedded servers of the data directory. If the supervisor itself is killed
  outright, each child gets SIGTERM from the kernel (Linux) and the guard (`ops.devguard`) ends
  the children's process groups that are still there after a grace period, then the embedded
  servers: nothing is left orphaned.

Adding a simulator: append a `Simulator` to `SIMULATORS` (its port is the API's plus `offset`;
`settings` are the environment defaults that point the platform at it; `runs` says whether the
environment wants it: the e-invoicing simulator is the operator's or the AFNOR platform's, after
`EINVOICING_OPERATOR`).
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import requests

import ops
from backend import embedded
from backend.config import load_config
from backend.logs import url_without_password
from backend.printing.demo import DEMO_PRINTER
from ops import devguard
from ops.datadir import LOCK_NAME, DataDirBusy, DataDirLock
from ops.progress import Progress

GUNICORN_CONF = Path(ops.__file__).parent / "gunicorn.conf.py"
RESTART_DELAYS = (1, 2, 4, 8, 16, 30)  # seconds before the 1st, 2nd, ... restart in a row
STABLE_AFTER = 60.0  # a child up this long has its restart delay reset
BOOT_LOG = Path("logs") / "dev.log"  # under the data directory
TAIL_LINES = 15  # of a child's output, shown when it dies before the platform is up
# The Dramatiq worker's processes and threads (`vitrine bench monthend` and `scaleout` run theirs alike).
WORKER_PROCESSES = 1
WORKER_THREADS = 4


@dataclass(frozen=True)
class Simulator:
    name: str  # process name in the logs and the banner
    module: str  # run as `python -m <module> --port <port> <args(api_url)...>`
    offset: int  # its port: the API's port plus this
    label: str  # the banner's description
    # Environment defaults (kept when already set) pointing the platform at the simulator's base URL.
    settings: Callable[[str], dict[str, str]] = lambda url: {}
    args: Callable[[str], list[str]] = lambda api_url: []
    # Whether it runs, given the environment (the e-invoicing platform's API is chosen by setting).
    runs: Callable[[Mapping[str, str]], bool] = lambda env: True


def _einvoicing_operator(env: Mapping[str, str]) -> str:
    return (env.get("EINVOICING_OPERATOR") or "odp").strip().lower()


SIMULATORS: list[Simulator] = [
    Simulator(
        name="esign",
        module="ops.simulators.esign",
        offset=1,
        label="e-signature provider simulator (signer pages at /sign/{id})",
        settings=lambda url: {"ESIGN_BASE_URL": f"{url}/v3", "ESIGN_API_KEY": "esk_dev_simulator",
                              "ESIGN_WEBHOOK_SECRET": "whsec_dev_simulator"},
        args=lambda api_url: ["--callback", api_url],
    ),
    # Test credentials; polling every minute so a transmission reaches `acknowledged` on its own.
    Simulator(
        name="odp",
        module="ops.simulators.odp",
        offset=2,
        label="e-invoicing operator simulator",
        settings=lambda url: {"ODP_BASE_URL": url, "ODP_TOKEN_URL": f"{url}/oauth/token",
                              "ODP_CLIENT_ID": "odp_dev_client", "ODP_CLIENT_SECRET": "odp_dev_simulator_secret",
                              "ODP_ENTITY_ID": "ent-dev-platform", "EINVOICING_POLLING_ENABLED": "true",
                              "EINVOICING_POLLING_INTERVAL_MS": "60000"},
        runs=lambda env: _einvoicing_operator(env) != "afnor",
    ),
    # EINVOICING_OPERATOR=afnor: an approved platform speaking AFNOR XP Z12-013, on the same port.
    Simulator(
        name="afnor",
        module="ops.simulators.afnor",
        offset=2,
        label="AFNOR XP Z12-013 platform simulator (Flow and Directory Services)",
        settings=lambda url: {
            "AFNOR_FLOW_URL": f"{url}/flow-service", "AFNOR_DIRECTORY_URL": f"{url}/directory-service",
            "AFNOR_TOKEN_URL": f"{url}/oauth/token", "AFNOR_CLIENT_ID": "afnor_dev_client",
            "AFNOR_CLIENT_SECRET": "afnor_dev_simulator_secret", "AFNOR_SCOPE": "afnor:platform",
            "AFNOR_WEBHOOK_SECRET": "afnor_dev_callback_secret",
            "EINVOICING_POLLING_ENABLED": "true", "EINVOICING_POLLING_INTERVAL_MS": "60000"},
        args=lambda api_url: ["--callback", api_url],
        runs=lambda env: _einvoicing_operator(env) == "afnor",
    ),
    # The bank (API.md, "Company registry (wave 3): decisions": P+3): the finance team's files go to
    # it and its statements come back (docs/bank.md); the platform itself never calls it.
    Simulator(
        name="bank",
        module="ops.simulators.bank",
        offset=3,
        label="bank simulator (POST /files a pain file, POST /statements the next camt.053)",
    ),
    Simulator(
        name="registry",
        module="ops.simulators.registry",
        offset=4,
        label="company registry simulator (demo companies; POST /_control/companies)",
        settings=lambda url: {"REGISTRY_BASE_URL": url},
    ),
]


# A demo legal identity of the platform (a fictitious, checksum-valid SIRET), so the demo's invoices
# carry complete Factur-X parties; ODP_SELLER_AP is its directory address.
DEMO_LEGAL_IDENTITY = (
    ("PLATFORM_LEGAL_COMPANY_NAME", "Vitrine Démo SAS"), ("PLATFORM_LEGAL_SIRET", "90123456700013"),
    ("PLATFORM_LEGAL_VAT_NUMBER", "FR15901234567"), ("PLATFORM_LEGAL_STREET", "8 avenue de l'Opéra"),
    ("PLATFORM_LEGAL_POSTAL_CODE", "75001"), ("PLATFORM_LEGAL_CITY", "Paris"),
    ("PLATFORM_LEGAL_EMAIL", "facturation@vitrine.example"), ("PLATFORM_LEGAL_IBAN", "FR7630006000011234567890189"),
    ("PLATFORM_LEGAL_BIC", "AGRIFRPP"), ("ODP_SELLER_AP", "901234567"), ("PLATFORM_SEPA_CREDITOR_ID", "FR72ZZZ123456"),
    ("PLATFORM_LEGAL_FORM", "SAS"), ("PLATFORM_SHARE_CAPITAL_CENTS", "5000000"),
    ("PLATFORM_REGISTRATION", "RCS Paris 901 234 567"),
)


def running_simulators(env: Mapping[str, str]) -> list[Simulator]:
    """The simulators `vitrine dev` starts with this environment."""
    return [simulator for simulator in SIMULATORS if simulator.runs(env)]


def dev_defaults(port: int, env: Mapping[str, str]) -> dict[str, str]:
    """The settings `vitrine dev --port PORT` gives its processes where `env` leaves them unset (or
    empty): its public URL, the simulators' URLs and test credentials, the demo legal identity and
    printer. A command run beside a live `vitrine dev` on its data directory takes the same ones
    (`ops.cli`), so it renders and sends what the platform's own processes would."""
    api_url = f"http://127.0.0.1:{port}"
    defaults = {"PUBLIC_BASE_URL": api_url, "COOKIE_SECURE": "false", "ENVIRONMENT": "development"}
    for simulator in running_simulators(env):  # unset provider settings point at the simulators
        defaults.update(simulator.settings(f"http://127.0.0.1:{port + simulator.offset}"))
    defaults.update(DEMO_LEGAL_IDENTITY)
    # The demo printer manufactures the furniture types that name no printer of their own.
    defaults["DEFAULT_PRINTER_ORGANIZATION_ID"] = DEMO_PRINTER
    # The self-billing pass every minute: the demo distributor's ended reservation is self-billed
    # soon after start, and its invoice e-mailed to it (the mail folder), as a platform in production does.
    # Its self-billed invoices are deposited with the operator, as the reform requires in production
    # (docs/einvoicing.md, "Configuration"); EINVOICING_SELF_BILLING_ENABLED=false keeps them out.
    defaults.update({"SELF_BILLING_SCHEDULER_ENABLED": "true", "SELF_BILLING_SCHEDULER_INTERVAL_MS": "60000",
                     "EINVOICING_SELF_BILLING_ENABLED": "true"})
    return {name: value for name, value in defaults.items() if not env.get(name)}


class PortBusy(Exception):
    pass


class Output:
    """Where the children's output goes: every line to the boot log; to the terminal too once the
    banner is out (`live`). The last lines of each child are kept to explain an early death."""

    def __init__(self, path: Path, terminal=None) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.file = path.open("a", encoding="utf-8", errors="replace")
        self.terminal = terminal or sys.stdout
        self.live = False
        self.tails: dict[str, collections.deque[str]] = {}
        self.pumps: dict[str, threading.Thread] = {}
        self._lock = threading.Lock()

    def write(self, text: str, source: str | None = None) -> None:
        with self._lock:
            if source is not None:
                self.tails.setdefault(source, collections.deque(maxlen=TAIL_LINES)).append(text.rstrip("\n"))
            if self.file.closed:  # a stopped child's very last lines, after `vitrine dev` ended
                return
            self.file.write(text)
            self.file.flush()
            if self.live:
                with contextlib.suppress(OSError, ValueError):  # a closed terminal: the file still gets it
                    self.terminal.write(text)
                    self.terminal.flush()

    def follow(self, name: str, stream) -> None:
        """Read a child's output (its pipe must be drained, or the child blocks) on a thread."""

        def pump() -> None:
            with stream:
                for raw in iter(stream.readline, b""):
                    self.write(raw.decode("utf-8", errors="replace"), source=name)

        self.pumps[name] = thread = threading.Thread(target=pump, name=f"output-{name}", daemon=True)
        thread.start()

    def drain(self, name: str, timeout: float = 2) -> None:
        """Wait until a dead child's last lines are read (its own children may hold the pipe: bounded)."""
        if name in self.pumps:
            self.pumps[name].join(timeout)

    def tail(self, name: str) -> str:
        with self._lock:
            return "\n".join(f"  {line}" for line in self.tails.get(name, ()))

    def close(self) -> None:
        with self._lock:
            self.file.close()


def say(text: str, *, error: bool = False) -> None:
    """Print a line of the supervisor's own; the terminal may be gone (a hung-up pty answers EIO,
    a closed pipe EPIPE): then say nothing more, and let the stop go on."""
    stream = sys.stderr if error else sys.stdout
    try:
        print(text, file=stream, flush=True)
    except (OSError, ValueError):
        with contextlib.suppress(OSError):
            devnull = open(os.devnull, "w")  # noqa: SIM115 (for the rest of the process)
            sys.stdout = sys.stderr = devnull  # nor at exit, when Python flushes them


def port_free(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def _die_with_parent() -> None:
    """In a child, before exec: SIGTERM when the supervisor dies, however it dies (Linux)."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _signal_group(process: subprocess.Popen, signum: int) -> None:
    """Signal the process group a child leads (each child has a session of its own)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signum)


@dataclass
class Child:
    name: str
    argv: list[str]
    env: dict[str, str]
    process: subprocess.Popen | None = None
    started_at: float = 0.0
    restarts_in_a_row: int = 0
    restart_at: float | None = None  # when a dead child is due to start again


@dataclass
class Supervisor:
    port: int
    data_dir: Path
    children: dict[str, Child] = field(default_factory=dict)
    lock: DataDirLock | None = None
    ready: bool = False
    stopping: bool = False
    env: dict[str, str] = field(default_factory=dict)
    output: Output | None = None
    guard: devguard.Guard | None = None

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def sim_url(self, simulator: Simulator) -> str:
        return f"http://127.0.0.1:{self.port + simulator.offset}"

    def claim(self) -> None:
        """Own the data directory, and check every port is free, before anything starts. A refusal
        leaves no trace: a data directory made for the lock is removed again."""
        created = not self.data_dir.exists()
        self.lock = DataDirLock(self.data_dir)
        self.lock.acquire(self.port)
        try:
            self.check_ports()
        except PortBusy:
            self.lock.release()
            self.lock = None
            if created:
                with contextlib.suppress(OSError):
                    (self.data_dir / LOCK_NAME).unlink()
                    self.data_dir.rmdir()
            raise
        # Ends the children and stops the embedded servers should this process be killed outright.
        self.guard = devguard.start(self.data_dir, postgres=not os.environ.get("DATABASE_URL"),
                                    redis=not os.environ.get("REDIS_URL"))

    def check_ports(self) -> None:
        if not port_free(self.port):
            raise PortBusy(f"port {self.port} in use (a previous vitrine dev?); choose another with --port")
        for simulator in running_simulators(os.environ):
            port = self.port + simulator.offset
            if not port_free(port):
                raise PortBusy(f"port {port} in use: the {simulator.name} simulator listens on --port + "
                               f"{simulator.offset} ({self.port} + {simulator.offset}; a previous vitrine dev?); "
                               "choose another --port")

    def environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env["VITRINE_DATA_DIR"] = str(self.data_dir)
        env["VITRINE_SUPERVISOR"] = "dev"  # children leave the boot warnings to the banner
        for name, value in dev_defaults(self.port, env).items():
            env[name] = value
        if not env.get("DATABASE_URL"):  # its superuser migrates, its runtime role runs the processes
            env["DATABASE_OWNER_URL"] = embedded.ensure_postgres(self.data_dir)
            env["DATABASE_URL"] = embedded.runtime_url(env["DATABASE_OWNER_URL"])
        if not env.get("REDIS_URL"):
            env["REDIS_URL"] = embedded.ensure_redis(self.data_dir)
        return env

    def add(self, name: str, argv: list[str], env: dict[str, str]) -> None:
        self.children[name] = child = Child(name=name, argv=argv, env=env)
        self.launch(child)

    def launch(self, child: Child) -> None:
        # A session of its own: Ctrl-C reaches the supervisor only, which stops children in order.
        child.process = subprocess.Popen(child.argv, env=child.env, start_new_session=True,
                                         preexec_fn=_die_with_parent, stdout=subprocess.PIPE,
                                         stderr=subprocess.STDOUT)
        if self.guard is not None:
            self.guard.watch(child.process.pid)  # its process group: the child leads a session
        self.output.follow(child.name, child.process.stdout)
        child.started_at = time.monotonic()
        child.restart_at = None

    def run_command(self, *args: str) -> None:
        """`vitrine <args>` to its end, its output to the boot log; CommandFailed with its last lines."""
        done = subprocess.run([sys.executable, "-m", "ops.cli", *args], env=self.env, capture_output=True)
        text = (done.stdout + done.stderr).decode("utf-8", errors="replace")
        for line in text.splitlines(keepends=True):
            self.output.write(line, source=args[0])
        if done.returncode != 0:
            raise CommandFailed(f"`vitrine {' '.join(args)}` failed (status {done.returncode}):\n"
                                f"{self.output.tail(args[0])}")

    def start(self) -> None:
        self.claim()
        self.output = Output(self.data_dir / BOOT_LOG)
        self.output.write(f"--- vitrine dev (pid {os.getpid()}, port {self.port}) starting at "
                          f"{time.strftime('%Y-%m-%d %H:%M:%S %Z')}\n")
        say(f"Starting Vitrine in {self.data_dir} (boot log: {self.output.path}) ...")
        progress = Progress("dev")  # a line per step on a terminal, nothing in a pipe
        progress.step("PostgreSQL and Redis", 1, 4)
        env = self.env = self.environment()
        progress.step("migrations", 2, 4)
        self.run_command("migrate")
        progress.step("demo data", 3, 4)
        self.run_command("seed-demo", "--if-empty")
        progress.step("web, worker, clock and simulators", 4, 4)
        web_env = dict(env, PORT=str(self.port), HOST="127.0.0.1", WEB_CONCURRENCY="1")
        # One web process: its rate-limit counters can stay in memory (elsewhere they are in Redis).
        web_env.setdefault("RATE_LIMIT_STORAGE_URL", "memory://")
        self.add("web", [sys.executable, "-m", "gunicorn", "api.app:create_app()", "-c", str(GUNICORN_CONF)],
                 web_env)
        self.add("worker", [sys.executable, "-m", "dramatiq", "actors", "--processes", str(WORKER_PROCESSES),
                            "--threads", str(WORKER_THREADS)], env)
        self.add("clock", [sys.executable, "-m", "ops.cli", "clock"], env)
        self.wait_ready()
        # Started once the web answers, so that their start does not slow the web's boot down.
        for simulator in running_simulators(env):
            port = self.port + simulator.offset
            self.add(simulator.name, [sys.executable, "-m", simulator.module, "--port", str(port),
                                      *simulator.args(self.api_url)], env)
        for simulator in running_simulators(env):
            self.wait_listening(simulator.name, self.port + simulator.offset)
        self.ready = True
        say(self.banner())
        self.output.live = True

    def banner(self) -> str:
        config = load_config(self.env)
        lines = []
        if config.warnings:
            lines += ["", "Configuration warnings:", *(f"  - {warning}" for warning in config.warnings)]
        lines += [
            "",
            f"Vitrine is running at {self.api_url}",
            f"  API docs      {self.api_url}/api/docs",
            f"  health        {self.api_url}/api/health",
        ]
        lines += [f"  {sim.name:<13} {self.sim_url(sim)}  {sim.label}" for sim in running_simulators(self.env)]
        lines += [
            f"  DATABASE_URL  {url_without_password(self.env['DATABASE_URL'])}",
            f"  REDIS_URL     {url_without_password(self.env['REDIS_URL'])}",
            "  mail          " + ("sent through SMTP_URL" if config.smtp_url
                                  else f"{self.data_dir / 'mail'} (one .eml file per e-mail)"),
            f"  data dir      {self.data_dir}",
            f"  boot log      {self.output.path} (migrations, demo data, the processes' start)",
            "  demo logins   admin@vitrine.example, industriel@, distributeur@, imprimeur@ (password vitrine-demo)",
            f"  commands      .venv/bin/vitrine queues --data-dir {self.data_dir}",
            "Press Ctrl-C to stop. The processes' log lines follow.",
            "",
        ]
        return "\n".join(lines)

    def wait_listening(self, name: str, port: int, timeout: float = 30) -> None:
        """A simulator the banner names answers on its port before the banner is printed."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.check_children()
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                return
            time.sleep(0.1)
        raise RuntimeError(f"{name} did not listen on port {port} within {timeout:.0f} s")

    def wait_ready(self, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        url = f"{self.api_url}/api/health"
        while time.monotonic() < deadline:
            self.check_children()
            try:
                if requests.get(url, timeout=1).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"the web process did not answer {url} within {timeout:.0f} s")

    def check_children(self) -> None:
        """Before the platform is up a dead child stops the start; after, it is restarted later."""
        now = time.monotonic()
        for child in self.children.values():
            if self.stopping or child.process is None:
                continue
            code = child.process.poll()
            if code is None:
                if now - child.started_at > STABLE_AFTER:
                    child.restarts_in_a_row = 0
                continue
            if not self.ready:
                self.output.drain(child.name)
                tail = self.output.tail(child.name)
                raise RuntimeError(f"{child.name} exited with status {code}"
                                   + (f"; its last lines (all in {self.output.path}):\n{tail}" if tail else ""))
            if child.restart_at is None:
                # Its own processes outlive it (a killed dramatiq leaves its worker process): end them.
                _signal_group(child.process, signal.SIGTERM)
                delay = RESTART_DELAYS[min(child.restarts_in_a_row, len(RESTART_DELAYS) - 1)]
                child.restart_at = now + delay
                say(f"vitrine dev: {child.name} exited with status {code}; restarting it in {delay} s", error=True)
            elif now >= child.restart_at:
                # What the dead child left and its SIGTERM did not end (a dramatiq worker process
                # whose main process was killed outright) would outlive everything: end it now.
                self.end_group(child.process)
                child.restarts_in_a_row += 1
                self.launch(child)
                say(f"vitrine dev: {child.name} restarted (pid {child.process.pid})", error=True)

    def stop(self) -> None:
        self.stopping = True
        try:
            self.stop_children()
        finally:  # whatever happened above, the embedded servers stop and the lock is released
            try:
                self.stop_embedded()
            finally:
                if self.output is not None:
                    self.output.close()

    def stop_children(self) -> None:
        running = [c.process for c in self.children.values() if c.process is not None and c.process.poll() is None]
        for process in running:
            process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 20
        for process in running:
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for child in self.children.values():  # whatever a child left behind in its session
            if child.process is not None:
                self.end_group(child.process)

    def end_group(self, process: subprocess.Popen) -> None:
        """SIGKILL what is left of a child's process group; the guard need not watch it any more."""
        _signal_group(process, signal.SIGKILL)
        if self.guard is not None:
            self.guard.forget(process.pid)

    def stop_embedded(self) -> None:
        if self.lock is None or self.lock._handle is None:
            return
        # The owner of the data directory stops its embedded servers, including those a previous
        # run killed without a chance to stop them left behind.
        try:
            if not os.environ.get("REDIS_URL"):
                embedded.stop_redis(self.data_dir)
        finally:
            try:
                if not os.environ.get("DATABASE_URL"):
                    embedded.stop_postgres(self.data_dir)
            finally:
                self.lock.release()


class CommandFailed(Exception):
    """`migrate` or `seed-demo` failed before the platform started (the message has its last lines)."""


def run_dev(port: int, data_dir: Path) -> int:
    supervisor = Supervisor(port=port, data_dir=data_dir.resolve())
    stop_requested = False
    parent = os.getppid()

    def request_stop(signum, frame) -> None:
        nonlocal stop_requested
        stop_requested = True

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, request_stop)
    status = 0
    try:
        supervisor.start()
        while not stop_requested and os.getppid() == parent:
            supervisor.check_children()
            time.sleep(0.2)
        say("Stopping Vitrine ...")
    except (DataDirBusy, PortBusy, embedded.EmbeddedError) as exc:
        say(f"vitrine dev: {exc}", error=True)
        status = 1
    except CommandFailed as exc:
        say(f"vitrine dev: {exc}", error=True)
        status = 1
    except RuntimeError as exc:  # a child died before the platform was up
        say(f"vitrine dev: {exc}", error=True)
        status = 1
    finally:
        supervisor.stop()
    return status
