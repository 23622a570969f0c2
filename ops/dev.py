"""`vitrine dev`: the whole platform on one machine, under one supervisor.

Embedded PostgreSQL and Redis when `DATABASE_URL` / `REDIS_URL` are unset, migrations, demo data
on an empty database, the provider simulators, then gunicorn (one process, threads: in-memory
rate limits and counters stay exact), a Dramatiq worker and the periodiq clock. Ctrl-C or SIGTERM
stops every child, then the embedded servers this run started.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import requests

import ops
from backend import embedded
from backend.printing.demo import DEMO_PRINTER

GUNICORN_CONF = Path(ops.__file__).parent / "gunicorn.conf.py"


@dataclass
class Supervisor:
    port: int
    data_dir: Path
    children: dict[str, subprocess.Popen] = field(default_factory=dict)
    started_postgres: bool = False
    started_redis: bool = False
    stopping: bool = False

    def environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env["VITRINE_DATA_DIR"] = str(self.data_dir)
        env.setdefault("PUBLIC_BASE_URL", f"http://127.0.0.1:{self.port}")
        env.setdefault("COOKIE_SECURE", "false")
        env.setdefault("ENVIRONMENT", "development")
        # Unset e-signature settings point at the provider simulator that `start` runs on port + 1.
        for name, value in (("ESIGN_BASE_URL", f"http://127.0.0.1:{self.port + 1}/v3"),
                            ("ESIGN_API_KEY", "esk_dev_simulator"), ("ESIGN_WEBHOOK_SECRET", "whsec_dev_simulator")):
            env[name] = env.get(name) or value
        # Unset operator settings point at the e-invoicing operator simulator on port + 2, with test
        # credentials; polling runs every minute so a transmission reaches `acknowledged` on its own.
        odp = f"http://127.0.0.1:{self.port + 2}"
        for name, value in (("ODP_BASE_URL", odp), ("ODP_TOKEN_URL", f"{odp}/oauth/token"),
                            ("ODP_CLIENT_ID", "odp_dev_client"), ("ODP_CLIENT_SECRET", "odp_dev_simulator_secret"),
                            ("ODP_ENTITY_ID", "ent-dev-platform"), ("EINVOICING_POLLING_ENABLED", "true"),
                            ("EINVOICING_POLLING_INTERVAL_MS", "60000")):
            env[name] = env.get(name) or value
        # A demo legal identity of the platform (a fictitious, checksum-valid SIRET), so the demo's
        # invoices carry complete Factur-X parties; ODP_SELLER_AP is its directory address.
        for name, value in (("PLATFORM_LEGAL_COMPANY_NAME", "Vitrine Démo SAS"),
                            ("PLATFORM_LEGAL_SIRET", "90123456700013"), ("PLATFORM_LEGAL_VAT_NUMBER", "FR15901234567"),
                            ("PLATFORM_LEGAL_STREET", "8 avenue de l'Opéra"), ("PLATFORM_LEGAL_POSTAL_CODE", "75001"),
                            ("PLATFORM_LEGAL_CITY", "Paris"), ("PLATFORM_LEGAL_EMAIL", "facturation@vitrine.example"),
                            ("PLATFORM_LEGAL_IBAN", "FR7630006000011234567890189"), ("ODP_SELLER_AP", "901234567"),
                            ("PLATFORM_SEPA_CREDITOR_ID", "FR12ZZZ123456")):
            env[name] = env.get(name) or value
        # The demo printer manufactures the furniture types that name no printer of their own.
        env["DEFAULT_PRINTER_ORGANIZATION_ID"] = env.get("DEFAULT_PRINTER_ORGANIZATION_ID") or DEMO_PRINTER
        if not env.get("DATABASE_URL"):
            self.started_postgres = not (self.data_dir / "postgres" / "postmaster.pid").exists()
            env["DATABASE_URL"] = embedded.ensure_postgres(self.data_dir)
        if not env.get("REDIS_URL"):
            self.started_redis = not embedded.redis_socket(self.data_dir).exists()
            env["REDIS_URL"] = embedded.ensure_redis(self.data_dir)
        return env

    def spawn(self, name: str, argv: list[str], env: dict[str, str]) -> None:
        # A session of its own: Ctrl-C reaches the supervisor only, which stops children in order.
        self.children[name] = subprocess.Popen(argv, env=env, start_new_session=True)

    def start(self) -> None:
        env = self.environment()
        subprocess.run([sys.executable, "-m", "ops.cli", "migrate"], env=env, check=True)
        subprocess.run([sys.executable, "-m", "ops.cli", "seed-demo", "--if-empty"], env=env, check=True)
        bin_dir = Path(sys.executable).parent
        web_env = dict(env, PORT=str(self.port), HOST="127.0.0.1", WEB_CONCURRENCY="1")
        # One web process: its rate-limit counters can stay in memory (elsewhere they are in Redis).
        web_env.setdefault("RATE_LIMIT_STORAGE_URL", "memory://")
        self.spawn(
            "web",
            [sys.executable, "-m", "gunicorn", "api.app:create_app()", "-c", str(GUNICORN_CONF)],
            web_env,
        )
        self.spawn("worker", [sys.executable, "-m", "dramatiq", "actors", "--processes", "1", "--threads", "4"], env)
        self.spawn("clock", [str(bin_dir / "periodiq"), "actors"], env)
        self.wait_ready()
        # Started once the web answers, so that its start does not slow the web's boot down.
        self.spawn("esign", [sys.executable, "-m", "ops.simulators.esign", "--port", str(self.port + 1),
                             "--callback", f"http://127.0.0.1:{self.port}"], env)
        self.spawn("odp", [sys.executable, "-m", "ops.simulators.odp", "--port", str(self.port + 2)], env)
        print(
            f"\nVitrine is running at http://127.0.0.1:{self.port}\n"
            f"  API docs      http://127.0.0.1:{self.port}/api/docs\n"
            f"  health        http://127.0.0.1:{self.port}/api/health\n"
            f"  e-invoicing   operator simulator at http://127.0.0.1:{self.port + 2}\n"
            f"  data dir      {self.data_dir}\n"
            "Press Ctrl-C to stop.\n",
            flush=True,
        )

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        url = f"http://127.0.0.1:{self.port}/api/health"
        while time.monotonic() < deadline:
            self.check_children()
            try:
                if requests.get(url, timeout=1).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"the web process did not answer {url} within {timeout} s")

    def check_children(self) -> None:
        for name, child in self.children.items():
            code = child.poll()
            if code is not None and not self.stopping:
                raise RuntimeError(f"{name} exited with status {code}")

    def stop(self) -> None:
        self.stopping = True
        for child in self.children.values():
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 20
        for child in self.children.values():
            try:
                child.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        if self.started_redis:
            embedded.stop_redis(self.data_dir)
        if self.started_postgres:
            embedded.stop_postgres(self.data_dir)


def run_dev(port: int, data_dir: Path) -> int:
    supervisor = Supervisor(port=port, data_dir=data_dir.resolve())
    stop_requested = False

    def request_stop(signum, frame) -> None:
        nonlocal stop_requested
        stop_requested = True

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    status = 0
    try:
        supervisor.start()
        while not stop_requested:
            supervisor.check_children()
            time.sleep(0.2)
        print("Stopping Vitrine ...", flush=True)
    except (RuntimeError, subprocess.CalledProcessError) as exc:  # a child died, or migrate / seed-demo failed
        print(f"vitrine dev: {exc}", file=sys.stderr, flush=True)
        status = 1
    finally:
        supervisor.stop()
    return status
