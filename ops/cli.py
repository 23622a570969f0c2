"""The `vitrine` command line.

Every command uses `DATABASE_URL` / `REDIS_URL` when set, else the embedded servers under the data
directory (`--data-dir`, env `VITRINE_DATA_DIR`, default `./var`), starting them when needed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from backend.config import ConfigError


def _boot(role: str):
    from backend.runtime import boot

    return boot(role=role)


def cmd_dev(args) -> int:
    from ops.dev import run_dev

    return run_dev(args.port, Path(os.environ["VITRINE_DATA_DIR"]))


def cmd_migrate(args) -> int:
    from backend.db import database
    from backend.migrate import apply_migrations

    runtime = _boot("release")
    with database.connection_context():
        done = apply_migrations()
        from backend.documents.seeding import seed_default_versions  # first published versions

        seeded = seed_default_versions(runtime.storage)
    print(f"migrations applied: {len(done)}" + (f" ({', '.join(done)})" if done else ""))
    if seeded:
        print(f"document templates seeded: {', '.join(seeded)}")
    return 0


def cmd_seed_demo(args) -> int:
    from backend.db import database
    from ops.seed import seed_demo

    runtime = _boot("seed")
    with database.connection_context():
        report = seed_demo(runtime, only_if_empty=args.if_empty)
    print(report)
    return 0


def cmd_create_admin(args) -> int:
    from backend.db import database
    from backend.errors import DomainError
    from backend.identity.admin_users import ensure_admin

    _boot("cli")
    try:
        with database.connection_context():
            user, created = ensure_admin(email=args.email, password=args.password)
    except DomainError as exc:
        print(f"vitrine: {exc.message}", file=sys.stderr)
        return 1
    print(f"admin {'created' if created else 'promoted (password unchanged)'}: {user.email}")
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

    return run_bench(args.scenario, quick=args.quick)


def cmd_billing_invoice_pdf(args) -> int:
    """Write an invoice's Factur-X PDF (generated and stored first when missing)."""
    import hashlib

    from backend.billing.invoice_pdfs import invoice_pdf
    from backend.db import database
    from backend.errors import NotFound

    runtime = _boot("cli")
    with database.connection_context():
        try:
            pdf = invoice_pdf(args.number, storage=runtime.storage, config=runtime.config,
                              regenerate=args.regenerate)
        except NotFound as exc:
            print(f"vitrine billing invoice-pdf: {exc.message}", file=sys.stderr)
            return 1
    target = Path(args.output or f"{args.number}.pdf")
    target.write_bytes(pdf)
    print(f"{target}: {len(pdf)} bytes, sha256 {hashlib.sha256(pdf).hexdigest()}")
    return 0


def cmd_billing_recover_legacy(args) -> int:
    """Move never-billed legacy reservations to principal_seller (commission recomputed)."""
    from backend.billing.recovery import recover_legacy
    from backend.db import database

    runtime = _boot("cli")
    with database.connection_context():
        changes = recover_legacy(rate_bps=runtime.config.platform_commission_rate_bps, dry_run=args.dry_run)
    for change in changes:
        before, after = change["before"], change["after"]
        print(f"{change['reservationId']} ({change['status']}): {before['billingModel'] or '-'} -> "
              f"{after['billingModel']}, commission {before['commissionAmountCents']} -> "
              f"{after['commissionAmountCents']} cents, total {before['totalAmountCents']} -> "
              f"{after['totalAmountCents']} cents at {after['commissionRateBps']} bps")
    verb = "would change" if args.dry_run else "changed"
    print(f"{len(changes)} reservation(s) {verb}")
    return 0


def cmd_stop_embedded(args) -> int:
    """Stop the embedded PostgreSQL and Redis of the data directory (a no-op for servers that do
    not run there, and for `DATABASE_URL` / `REDIS_URL` servers, which are never touched)."""
    from backend import embedded

    data_dir = Path(os.environ["VITRINE_DATA_DIR"])
    embedded.stop_postgres(data_dir)
    embedded.stop_redis(data_dir)
    print(f"embedded servers of {data_dir} stopped")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="vitrine", description="Vitrine back end")
    parser.add_argument("--data-dir", default=None, help="data directory (default $VITRINE_DATA_DIR or ./var)")
    sub = parser.add_subparsers(dest="command", required=True)

    dev = sub.add_parser("dev", help="run the whole platform on embedded defaults")
    dev.add_argument("--port", type=int, default=8000)
    dev.add_argument("--data-dir", dest="data_dir_sub", default=None)
    dev.set_defaults(func=cmd_dev)

    sub.add_parser("migrate", help="apply database migrations").set_defaults(func=cmd_migrate)

    seed = sub.add_parser("seed-demo", help="demo organizations, catalog and reservations")
    seed.add_argument("--if-empty", action="store_true", help="only when the database holds no demo data")
    seed.set_defaults(func=cmd_seed_demo)

    create_admin = sub.add_parser("create-admin", help="create the first admin (an existing user is promoted)")
    create_admin.add_argument("--email", required=True)
    create_admin.add_argument("--password", required=True)
    create_admin.set_defaults(func=cmd_create_admin)

    queues = sub.add_parser("queues", help="queue, delayed and dead-letter sizes, unsent outbox rows")
    queues.add_argument("--json", action="store_true")
    queues.set_defaults(func=cmd_queues)

    sub.add_parser("stop-embedded", help="stop the embedded PostgreSQL and Redis of the data directory").set_defaults(
        func=cmd_stop_embedded)

    billing = sub.add_parser("billing", help="billing support commands").add_subparsers(dest="billing_command",
                                                                                         required=True)
    invoice_pdf = billing.add_parser("invoice-pdf", help="write an invoice's Factur-X PDF (regenerated when missing)")
    invoice_pdf.add_argument("number", help="invoice number, e.g. FAC-RES-2026-000001")
    invoice_pdf.add_argument("-o", "--output", help="file to write (default: <NUMBER>.pdf)")
    invoice_pdf.add_argument("--regenerate", action="store_true", help="render it again (same bytes) before writing")
    invoice_pdf.set_defaults(func=cmd_billing_invoice_pdf)
    recover = billing.add_parser("recover-legacy", help="move never-billed legacy reservations to principal_seller")
    recover.add_argument("--dry-run", action="store_true", help="print what would change, write nothing")
    recover.set_defaults(func=cmd_billing_recover_legacy)

    bench = sub.add_parser("bench", help="run benchmark scenarios (ops/bench)")
    bench.add_argument("scenario", nargs="?", default=None)
    bench.add_argument("--quick", action="store_true", help="smaller runs, for a smoke test")
    bench.set_defaults(func=cmd_bench)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    data_dir = getattr(args, "data_dir_sub", None) or args.data_dir or os.environ.get("VITRINE_DATA_DIR") or "var"
    os.environ["VITRINE_DATA_DIR"] = str(Path(data_dir).resolve())
    if args.command != "dev":  # `dev` only supervises: its children log to stdout as the Procfile's do
        from backend.logs import configure_logging

        # A command's own output is its stdout (`vitrine queues --json | jq`); its log lines go to stderr.
        configure_logging(os.environ.get("LOG_LEVEL") or "info", stream=sys.stderr)
    try:
        return args.func(args) or 0
    except ConfigError as exc:
        print(f"vitrine: configuration error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
