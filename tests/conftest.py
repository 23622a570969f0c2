"""Test harness: real PostgreSQL and Redis (embedded unless TEST_DATABASE_URL / TEST_REDIS_URL).

Each xdist worker gets its own database (recreated and migrated once per session) and its own
Redis. A test runs inside a transaction rolled back at its end, unless it is marked
`committed` (a real worker must see its rows): then its tables are truncated afterwards.
"""

from __future__ import annotations

import fcntl
import io
import json
import logging
import os
import random
import shutil
import socket
import uuid
from pathlib import Path

import pytest
from hypothesis import settings

# No test asserts a duration: hypothesis' per-example deadline would, and fails on a busy machine.
settings.register_profile("vitrine", deadline=None)
settings.load_profile("vitrine")

ROOT = Path(__file__).resolve().parent.parent
pytest_plugins = ["tests.identity_fixtures"]
TEST_WEBHOOK_SECRET = "whsec_test_0123456789abcdef"


def _worker() -> str:
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


def _is_xdist_controller(config) -> bool:
    return not os.environ.get("PYTEST_XDIST_WORKER") and bool(getattr(config.option, "numprocesses", None))


def pytest_collection_modifyitems(items) -> None:
    """The `long` tests first: `--dist worksteal` (setup.cfg) gives each worker half of the list
    and lets an idle one take from the other, so a long test started at once ends with the rest
    instead of after it."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "committed: the test commits; tables are truncated afterwards")
    config.addinivalue_line("markers", "owner: the test runs as the role owning the tables (it injects faults "
                                       "with triggers, which the runtime role may not create)")
    config.addinivalue_line("markers", "drills: fault drills with real processes (tests/reliability/test_drills.py)")
    config.addinivalue_line("markers", "long: runs for minutes; collected first, so that under `-n 2` one worker "
                                       "starts it while the other takes the rest")
    if not os.environ.get("PYTEST_XDIST_WORKER"):  # the run's process: its xdist workers inherit the path
        os.environ[DEV_TEMPLATE] = str(ROOT / "var" / "test" / f"dev-template-{uuid.uuid4().hex[:8]}")
        _run["dev_template"] = Path(os.environ[DEV_TEMPLATE])
    if _is_xdist_controller(config):
        return  # the controller runs no test
    from backend import embedded

    # A database and a Redis of this session's own: concurrent runs never share state.
    token = f"{_worker()}_{uuid.uuid4().hex[:8]}"
    base = ROOT / "var" / "test"
    data_dir = base / f"data-{token}"
    database_name = f"vitrine_test_{token}"
    admin_url = os.environ.get("TEST_DATABASE_URL")
    if admin_url:
        database_url = _with_database(admin_url, database_name)
    else:
        admin_url = embedded.postgres_server(base).get_uri()
        database_url = embedded.postgres_server(base).get_uri(database_name)
    embedded.ensure_database(admin_url, database_name, recreate=True)
    redis_dir = base / f"redis-{token}"
    redis_url = os.environ.get("TEST_REDIS_URL") or embedded.ensure_redis(redis_dir)
    import redis

    redis.Redis.from_url(redis_url).flushdb()
    _session.update(admin_url=admin_url, database=database_name, redis_dir=redis_dir, data_dir=data_dir,
                    own_redis=not os.environ.get("TEST_REDIS_URL"))

    # Tests run as the runtime role (a missing grant fails a test); the server's superuser owns and migrates.
    owner_url = database_url
    password = "vitrine_app" if os.environ.get("TEST_DATABASE_URL") else None  # the embedded server trusts its socket
    database_url = embedded.runtime_url(owner_url, password=password)

    # The company registry of every test: the simulator over real HTTP (tests/onboarding registers
    # the companies they need; `registry_sim` hands it to a test).
    from ops.simulators.registry import RegistrySimulator

    _session["registry"] = registry = RegistrySimulator().start()
    os.environ.update(
        {
            "REGISTRY_BASE_URL": registry.url,
            "DATABASE_URL": database_url,
            "DATABASE_OWNER_URL": owner_url,
            "REDIS_URL": redis_url,
            "VITRINE_DATA_DIR": str(data_dir),
            "ENVIRONMENT": "test",
            "LOG_LEVEL": "info",
            "COOKIE_SECURE": "false",
            "PUBLIC_BASE_URL": "http://testserver",
            "ESIGN_WEBHOOK_SECRET": TEST_WEBHOOK_SECRET,
            "PLATFORM_COMMISSION_RATE_BPS": "2000",
            # Every test client calls from 127.0.0.1: per-app counters keep tests independent
            # (production's default, Redis, is tested in tests/test_rate_limits.py).
            "RATE_LIMIT_STORAGE_URL": "memory://",
        }
    )
    from backend.database_roles import current_role
    from backend.migrate import apply_migrations
    from backend.runtime import boot

    _session["config"] = boot(role="test").config
    import actors  # noqa: F401  (broker on the test Redis, actors declared)

    apply_migrations(owner_url, runtime_role=current_role(database_url))


_session: dict = {}
# The run's own (the controller's under xdist, which ends after its workers).
_run: dict = {}
# Where the run's `dev_template` is built; every process of the run reads it from the environment.
DEV_TEMPLATE = "VITRINE_TEST_DEV_TEMPLATE"


def pytest_unconfigure(config) -> None:
    if "dev_template" in _run:
        template = _run["dev_template"]
        for path in (template, _building(template)):
            shutil.rmtree(path, ignore_errors=True)
        _lock_file(template).unlink(missing_ok=True)
    if not _session:
        return
    from backend import embedded
    from backend.db import database

    database.close_all()
    _session["registry"].stop()
    if _session["own_redis"]:
        embedded.stop_redis(_session["redis_dir"])
        shutil.rmtree(_session["redis_dir"], ignore_errors=True)
    shutil.rmtree(_session["data_dir"], ignore_errors=True)
    try:
        embedded.drop_database(_session["admin_url"], _session["database"])
    except Exception as exc:  # a leftover test database is harmless; say so and go on
        print(f"could not drop {_session['database']}: {exc}")


def _with_database(url: str, name: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + name))


class _Rollback(Exception):
    pass


@pytest.fixture(autouse=True)
def _database(request):
    """Every test in a rolled-back transaction; `committed` tests truncate instead."""
    from backend.db import database, transaction

    if request.node.get_closest_marker("owner"):
        from backend.db import init_database

        runtime = database.obj
        # Its idle connections closed: a test copying its database as a template (the growth bench's
        # builder) needs no other session on it.
        runtime.close_all()
        if "owner_pool" in _session:
            database.initialize(_session["owner_pool"])
        else:
            _session["owner_pool"] = init_database(os.environ["DATABASE_OWNER_URL"])
        request.addfinalizer(lambda: database.initialize(runtime))  # after the rollback below
    if request.node.get_closest_marker("committed"):
        try:
            yield
        finally:
            _truncate_all()
        return
    with database.connection_context():
        try:
            with transaction():
                yield
                raise _Rollback
        except _Rollback:
            pass


def _truncate_all() -> None:
    """As the owner, past the triggers that refuse to truncate the books (the runtime role cannot)."""
    from ops.seed import erase_data

    erase_data(os.environ["DATABASE_OWNER_URL"])


@pytest.fixture
def config():
    """The session's configuration (apps built with overrides never change it)."""
    return _session["config"]


@pytest.fixture
def make_app(config):
    """Build an app, optionally with settings changed (`make_app(trusted_proxy_count=1)`) or an
    external client handed in (`make_app(esign=client)`), as boot would build it."""
    from dataclasses import replace

    from api.app import create_app
    from backend.runtime import boot, client_names

    handed_in = []

    def build(**overrides):
        """Settings by field name; external clients (`esign=...`) by their `Runtime` name."""
        clients = {name: overrides.pop(name) for name in client_names() if name in overrides}
        handed_in.extend(clients)
        return create_app(replace(config, **overrides) if overrides else config, **clients)

    yield build
    if handed_in:  # the process's own clients again, for the tests that follow
        boot(config, role="test")


@pytest.fixture
def app(make_app):
    return make_app()


@pytest.fixture
def client(app):
    import falcon.testing

    return falcon.testing.TestClient(app)


@pytest.fixture
def broker():
    import dramatiq

    from backend import outbox

    broker = dramatiq.get_broker()
    broker.flush_all()
    join = broker.join

    def join_after_handoff(queue_name, *args, **kwargs):
        # Committed outbox rows reach Redis from a background thread: let it finish first, so
        # "wait for the queue to drain" also covers work committed just before.
        assert outbox.flush(timeout=10), "the outbox hand-over did not finish"
        return join(queue_name, *args, **kwargs)

    broker.join = join_after_handoff
    yield broker
    del broker.join
    broker.flush_all()


@pytest.fixture
def worker(broker):
    """A real Dramatiq worker on the test Redis, in this process."""
    from dramatiq import Worker

    worker = Worker(broker, worker_timeout=100, worker_threads=2)
    worker.start()
    yield worker
    worker.stop()


@pytest.fixture
def log_lines():
    """Capture JSON log lines; call the fixture to get them parsed."""
    from backend.logs import JsonFormatter

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.addHandler(handler)

    def lines() -> list[dict]:
        return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]

    lines.raw = stream.getvalue  # type: ignore[attr-defined]
    yield lines
    root.removeHandler(handler)


@pytest.fixture
def own_redis():
    """The data directory of this session's embedded Redis, for the drills that restart it."""
    if not _session.get("own_redis"):
        pytest.skip("TEST_REDIS_URL is set: a drill restarts only a Redis of the session's own")
    return _session["redis_dir"]


@pytest.fixture
def registry_sim():
    """The session's company registry simulator; its fault switches are cleared after the test."""
    simulator = _session["registry"]
    yield simulator
    simulator.clear_faults()


# vitrine dev listens on P and P+1..P+4 (its simulators). Ports the kernel hands out for outgoing
# connections (32768-60999 on Linux) can take any of P+1..P+4 between the pick and the bind, so a
# pick comes from below that range, from a slice of its own per xdist worker, with the whole span
# free when it is picked.
_PORT_SPAN = 5
_PORT_SLICE = 1500


@pytest.fixture
def free_port(worker_id):
    worker = int(worker_id[2:]) if worker_id.startswith("gw") else 0
    low = 20000 + worker * _PORT_SLICE
    candidates = iter(random.Random().sample(range(low, low + _PORT_SLICE - _PORT_SPAN, _PORT_SPAN), 100))

    def span_free(port: int) -> bool:
        for each in range(port, port + _PORT_SPAN):
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", each))
                except OSError:
                    return False
        return True

    def pick() -> int:
        for port in candidates:
            if span_free(port):
                return port
        raise RuntimeError("no free span of ports left in this worker's slice")

    return pick


def _building(template: Path) -> Path:
    return template.with_name(template.name + ".building")


def _lock_file(template: Path) -> Path:
    return template.with_name(template.name + ".lock")


@pytest.fixture(scope="session")
def dev_template() -> Path:
    """A data directory as a first `vitrine dev` leaves it once stopped: its embedded PostgreSQL
    initialised, migrated and seeded with the demo, its Redis holding what the seed queued, both
    servers stopped. Built once per run, by `vitrine dev`'s own steps (`ops.dev.Supervisor`), by
    whichever xdist worker asks first while the other waits on the lock; removed when the run ends,
    so it always has the run's migrations and seeders. Nothing in it names its path (the servers'
    sockets and pid files are given on their command lines at start), so a copy starts at its new path."""
    template = Path(os.environ[DEV_TEMPLATE])
    template.parent.mkdir(parents=True, exist_ok=True)
    with _lock_file(template).open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not template.exists():
            _build_dev_template(template)
    return template


def _build_dev_template(template: Path) -> None:
    from unittest import mock

    from backend import embedded
    from ops.dev import BOOT_LOG, Output, Supervisor

    building = _building(template)
    shutil.rmtree(building, ignore_errors=True)
    supervisor = Supervisor(port=8000, data_dir=building)  # the port only names URLs no seeded row keeps
    supervisor.output = Output(building / BOOT_LOG)
    # The environment `vitrine dev` has, not this test process's own database and Redis.
    outside = ("DATABASE_URL", "DATABASE_OWNER_URL", "REDIS_URL", "VITRINE_DATA_DIR", "REGISTRY_BASE_URL")
    try:
        with mock.patch.dict(os.environ, {k: v for k, v in os.environ.items() if k not in outside}, clear=True):
            supervisor.env = supervisor.environment()
            supervisor.run_command("migrate")
            supervisor.run_command("seed-demo", "--if-empty")
    finally:
        try:
            embedded.stop_redis(building)
        finally:
            embedded.stop_postgres(building)
            supervisor.output.close()
    # pgserver's list of the processes holding a handle: this one's, meaningless in a copy.
    (building / "postgres" / ".handle_pids.json").unlink(missing_ok=True)
    building.rename(template)
