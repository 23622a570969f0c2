"""The `vitrine` command line.

Every command uses `DATABASE_URL` / `REDIS_URL` when set, else the embedded servers under the data
directory (`--data-dir`, before or after the command; env `VITRINE_DATA_DIR`; default `./var`). Only
`migrate` and `dev` create a data directory: the others need an existing, migrated database and
say so. The configuration is checked before anything starts: a blocking problem is one line on
stderr and exit status 2, in every process (`web`, `worker`, `clock` included).

Adding a command group (another area's commands): write `add_commands(sub, common, needs)` that
adds its parsers with `parents=[common]` and `set_defaults(func=..., needs=needs)` (the group's
module never imports this one: `needs` is handed in), and append a caller to `COMMAND_GROUPS`.
A long command reports its steps with `args.progress.step(message, done, total)` (`ops.progress`:
a line on a terminal, nothing in a pipe or a log); the database check of a `NEEDS_DATABASE`
command is its first line.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

from backend.config import ConfigError, load_config
from backend.embedded import EmbeddedError

# What a command needs before it runs: nothing; the servers (embedded ones started, or created, when
# DATABASE_URL / REDIS_URL are unset: `migrate`); or an existing migrated database.
NEEDS_NOTHING, NEEDS_SERVERS, NEEDS_DATABASE = "nothing", "servers", "database"


class CommandError(Exception):
    """A command that cannot run: one line for the user, exit status 1."""


def _boot(role: str):
    from backend.runtime import boot

    return boot(role=role)


def data_dir() -> Path:
    return Path(os.environ["VITRINE_DATA_DIR"])


def cmd_dev(args) -> int:
    from ops.dev import run_dev

    return run_dev(args.port, data_dir())


def cmd_migrate(args) -> int:
    from backend.database_roles import runtime_role
    from backend.db import database
    from backend.migrate import apply_migrations

    runtime = _boot("release")
    config = runtime.config
    with database.connection_context():
        done = apply_migrations(config.database_owner_url, runtime_role=runtime_role(
            owner_url=config.database_owner_url, runtime_url=config.database_url))
        from backend.documents.seeding import seed_default_versions  # first published versions

        seeded = seed_default_versions(runtime.storage)
    print(f"migrations applied: {len(done)}" + (f" ({', '.join(done)})" if done else ""))
    if seeded:
        print(f"document templates seeded: {', '.join(seeded)}")
    return 0


def cmd_seed_demo(args) -> int:
    import actors  # noqa: F401  (the broker: the rows the seeders write are sent at once)
    from backend import outbox
    from backend.db import database
    from ops.seed import ALREADY_SEEDED, seed_demo

    if load_config().environment.lower() == "production":  # before anything starts
        raise CommandError("seed-demo refuses to run with ENVIRONMENT=production: it creates demo logins "
                           "whose passwords are published")
    runtime = _boot("seed")
    if args.reset:
        from backend.documents.seeding import seed_default_versions
        from ops.seed import erase_data

        args.progress.step("erasing every row (--reset)")
        erase_data(runtime.config.database_owner_url or runtime.config.database_url)
        with database.connection_context():
            seed_default_versions(runtime.storage)  # what `vitrine migrate` published
    with database.connection_context():
        report = seed_demo(runtime, only_if_empty=args.if_empty, progress=args.progress)
        if report != ALREADY_SEEDED:
            # The rows the seeders wrote go to the broker now (the hand-over thread flushed, then any
            # row it could not hand over swept), not at the clock's next sweep (never, without a clock).
            args.progress.step("sending the follow-up work (outbox)")
            outbox.flush()
            outbox.sweep(older_than_seconds=0)
    print(report)
    return 0


ADMIN_PASSWORD_VARIABLE = "VITRINE_ADMIN_PASSWORD"  # noqa: S105 (the name of a variable, not a password)


def admin_password(args) -> str:
    """The new admin's password, never on the command line unless asked: `--password-stdin` reads
    standard input's first line, else `VITRINE_ADMIN_PASSWORD`, else `--password`, else a prompt on
    a terminal (shell history and `ps` never see the first three)."""
    if args.password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = os.environ.get(ADMIN_PASSWORD_VARIABLE) or args.password
    if not password and sys.stdin.isatty():
        import getpass

        password = getpass.getpass(f"password for {args.email}: ")
    if not password:
        raise CommandError(f"no password: pipe it to --password-stdin or set {ADMIN_PASSWORD_VARIABLE}")
    return password


def cmd_create_admin(args) -> int:
    from backend.db import database
    from backend.errors import DomainError
    from backend.identity.admin_users import ensure_admin

    password = admin_password(args)
    _boot("cli")
    try:
        with database.connection_context():
            user, created = ensure_admin(email=args.email, password=password)
    except DomainError as exc:
        raise CommandError(exc.message) from None
    print(f"admin {'created' if created else 'promoted (password unchanged)'}: {user.email}")
    return 0


def cmd_catalog_import(args) -> int:
    """Universes, rayons and furniture types from a CSV file (`backend.marketplace.catalog_import`)."""
    from backend.db import database
    from backend.errors import DomainError
    from backend.marketplace.catalog_import import import_catalog

    try:
        text = Path(args.file).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise CommandError(f"cannot read {args.file}: {exc}") from None
    _boot("cli")
    try:
        with database.connection_context():
            report = import_catalog(text, dry_run=args.dry_run)
    except DomainError as exc:
        raise CommandError(f"{args.file}: {exc.message} (nothing written)") from None
    print("\n".join(report.lines(args.dry_run) + (["dry run: nothing written"] if args.dry_run else [])))
    return 0


def cmd_queues(args) -> int:
    import actors  # noqa: F401  (boots and sets up the broker)
    from actors.broker import queue_sizes, setup_broker
    from backend.db import database
    from backend.outbox import backlog
    from backend.runtime import current_runtime

    broker = setup_broker(current_runtime().config)
    rows = queue_sizes(broker)
    with database.connection_context():
        figures = backlog()
    if args.json:
        print(json.dumps({"queues": rows, "outboxUnsent": figures["unsent"], "outbox": figures}))
        return 0
    print(f"{'queue':<14}{'messages':>10}{'delayed':>10}{'dead':>8}")
    for row in rows:
        print(f"{row['queue']:<14}{row['messages']:>10}{row['delayed']:>10}{row['dead']:>8}")
    print(f"outbox rows not yet sent: {figures['unsent']}")
    print(f"outbox rows handed over, not done: {figures['notDone']}"
          f" (oldest {figures['oldestNotDoneSeconds']:.0f} s); dead: {figures['dead']}")
    return 0


def cmd_bench(args) -> int:
    from ops.bench import run_bench

    return run_bench(args.scenario, quick=args.quick, json_path=args.json)


def cmd_billing_invoice_pdf(args) -> int:
    """Write an invoice's Factur-X PDF (generated and stored first when missing)."""
    import hashlib

    from backend.billing.documents.stored_pdf import invoice_pdf
    from backend.db import database
    from backend.errors import Conflict, NotFound

    runtime = _boot("cli")
    args.progress.step(f"{args.number}: {'rendering' if args.regenerate else 'reading (rendered when missing)'}"
                       " the Factur-X PDF", 1, 2)
    with database.connection_context():
        try:
            pdf = invoice_pdf(args.number, storage=runtime.storage, config=runtime.config,
                              regenerate=args.regenerate)
        except (NotFound, Conflict) as exc:
            print(f"vitrine billing invoice-pdf: {exc.message}", file=sys.stderr)
            return 1
    target = Path(args.output or f"{args.number}.pdf")
    args.progress.step(f"writing {target}", 2, 2)
    target.write_bytes(pdf)
    print(f"{target}: {len(pdf)} bytes, sha256 {hashlib.sha256(pdf).hexdigest()}")
    return 0


def cmd_billing_recover_legacy(args) -> int:
    """Move never-billed legacy reservations to principal_seller (commission recomputed)."""
    from backend.billing.recovery import recover_legacy
    from backend.database_roles import owner_session

    runtime = _boot("cli")
    args.progress.step("never-billed legacy reservations: " + ("finding them (dry run)" if args.dry_run
                                                              else "moving them, in one transaction"), 1, 2)
    with owner_session(runtime.config.database_owner_url):
        changes = recover_legacy(rate_bps=runtime.config.platform_commission_rate_bps, dry_run=args.dry_run)
    args.progress.step(f"{len(changes)} reservation(s): the changes", 2, 2)
    for change in changes:
        before, after = change["before"], change["after"]
        print(f"{change['reservationId']} ({change['status']}): {before['billingModel'] or '-'} -> "
              f"{after['billingModel']}, commission {before['commissionAmountCents']} -> "
              f"{after['commissionAmountCents']} cents, total {before['totalAmountCents']} -> "
              f"{after['totalAmountCents']} cents at {after['commissionRateBps']} bps")
    verb = "would change" if args.dry_run else "changed"
    print(f"{len(changes)} reservation(s) {verb}")
    return 0


def cmd_billing_mandate_sha256(args) -> int:
    """Record the sha256 of the signed mandates stored before it was recorded (once, audited)."""
    from backend.billing.self_billing.mandate_sha256 import record_missing_sha256
    from backend.db import database

    runtime = _boot("cli")
    args.progress.step("signed mandates without a recorded sha256: " + ("reading them (dry run)" if args.dry_run
                                                                        else "recording their hash"), 1, 2)
    with database.connection_context():
        outcomes = record_missing_sha256(runtime.storage, dry_run=args.dry_run)
    args.progress.step(f"{len(outcomes)} mandate(s): the outcomes", 2, 2)
    for outcome in outcomes:
        print(f"{outcome.mandate_id} ({outcome.storage_key}): "
              + (f"not recorded, {outcome.problem}" if outcome.problem else f"sha256 {outcome.sha256}"))
    hashed = sum(1 for outcome in outcomes if outcome.problem is None)
    print(f"{hashed} sha256 {'would be recorded' if args.dry_run else 'recorded'}, "
          f"{len(outcomes) - hashed} mandate(s) left without one")
    return 1 if hashed < len(outcomes) else 0


def cmd_stop_embedded(args) -> int:
    """Stop the embedded PostgreSQL and Redis of the data directory, unless a live `vitrine dev`
    owns it (never touches `DATABASE_URL` / `REDIS_URL` servers)."""
    from backend import embedded
    from ops.datadir import owner

    holder = owner(data_dir())
    if holder is not None:
        raise CommandError(f"{data_dir()} is used by vitrine dev (pid {holder.pid}, port {holder.port}): "
                           "stop it with Ctrl-C (it stops its servers), or `kill` that pid")
    stopped = embedded.stop_postgres(data_dir()) + embedded.stop_redis(data_dir())
    if stopped:
        print(f"stopped in {data_dir()}: {', '.join(stopped)}")
    else:
        print(f"nothing running in {data_dir()}")
    return 0


def announce(config, role: str) -> None:
    """The boot warnings of a process group, said once by the process the platform started (JSON
    lines on stdout): the gunicorn or Dramatiq processes below it boot without repeating them."""
    from backend.logs import configure_logging, get_logger
    from ops.config_check import redis_warnings

    configure_logging(config.log_level)
    log = get_logger("boot")
    for warning in (*config.warnings, *redis_warnings(config.redis_url)):
        log.warning(warning, extra={"fields": {"role": role}})
    os.environ["VITRINE_SUPERVISOR"] = role


def cmd_web(args) -> int:
    """The Procfile's web: gunicorn with ops/gunicorn.conf.py, once the configuration is valid."""
    announce(args.config, "web")
    conf = Path(__file__).parent / "gunicorn.conf.py"
    argv = [sys.executable, "-m", "gunicorn", "api.app:create_app()", "-c", str(conf), *args.extra]
    os.execv(sys.executable, argv)  # noqa: S606 (our own interpreter, fixed arguments)


def cmd_worker(args) -> int:
    """The Procfile's worker: `dramatiq actors` in a session of its own (`ops.worker`), once the
    configuration is valid."""
    from ops.worker import run_worker

    announce(args.config, "worker")
    return run_worker(args.config, args.extra)


def cmd_config_check(args) -> int:
    """Reached once `main` found the configuration valid (its check is every process's)."""
    from ops.config_check import redis_warnings, summary

    print("\n".join(summary(args.config) + [f"warning: {w}" for w in redis_warnings(args.config.redis_url)]))
    return 0


def cmd_clock(args) -> int:
    from ops.clock import run_clock

    return run_clock()


def _bench_scenarios() -> str:
    """`vitrine bench --help`'s list: each scenario's name and DESCRIPTION, read without importing."""
    from ops import bench

    lines = []
    for name in bench.scenario_names():
        description = ""
        try:
            tree = ast.parse((Path(bench.__file__).parent / f"{name}.py").read_text())
            for node in tree.body:
                if (isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "DESCRIPTION" for t in node.targets)
                        and isinstance(node.value, ast.Constant)):
                    description = node.value.value
        except (OSError, SyntaxError):
            pass
        lines.append(f"  {name:<12} {description}")
    return "scenarios:\n" + "\n".join(lines)


# Other areas' command groups: functions (subparsers, common parent parser) adding their commands.
def _accounting_commands(sub, common) -> None:
    from ops.accounting_commands import add_commands

    add_commands(sub, common, NEEDS_DATABASE)


def _bank_commands(sub, common) -> None:
    from ops.bank_commands import add_commands

    add_commands(sub, common, NEEDS_DATABASE)


COMMAND_GROUPS: list[Callable[[argparse._SubParsersAction, argparse.ArgumentParser], None]] = [
    _accounting_commands, _bank_commands]


def build_parser() -> argparse.ArgumentParser:
    # `--data-dir` is accepted before and after the command (the one after wins).
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--data-dir", metavar="DIR", default=argparse.SUPPRESS,
                        help="data directory of the embedded servers (default $VITRINE_DATA_DIR or ./var)")
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="a failure shows its traceback, not only its one line")
    parser = argparse.ArgumentParser(prog="vitrine", description="Vitrine back end")
    parser.add_argument("--data-dir", metavar="DIR", default=None,
                        help="data directory of the embedded servers (default $VITRINE_DATA_DIR or ./var)")
    parser.add_argument("--debug", action="store_true", default=False,
                        help="a failure shows its traceback, not only its one line")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, func, help_text: str, needs: str = NEEDS_NOTHING, **kwargs) -> argparse.ArgumentParser:
        p = sub.add_parser(name, parents=[common], help=help_text, description=help_text, **kwargs)
        p.set_defaults(func=func, needs=needs)
        return p

    dev = command("dev", cmd_dev, "run the whole platform on embedded defaults (one per data directory)")
    dev.add_argument("--port", type=int, default=8000, metavar="PORT",
                     help="the API's port (default 8000); the simulators take the next ones")

    command("migrate", cmd_migrate, "apply database migrations (creates the embedded database if needed)",
            NEEDS_SERVERS)

    seed = command("seed-demo", cmd_seed_demo, "demo organizations, catalog and reservations (idempotent)",
                   NEEDS_DATABASE)
    seed.add_argument("--if-empty", action="store_true",
                      help="only what is missing: nothing (\"already seeded\") when the demo data is there")
    seed.add_argument("--reset", action="store_true",
                      help="erase every row of the database first (as its owner), then seed: the demo as new")

    create_admin = command("create-admin", cmd_create_admin, "create the first admin (an existing user is promoted)",
                           NEEDS_DATABASE)
    create_admin.add_argument("--email", required=True, metavar="EMAIL", help="the admin's e-mail address")
    create_admin.add_argument("--password", metavar="PASSWORD",
                              help="the new account's password (kept unchanged for an existing user); it lands "
                                   f"in the shell's history: prefer --password-stdin or {ADMIN_PASSWORD_VARIABLE}")
    create_admin.add_argument("--password-stdin", action="store_true",
                              help="read the password from standard input's first line")

    catalog = command("catalog", None, "the catalogue's reference data").add_subparsers(
        dest="catalog_command", required=True, metavar="COMMAND", help="a catalogue command")
    catalog_help = "import universes, rayons and furniture types from a CSV file (what exists is kept)"
    catalog_import = catalog.add_parser("import", parents=[common], help=catalog_help, description=catalog_help)
    catalog_import.add_argument("file", metavar="FILE.csv", help="the rows (docs/deploy.md, \"First data\")")
    catalog_import.add_argument("--dry-run", action="store_true", help="say what would be created, write nothing")
    catalog_import.set_defaults(func=cmd_catalog_import, needs=NEEDS_DATABASE)

    queues = command("queues", cmd_queues, "queue, delayed and dead-letter sizes, unsent outbox rows", NEEDS_DATABASE)
    queues.add_argument("--json", action="store_true", help="one JSON object on stdout")

    config = command("config", None, "the configuration: `vitrine config check` validates it as every process does")
    config_commands = config.add_subparsers(dest="config_command", required=True, metavar="COMMAND",
                                            help="a configuration command")
    check_help = ("check the configuration as every process does at start, starting nothing: one line per "
                  "problem and exit status 2, or a summary and the warnings")
    check = config_commands.add_parser("check", parents=[common], help=check_help, description=check_help)
    check.add_argument("--env-file", metavar="FILE",
                       help="a .env file (NAME=value lines) whose settings are laid over the environment first")
    check.set_defaults(func=cmd_config_check, needs=NEEDS_NOTHING)

    command("stop-embedded", cmd_stop_embedded,
            "stop the embedded PostgreSQL and Redis of the data directory (not while a vitrine dev owns it)")

    billing = command("billing", None, "billing support commands").add_subparsers(
        dest="billing_command", required=True, metavar="COMMAND", help="a billing command")
    invoice_pdf = billing.add_parser("invoice-pdf", parents=[common],
                                     help="write an invoice's Factur-X PDF (regenerated when missing)",
                                     description="write an invoice's Factur-X PDF (regenerated when missing)")
    invoice_pdf.add_argument("number", metavar="NUMBER", help="invoice number, e.g. FAC-RES-2026-000001")
    invoice_pdf.add_argument("-o", "--output", metavar="FILE", help="file to write (default: <NUMBER>.pdf)")
    invoice_pdf.add_argument("--regenerate", action="store_true", help="render it again (same bytes) before writing")
    invoice_pdf.set_defaults(func=cmd_billing_invoice_pdf, needs=NEEDS_DATABASE)
    recover = billing.add_parser("recover-legacy", parents=[common],
                                 help="move never-billed legacy reservations to principal_seller",
                                 description="move never-billed legacy reservations to principal_seller")
    recover.add_argument("--dry-run", action="store_true", help="print what would change, write nothing")
    recover.set_defaults(func=cmd_billing_recover_legacy, needs=NEEDS_DATABASE)
    mandate_help = ("record the sha256 of the signed self-billing mandates stored before it was recorded "
                    "(their download is refused until then), once, in the audit trail")
    mandate_sha256 = billing.add_parser("mandate-sha256", parents=[common], help=mandate_help,
                                        description=mandate_help)
    mandate_sha256.add_argument("--dry-run", action="store_true", help="print what would be recorded, write nothing")
    mandate_sha256.set_defaults(func=cmd_billing_mandate_sha256, needs=NEEDS_DATABASE)

    bench = command("bench", cmd_bench, "run benchmark scenarios (ops/bench)",
                    epilog=_bench_scenarios(), formatter_class=argparse.RawDescriptionHelpFormatter)
    bench.add_argument("scenario", nargs="?", default=None, metavar="SCENARIO",
                       help="one scenario (default: all of them, in name order)")
    bench.add_argument("--quick", action="store_true", help="smaller runs, for a smoke test")
    bench.add_argument("--json", metavar="FILE", help="also write the closing table and every raw figure to FILE")

    command("web", cmd_web, "the API under gunicorn (Procfile web); further arguments go to gunicorn")
    command("worker", cmd_worker, "the Dramatiq worker (Procfile worker); further arguments go to dramatiq")
    command("clock", cmd_clock, "the periodic schedules (Procfile clock; exactly one)")

    for add_commands in COMMAND_GROUPS:
        add_commands(sub, common)
    return parser


HINT = "run `vitrine migrate` first, or pass the --data-dir of your `vitrine dev`"


def take_dev_settings(directory: Path, env=None):
    """Beside a live `vitrine dev` on the same data directory, a command takes the settings that
    dev gives its own processes where `env` (default: the environment) leaves them unset: its
    public URL, the simulators and their test credentials, the demo legal identity. So
    `billing invoice-pdf --regenerate` renders the footer the platform renders, and the boot warnings
    about those settings do not show. The live dev (`ops.datadir.Owner`), or None."""
    from ops.datadir import owner

    holder = owner(directory)
    if holder is None or not holder.port:
        return None
    from ops.dev import dev_defaults

    env = os.environ if env is None else env
    env.update(dev_defaults(holder.port, env))
    return holder


def start_embedded(needs: str) -> None:
    """The embedded servers of the data directory, for a command that uses them (`migrate`, or one
    needing the database, without DATABASE_URL / REDIS_URL): one line on stderr naming the data
    directory, and, when this command started them, that they keep running and how to stop them."""
    from backend import embedded
    from ops.datadir import owner

    directory = data_dir()
    wanted = [(name, running, ensure) for name, setting, running, ensure in (
        ("PostgreSQL", "DATABASE_URL", embedded.postgres_running, embedded.ensure_postgres),
        ("Redis", "REDIS_URL", embedded.redis_running, embedded.ensure_redis)) if not os.environ.get(setting)]
    if not wanted:
        return
    if needs == NEEDS_DATABASE and not os.environ.get("DATABASE_URL") and not (
            directory / "postgres" / "PG_VERSION").exists():
        print(f"vitrine: data directory {directory}", file=sys.stderr)
        raise CommandError(f"no database in data directory {directory}: {HINT}")
    started = []
    for name, running, ensure in wanted:
        if not running(directory):
            ensure(directory)
            started.append(name)
    line = f"vitrine: data directory {directory}"
    holder = owner(directory)
    if holder is not None and holder.port:
        line += f" (vitrine dev, pid {holder.pid}, port {holder.port}: this command takes its settings)"
    if started:
        line += (f": started its embedded {' and '.join(started)}, which keep{'s' if len(started) == 1 else ''} "
                 f"running after this command (`vitrine stop-embedded --data-dir {directory}` stops "
                 f"{'it' if len(started) == 1 else 'them'})")
    print(line, file=sys.stderr, flush=True)


def prepare(needs: str, progress=None) -> None:
    """What a command needs, before it runs: the servers (embedded ones started when they are not
    running), an existing migrated database (or one line saying what to do)."""
    if needs != NEEDS_DATABASE:
        if needs == NEEDS_SERVERS:
            start_embedded(needs)
        return
    if progress is not None:
        progress.step("checking the database")
    start_embedded(needs)
    _boot("cli")
    from backend.db import database
    from backend.migrate import pending_migrations

    with database.connection_context():
        pending = pending_migrations()
    if pending:
        where = "DATABASE_URL" if os.environ.get("DATABASE_URL") else f"the database of {data_dir()}"
        raise CommandError(f"{where} is not migrated ({len(pending)} pending): {HINT}")


def configure_command_logging(config) -> None:
    """A command's own output is its stdout (`vitrine queues --json | jq`); its log lines go to
    stderr: JSON lines in a pipe or a log file, short human lines on a terminal (`LOG_FORMAT`:
    `auto`, `json` or `text`), where only warnings and errors show unless `LOG_LEVEL` is set."""
    import logging

    from backend.logs import TextFormatter, configure_logging
    from ops.progress import is_terminal

    text = config.log_format == "text" or (config.log_format == "auto" and is_terminal(sys.stderr))
    handler = configure_logging(config.log_level, stream="stderr", formatter=TextFormatter() if text else None)
    if text and not os.environ.get("LOG_LEVEL"):
        handler.setLevel(logging.WARNING)


def configuration_error(exc: ConfigError) -> int:
    """Every blocking problem of the configuration, one line each on stderr; exit status 2."""
    for problem in exc.problems:
        print(f"vitrine: configuration error: {problem}", file=sys.stderr)
    return 2


def _connection_errors() -> tuple[type[BaseException], ...]:
    import peewee
    import psycopg2
    import redis

    from backend.errors import ServiceUnavailable

    return (peewee.OperationalError, peewee.InterfaceError, psycopg2.OperationalError, redis.ConnectionError,
            redis.TimeoutError, ServiceUnavailable)


CONNECTION_ERRORS = _connection_errors()


def unreachable(exc: BaseException) -> str:
    """A server that cannot be reached, in one line: which one, and the cause its client gave (the
    wrong password, the refused connection), never a URL (it may hold a password)."""
    import redis

    server = "Redis" if isinstance(exc, redis.RedisError) else "PostgreSQL"
    cause = exc
    while cause.__cause__ is not None:
        cause = cause.__cause__
    lines = [line.strip() for line in str(cause).splitlines() if line.strip()]
    return f"cannot reach {server}: {lines[0] if lines else type(cause).__name__}"


PASS_THROUGH = frozenset({"web", "worker"})  # their further arguments go to gunicorn / dramatiq


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and args.command not in PASS_THROUGH:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.extra = extra
    try:
        from backend.config import load_config

        if getattr(args, "env_file", None):  # `config check --env-file`: the file over the environment
            from ops.config_check import read_env_file

            os.environ.update(read_env_file(Path(args.env_file)))
        chosen = getattr(args, "data_dir", None) or os.environ.get("VITRINE_DATA_DIR") or "var"
        os.environ["VITRINE_DATA_DIR"] = str(Path(chosen).resolve())
        if args.command != "dev":
            take_dev_settings(Path(os.environ["VITRINE_DATA_DIR"]))
        config = load_config()  # before anything starts: each blocking problem is one line, and status 2
    except ConfigError as exc:
        return configuration_error(exc)
    args.config = config
    if args.command not in ("dev", "web", "worker", "clock"):  # they log to stdout, as JSON lines
        configure_command_logging(config)
    from ops.progress import Progress

    # `vitrine billing invoice-pdf` reports as `[billing invoice-pdf 1/2 0.3 s] ...`.
    args.progress = Progress(" ".join(filter(None, (args.command, getattr(args, "billing_command", None)
                                                    or getattr(args, "catalog_command", None)))))
    try:
        prepare(args.needs, args.progress)
        return args.func(args) or 0
    except ConfigError as exc:
        return configuration_error(exc)
    except CommandError as exc:
        print(f"vitrine {args.command}: {exc}", file=sys.stderr)
        return 1
    except EmbeddedError as exc:  # an embedded server that cannot start says why in one line
        print(f"vitrine {args.command}: {exc}", file=sys.stderr)
        return 1
    except CONNECTION_ERRORS as exc:
        if args.debug:
            raise
        print(f"vitrine {args.command}: {unreachable(exc)} (--debug shows the traceback)", file=sys.stderr)
        return 1
    except BrokenPipeError:  # `vitrine queues | head -1`: the reader has gone, nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nor at exit, when stdout is flushed
        return 141  # as a command killed by SIGPIPE


if __name__ == "__main__":
    sys.exit(main())
