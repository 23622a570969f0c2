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
from tests.production_settings import production_over
from tests.test_dev import dev_env, vitrine


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
    test_url = urlsplit(os.environ["DATABASE_OWNER_URL"])
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


def _stderr_on_a_terminal(*args: str, **settings: str | None) -> tuple[int, str]:
    """`vitrine ARGS` with its stderr on a pseudo-terminal (as in an interactive shell); `settings`
    change the environment (None removes a variable)."""
    import os
    import pty
    import subprocess
    import sys

    from tests.test_dev import dev_env

    primary, secondary = pty.openpty()
    env = dict(dev_env(), DATABASE_URL=os.environ["DATABASE_URL"], REDIS_URL=os.environ["REDIS_URL"])
    env.update(settings)
    env = {k: v for k, v in env.items() if v is not None}
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
        "identity", "onboarding", "marketplace", "printing", "SEPA mandate", "billing", "self-billing mandate"]
    second = vitrine("seed-demo", "--if-empty", env=dict(os.environ), timeout=240)
    assert (second.returncode, second.stdout) == (
        0, "demo data: already seeded, nothing done (`vitrine seed-demo` without --if-empty tops it up)\n")
    with database.connection_context():
        assert User.select().where(User.email == "admin@vitrine.example").count() == 1


def test_config_check_validates_as_every_process_does_and_starts_nothing(data_dir):
    env = dict(dev_env(), DATABASE_URL="postgresql://vitrine:s3cret-pw@db.example:5432/vitrine")
    result = vitrine("config", "check", "--data-dir", str(data_dir), env=env)
    assert (result.returncode, result.stderr) == (0, "")
    summary, *warnings = result.stdout.splitlines()
    assert summary.startswith("configuration valid (")
    assert "database postgresql://vitrine:***@db.example:5432/vitrine, " in summary
    assert f"Redis embedded in {data_dir}, " in summary and "s3cret-pw" not in result.stdout
    assert summary.endswith(f"; {len(warnings)} warning{'' if len(warnings) == 1 else 's'}") and warnings
    assert any(w.startswith("warning: e-invoicing operator identity incomplete") for w in warnings)
    assert not data_dir.exists()  # nothing created, nothing started


def test_config_check_names_every_problem_on_its_own_line_with_status_2(data_dir):
    env = dict(dev_env(), PLATFORM_COMMISSION_RATE_BPS="twenty", LOG_LEVEL="loud", COOKIE_SECURE="maybe")
    result = vitrine("config", "check", "--data-dir", str(data_dir), env=env)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.splitlines() == [
        "vitrine: configuration error: LOG_LEVEL must be one of debug, info, warn, error, got 'loud'",
        "vitrine: configuration error: COOKIE_SECURE must be true or false, got 'maybe'",
        "vitrine: configuration error: PLATFORM_COMMISSION_RATE_BPS must be an integer number of basis points, "
        "got 'twenty'",
    ]
    assert not data_dir.exists()
    # The very lines any process prints at start (the same check, in `main`, before any command).
    assert vitrine("queues", "--data-dir", str(data_dir), env=env).stderr == result.stderr


@pytest.mark.parametrize("command", ["web", "worker", "clock", "migrate"])
def test_the_procfile_processes_in_production_refuse_to_start_the_embedded_servers(command, data_dir):
    """`ENVIRONMENT=production` without DATABASE_URL and REDIS_URL: one line, status 2, nothing
    started (no data directory, no server), for each process of the Procfile (release included)."""
    production = dict(production_over(dev_env()), REDIS_URL="redis://cache.invalid:6379/0")
    result = vitrine(command, "--data-dir", str(data_dir), env=production)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.splitlines() == [
        "vitrine: configuration error: ENVIRONMENT=production needs its own servers, not the embedded ones of "
        "development: set DATABASE_URL"]
    assert not data_dir.exists()


def test_load_config_reports_every_blocking_problem_not_only_the_first():
    from backend.config import ConfigError, load_config

    with pytest.raises(ConfigError) as refused:
        load_config({"SESSION_TTL_DAYS": "0", "STORAGE_BACKEND": "gcs", "PLATFORM_LEGAL_SIRET": "123",
                     "LEGACY_DEPOSIT_RATE_BPS": "20000"})
    assert refused.value.problems == (
        "STORAGE_BACKEND=gcs needs GCS_BUCKET",
        "PLATFORM_LEGAL_SIRET must be 14 digits, got '123'",
        "SESSION_TTL_DAYS must be at least 1, got 0",
        "LEGACY_DEPOSIT_RATE_BPS must be within [0, 10000] basis points, got 20000",
    )


def test_a_command_on_a_terminal_shows_each_boot_warning_once_as_a_short_line_and_no_json():
    from backend.config import load_config

    env = dict(dev_env(), ESIGN_WEBHOOK_SECRET="")
    env.pop("LOG_LEVEL", None)
    warnings = load_config(env).warnings
    assert warnings
    # It boots twice (the database check, then the command) and writes nothing.
    status, terminal = _stderr_on_a_terminal("billing", "invoice-pdf", "FAC-NONE-2026-000001", LOG_LEVEL=None,
                                             ESIGN_WEBHOOK_SECRET="")
    assert status == 1, terminal
    lines = terminal.splitlines()
    assert not [line for line in lines if line.startswith("{")], terminal  # no JSON line, no boot line
    assert "pikepdf" not in terminal and "settings" not in terminal
    shown = [line for line in lines if line.startswith("vitrine: warning: ")]
    assert shown == [f"vitrine: warning: {warning}" for warning in warnings]  # each once
    assert all(line.startswith(("[billing invoice-pdf", "vitrine: warning: ", "vitrine billing invoice-pdf: "))
               for line in lines), terminal


def test_a_command_keeps_its_json_log_lines_in_a_pipe_or_when_asked():
    piped = vitrine("queues", "--json", env=dict(dev_env(), DATABASE_URL=os.environ["DATABASE_URL"],
                                                 REDIS_URL=os.environ["REDIS_URL"], ESIGN_WEBHOOK_SECRET=""))
    assert piped.returncode == 0 and json.loads(piped.stdout)["queues"]
    lines = [json.loads(line) for line in piped.stderr.splitlines()]
    assert [line["message"] for line in lines if line["scope"] == "boot"][-1] == "boot"
    assert any(line["level"] == "warn" and "ESIGN_WEBHOOK_SECRET" in line["message"] for line in lines)
    status, terminal = _stderr_on_a_terminal("queues", LOG_FORMAT="json", LOG_LEVEL=None)
    assert status == 0
    assert {json.loads(line)["message"] for line in terminal.splitlines() if line.startswith("{")} >= {"boot"}
    status, terminal = _stderr_on_a_terminal("queues", LOG_FORMAT="loud")
    assert (status, terminal.strip()) == (
        2, "vitrine: configuration error: LOG_FORMAT must be one of auto, json, text, got 'loud'")


@pytest.fixture
def stopped_data_dir(data_dir):
    """A migrated data directory whose embedded servers are stopped (as after a `vitrine dev`)."""
    from backend import embedded

    migrated = vitrine("migrate", "--data-dir", str(data_dir), timeout=240)
    assert migrated.returncode == 0, migrated.stderr
    assert f"vitrine: data directory {data_dir}: started its embedded PostgreSQL and Redis, " in migrated.stderr
    yield data_dir
    embedded.stop_redis(data_dir)
    embedded.stop_postgres(data_dir)


def test_a_command_that_starts_the_embedded_servers_says_so_once_and_how_to_stop_them(stopped_data_dir):
    from backend import embedded

    data_dir = stopped_data_dir
    assert vitrine("stop-embedded", "--data-dir", str(data_dir)).stdout.strip() == (
        f"stopped in {data_dir}: PostgreSQL, Redis")
    first = vitrine("queues", "--data-dir", str(data_dir))
    assert first.returncode == 0, first.stderr
    notices = [line for line in first.stderr.splitlines() if line.startswith("vitrine: data directory")]
    assert notices == [
        f"vitrine: data directory {data_dir}: started its embedded PostgreSQL and Redis, which keep running after "
        f"this command (`vitrine stop-embedded --data-dir {data_dir}` stops them)"]
    assert embedded.postgres_running(data_dir) and embedded.redis_running(data_dir)  # they outlast it
    again = vitrine("queues", "--data-dir", str(data_dir))  # running already: only where it works
    assert [line for line in again.stderr.splitlines() if line.startswith("vitrine: data directory")] == [
        f"vitrine: data directory {data_dir}"]
    embedded.stop_redis(data_dir)  # one of the two stopped: the line names that one
    third = vitrine("create-admin", "--email", "cli-notice@example.com", "--password", "long-enough-password",
                    "--data-dir", str(data_dir))
    assert third.returncode == 0, third.stderr
    assert (f"vitrine: data directory {data_dir}: started its embedded Redis, which keeps running after this "
            f"command (`vitrine stop-embedded --data-dir {data_dir}` stops it)") in third.stderr.splitlines()


def test_config_check_reads_a_env_file_in_the_format_of_env_example(data_dir, tmp_path):
    example = vitrine("config", "check", "--env-file", str(ROOT / ".env.example"), "--data-dir", str(data_dir),
                      env=dev_env())
    assert example.returncode == 0, example.stderr
    assert example.stdout.startswith(f"configuration valid (development): database embedded in {data_dir} ")
    broken = tmp_path / "broken.env"
    broken.write_text("# a comment\nLOG_LEVEL=loud   # an inline comment\nnot a setting\nSMTP_URL='ftp://x'\n")
    result = vitrine("config", "check", "--env-file", str(broken), env=dev_env())
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.splitlines() == [f"vitrine: configuration error: {broken} line 3: not NAME=value: "
                                          "'not a setting'"]
    broken.write_text("LOG_LEVEL=loud   # an inline comment\nSMTP_URL='ftp://secret@x'\n")
    result = vitrine("config", "check", "--env-file", str(broken), env=dev_env())
    assert result.stderr.splitlines() == [
        "vitrine: configuration error: LOG_LEVEL must be one of debug, info, warn, error, got 'loud'",
        "vitrine: configuration error: SMTP_URL must start with smtp:// (STARTTLS) or smtps:// (implicit TLS)"]
    assert not data_dir.exists()


def test_a_command_whose_reader_has_gone_ends_quietly():
    """`vitrine config check | head -1`: writing to a pipe nobody reads ends the command with the
    status of a SIGPIPE, without a BrokenPipeError traceback."""
    import subprocess
    import sys

    read, write = os.pipe()
    os.close(read)  # the reader has gone already
    try:
        done = subprocess.run([sys.executable, "-m", "ops.cli", "config", "check"], env=dev_env(), cwd=ROOT,
                              stdout=write, stderr=subprocess.PIPE, text=True, timeout=60)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (141, "")


def test_a_command_beside_a_live_dev_takes_the_settings_dev_gives_its_processes(data_dir):
    """New-user run N3: `billing invoice-pdf --regenerate` beside a dev rendered a footer without the
    demo legal identity, and every command warned about settings dev fills in."""
    lock = DataDirLock(data_dir)
    env = {"PLATFORM_LEGAL_COMPANY_NAME": "Mine SAS", "ODP_BASE_URL": ""}
    assert cli.take_dev_settings(data_dir, env) is None  # no dev: nothing taken
    assert env == {"PLATFORM_LEGAL_COMPANY_NAME": "Mine SAS", "ODP_BASE_URL": ""}
    lock.acquire(8765)
    try:
        holder = cli.take_dev_settings(data_dir, env)
    finally:
        lock.release()
    assert (holder.pid, holder.port) == (os.getpid(), 8765)
    assert env["PUBLIC_BASE_URL"] == "http://127.0.0.1:8765"
    assert env["ESIGN_BASE_URL"] == "http://127.0.0.1:8766/v3"
    assert env["ODP_BASE_URL"] == "http://127.0.0.1:8767"  # empty counts as unset, as for dev's processes
    assert env["PLATFORM_LEGAL_SIRET"] == "90123456700013"
    assert env["PLATFORM_LEGAL_COMPANY_NAME"] == "Mine SAS"  # a setting of the user's own is kept


@pytest.mark.committed
@pytest.mark.parametrize("how", ["stdin", "env"])
def test_create_admin_takes_the_password_from_standard_input_or_the_environment(how):
    import subprocess
    import sys

    from backend.db import database
    from backend.identity.models import User
    from backend.identity.secrets import verify_password

    email = f"stdin-{how}-{uuid.uuid4().hex[:6]}@example.com"
    command = [sys.executable, "-m", "ops.cli", "create-admin", "--email", email]
    env = dict(os.environ)
    if how == "stdin":
        command.append("--password-stdin")
    else:
        env["VITRINE_ADMIN_PASSWORD"] = "from-the-environment"
    run = subprocess.run(command, cwd=ROOT, env=env, input="from-standard-input\n" if how == "stdin" else "",
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert f"admin created: {email}" in run.stdout
    with database.connection_context():
        user = User.get(User.email == email)
    assert verify_password(user.password_hash, "from-standard-input" if how == "stdin" else "from-the-environment")


def test_create_admin_without_any_password_says_how_to_give_one(capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert cli.main(["create-admin", "--email", "nopassword@example.com", "--password-stdin"]) == 1
    assert "no password: pipe it to --password-stdin or set VITRINE_ADMIN_PASSWORD" in capsys.readouterr().err


def test_an_unreachable_database_is_one_line_with_its_cause_and_a_traceback_only_with_debug():
    env = dict(os.environ, DATABASE_URL="postgresql://nobody:secret-pw@127.0.0.1:9/none")
    run = vitrine("queues", env=env)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    lines = [line for line in run.stderr.splitlines() if not line.startswith("{")]  # the boot's JSON log lines
    assert len(lines) == 1 and lines[0].startswith("vitrine queues: cannot reach PostgreSQL: ") and \
        "refused" in lines[0] and "secret-pw" not in lines[0], run.stderr
    assert "Traceback" in vitrine("queues", "--debug", env=env).stderr


def test_config_check_names_each_production_problem_on_its_own_line(data_dir):
    from tests.production_settings import PRODUCTION

    env = {**dev_env(), **PRODUCTION, "SMTP_URL": "", "PUBLIC_BASE_URL": "http://localhost:8000",
           "ENVIRONMENT": "production"}
    result = vitrine("config", "check", "--data-dir", str(data_dir), env=env)
    assert (result.returncode, result.stdout) == (2, "")
    lines = result.stderr.splitlines()
    assert [line.split(": ")[2].split(" ")[0] for line in lines] == ["SMTP_URL", "PUBLIC_BASE_URL"], lines
    assert not data_dir.exists()


@pytest.mark.committed
def test_seed_demo_reset_erases_what_a_trial_changed_and_seeds_the_demo_again(capsys):
    from backend.db import database
    from backend.identity.demo import DEMO_USERS
    from backend.identity.models import User

    assert cli.main(["seed-demo"]) == 0
    with database.connection_context():
        admin = User.get(User.email == DEMO_USERS[0][0])
        User.update(name="changed by a walk").where(User.id == admin.id).execute()
        User.create(email="stray@example.com", name="stray")
    assert cli.main(["seed-demo", "--reset"]) == 0
    with database.connection_context():
        assert not User.select().where(User.email == "stray@example.com").exists()
        assert User.get(User.email == DEMO_USERS[0][0]).name != "changed by a walk"
        assert User.select().where(User.email.in_([user[0] for user in DEMO_USERS])).count() == len(DEMO_USERS)
    capsys.readouterr()


def test_the_boot_warnings_are_said_once_per_process_group_and_each_process_names_its_role():
    """`vitrine web` and `vitrine worker` say the warnings before their gunicorn or Dramatiq
    processes boot, which then leave them out; the clock's boot line says `clock`."""
    import subprocess
    import sys

    boot = "from backend.runtime import boot; boot(role='web')"
    alone = subprocess.run([sys.executable, "-c", boot], cwd=ROOT, env=os.environ, capture_output=True, text=True,
                           timeout=120)
    below = subprocess.run([sys.executable, "-c", boot], cwd=ROOT, env={**os.environ, "VITRINE_SUPERVISOR": "web"},
                           capture_output=True, text=True, timeout=120)
    levels = [[json.loads(line)["level"] for line in run.stdout.splitlines() if line.startswith("{")]
              for run in (alone, below)]
    assert "warn" in levels[0] and "warn" not in levels[1], (alone.stdout, below.stdout)
    clock = subprocess.run([sys.executable, "-c", "import ops.clock, backend.runtime as r; ops.clock.boot_clock(); "
                            "print(r.current_runtime() is not None)"], cwd=ROOT, env=os.environ,
                           capture_output=True, text=True, timeout=120)
    roles = [json.loads(line).get("role") for line in clock.stdout.splitlines() if '"message": "boot"' in line]
    assert roles == ["clock"], clock.stdout + clock.stderr


def test_a_redis_that_may_evict_queued_messages_is_named_by_config_check(tmp_path):
    import redis

    from backend import embedded
    from ops.config_check import redis_warnings

    url = embedded.ensure_redis(tmp_path)
    try:
        client = redis.Redis.from_url(url)
        client.config_set("maxmemory-policy", "allkeys-lru")
        assert redis_warnings(url) == ["REDIS_URL: the Redis eviction policy allkeys-lru may drop queued messages "
                                       "once memory is full (set maxmemory-policy noeviction)"]
        client.config_set("maxmemory-policy", "noeviction")
        assert redis_warnings(url) == []
    finally:
        embedded.stop_redis(tmp_path)
    assert redis_warnings(url) == []  # unreachable: the process needing it says so
