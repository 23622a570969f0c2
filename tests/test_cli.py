"""The `vitrine` command line for a new user: `--data-dir` anywhere, help texts, no data directory
created behind their back, one clear line when something is missing."""

import fcntl
import json
import os
import shutil
import uuid

import pytest

from ops import cli
from ops.datadir import DataDirBusy, DataDirLock, owner
from tests.conftest import ROOT
from tests.test_dev import vitrine


@pytest.fixture
def data_dir():
    path = ROOT / "var" / "test" / f"cli-{uuid.uuid4().hex[:8]}"
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.parametrize("command", ["queues", "create-admin", "seed-demo"])
def test_a_command_needing_a_database_never_creates_one(command, data_dir):
    args = ["--email", "a@example.com", "--password", "long-enough-password"] if command == "create-admin" else []
    result = vitrine(command, *args, "--data-dir", str(data_dir))
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"vitrine: data directory {data_dir}",
        f"vitrine {command}: no database in data directory {data_dir}: run `vitrine migrate` first, "
        "or pass the --data-dir of your `vitrine dev`",
    ]
    assert not data_dir.exists()


def test_a_command_on_a_database_not_migrated_says_so():
    from urllib.parse import urlsplit, urlunsplit

    from backend import embedded

    name = f"vitrine_empty_{uuid.uuid4().hex[:8]}"
    test_url = urlsplit(os.environ["DATABASE_URL"])
    admin_url, url = (urlunsplit(test_url._replace(path=f"/{db}")) for db in ("postgres", name))
    embedded.ensure_database(admin_url, name)
    try:
        result = vitrine("queues", env=dict(os.environ, DATABASE_URL=url))
    finally:
        embedded.drop_database(admin_url, name)
    assert result.returncode == 1
    assert "vitrine queues: DATABASE_URL is not migrated (" in result.stderr
    assert "run `vitrine migrate` first" in result.stderr


def test_data_dir_is_accepted_before_and_after_the_command(data_dir):
    parser = cli.build_parser()
    assert parser.parse_args(["--data-dir", "a", "queues"]).data_dir == "a"
    assert parser.parse_args(["queues", "--data-dir", "b"]).data_dir == "b"
    assert parser.parse_args(["--data-dir", "a", "dev", "--data-dir", "b"]).data_dir == "b"


def test_every_option_has_a_help_text_and_bench_lists_its_scenarios():
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, command in sub.choices.items():
        for action in command._actions:
            assert action.help, f"vitrine {name} {action.dest} has no help text"
    bench_help = sub.choices["bench"].format_help()
    from ops.bench import scenario_names

    assert all(f"  {name} " in bench_help for name in scenario_names())
    assert "DATA_DIR_SUB" not in sub.choices["dev"].format_help()


def test_stop_embedded_says_when_nothing_runs(data_dir):
    result = vitrine("stop-embedded", "--data-dir", str(data_dir))
    assert (result.returncode, result.stdout.strip()) == (0, f"nothing running in {data_dir}")


def test_a_data_directory_has_one_owner(data_dir):
    first = DataDirLock(data_dir)
    first.acquire(8600)
    try:
        assert owner(data_dir).port == 8600
        assert owner(data_dir).pid == os.getpid()
        with pytest.raises(DataDirBusy, match=rf"pid {os.getpid()}, port 8600"):
            DataDirLock(data_dir).acquire(8700)
        # The file lock itself, as another process sees it.
        with (data_dir / "dev.lock").open() as handle, pytest.raises(BlockingIOError):
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert json.loads((data_dir / "dev.lock").read_text()) == {"pid": os.getpid(), "port": 8600}
    finally:
        first.release()
    assert owner(data_dir) is None
    second = DataDirLock(data_dir)
    second.acquire(8700)  # free again once released (or once its process died)
    second.release()


def test_progress_lines_only_on_a_terminal():
    import io

    from ops.progress import Progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal, pipe = Terminal(), io.StringIO()
    Progress("seed-demo", stream=terminal).step("identity", 1, 3)
    Progress("seed-demo", stream=pipe).step("identity", 1, 3)
    assert terminal.getvalue().startswith("[seed-demo 1/3 ") and terminal.getvalue().endswith("] identity\n")
    assert pipe.getvalue() == ""


@pytest.mark.parametrize("failure", ["EPIPE", "EIO", "closed"])
def test_a_progress_line_to_a_terminal_that_went_away_is_dropped_silently(failure):
    import errno
    import io

    from ops.progress import Progress

    class GoneTerminal(io.StringIO):
        writes = 0

        def isatty(self) -> bool:
            return True

        def write(self, text: str) -> int:
            GoneTerminal.writes += 1
            if failure == "closed":
                raise ValueError("I/O operation on closed file.")
            raise OSError(getattr(errno, failure), failure)

    progress = Progress("dev", stream=GoneTerminal())
    progress.step("migrations", 2, 4)  # raises nothing
    progress.step("demo data", 3, 4)
    assert GoneTerminal.writes == 1  # silent from the first failure on
    assert not progress.enabled


def test_a_command_whose_terminal_hangs_up_between_two_progress_lines_carries_on():
    """A real pseudo-terminal closed while the command runs (a closed terminal window): the next
    progress lines fail with EIO inside `Progress`, and the command finishes with status 0."""
    import os
    import pty
    import subprocess
    import sys

    primary, secondary = pty.openpty()
    script = ("import sys\n"
              "from ops.progress import Progress\n"
              "progress = Progress('seed-demo')\n"
              "progress.step('identity', 1, 3)\n"
              "sys.stdin.readline()\n"  # the test closes the terminal meanwhile
              "progress.step('marketplace', 2, 3)\n"
              "progress.step('printing', 3, 3)\n"
              "print('seeded', progress.enabled)\n")
    process = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=secondary, text=True)
    os.close(secondary)
    first = b""
    while b"identity" not in first:
        first += os.read(primary, 4096)
    assert first.startswith(b"[seed-demo 1/3 ")
    os.close(primary)  # the terminal goes away
    out, _ = process.communicate("go\n", timeout=60)
    assert (process.returncode, out) == (0, "seeded False\n")


def _stderr_on_a_terminal(*args: str) -> tuple[int, str]:
    """`vitrine ARGS` with its stderr on a pseudo-terminal (as in an interactive shell)."""
    import os
    import pty
    import subprocess
    import sys

    from tests.test_dev import dev_env

    primary, secondary = pty.openpty()
    env = dict(dev_env(), DATABASE_URL=os.environ["DATABASE_URL"], REDIS_URL=os.environ["REDIS_URL"])
    process = subprocess.Popen([sys.executable, "-m", "ops.cli", *args], env=env, stdout=subprocess.DEVNULL,
                               stderr=secondary)
    os.close(secondary)
    chunks = []
    while True:
        try:
            chunk = os.read(primary, 4096)
        except OSError:  # the terminal's other side closed: the process ended
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(primary)
    return process.wait(timeout=60), b"".join(chunks).decode().replace("\r\n", "\n")


def test_billing_commands_show_a_progress_line_per_step_on_a_terminal_only():
    status, terminal = _stderr_on_a_terminal("billing", "invoice-pdf", "FAC-NONE-2026-000001")
    assert status == 1
    steps = [line for line in terminal.splitlines() if line.startswith("[billing invoice-pdf")]
    assert len(steps) == 2, terminal
    assert steps[0].endswith("] checking the database")
    assert steps[1].startswith("[billing invoice-pdf 1/2 ")
    assert steps[1].endswith("] FAC-NONE-2026-000001: reading (rendered when missing) the Factur-X PDF")
    assert "vitrine billing invoice-pdf: invoice FAC-NONE-2026-000001 not found" in terminal

    piped = vitrine("billing", "invoice-pdf", "FAC-NONE-2026-000001",
                    env=dict(os.environ))
    assert piped.returncode == 1 and "[billing" not in piped.stderr


def test_seed_demo_if_empty_seeds_only_what_is_missing():
    from backend.billing.models import Invoice
    from backend.identity.demo import seed_demo_identity
    from backend.marketplace.models import Reservation
    from backend.runtime import current_runtime
    from ops.seed import ALREADY_SEEDED, SEEDERS, seed_demo

    runtime = current_runtime()
    assert not any(seeder.present() for seeder in SEEDERS)  # an empty database
    seed_demo_identity()  # a seed interrupted after its first step (Ctrl-C during `vitrine dev`)
    report = seed_demo(runtime, only_if_empty=True)
    assert [line.split(":")[0] for line in report.splitlines()] == [s.name for s in SEEDERS[1:]]
    assert all(seeder.present() for seeder in SEEDERS)
    counts = (Reservation.select().count(), Invoice.select().count())
    assert seed_demo(runtime, only_if_empty=True) == ALREADY_SEEDED
    assert (Reservation.select().count(), Invoice.select().count()) == counts


@pytest.mark.committed
def test_the_seed_demo_if_empty_command_says_already_seeded_the_second_time(broker):
    from backend.db import database
    from backend.identity.models import User

    first = vitrine("seed-demo", "--if-empty", env=dict(os.environ), timeout=240)
    assert first.returncode == 0, first.stderr
    assert [line.split(":")[0] for line in first.stdout.splitlines()] == [
        "identity", "marketplace", "printing", "billing", "self-billing mandate"]
    second = vitrine("seed-demo", "--if-empty", env=dict(os.environ), timeout=240)
    assert (second.returncode, second.stdout) == (
        0, "demo data: already seeded, nothing done (`vitrine seed-demo` without --if-empty tops it up)\n")
    with database.connection_context():
        assert User.select().where(User.email == "admin@vitrine.example").count() == 1
