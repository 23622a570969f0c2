"""`vitrine bank ...`: the files for the bank from the command line (docs/bank.md).

- `direct-debits [-o FILE]`: the direct debit file (pain.008.001.08) of every debit due;
- `transfers [-o FILE]`: the credit transfer file (pain.001.001.09) of every payout and refund due;
- `import FILE`: import a camt.053 or camt.054 statement, as `POST /api/admin/billing/bank/statements`
  does; prints the counts, exit 1 when the statement is refused (its reason on stderr).

Each makes, stores and records the file exactly as the admin route does (`backend.billing.bank.
files.make_file`), audited as made from the command line by the system user running it, and
writes its XML to FILE (default `<schema>-<messageId>.xml`; `-o -` writes to stdout); each order
held back is named on stderr with its reason. Nothing that can go, or a setting failing its
check: the reason on stderr, exit status 1, no file.

`void FILE_ID --reason TEXT` voids a live file the bank refused: its payment orders go in the next
run (refused once the bank booked or returned one of them; `backend.billing.bank.files.void_file`).
"""

from __future__ import annotations

import getpass
import sys
from pathlib import Path


def _make(args, kind_name: str) -> int:
    from backend.billing.bank import files
    from backend.billing.models import BankFileKind
    from backend.db import database
    from backend.errors import Conflict
    from backend.runtime import boot

    runtime = boot(role="cli")
    command = f"vitrine bank {args.bank_command}"
    with database.connection_context():
        try:
            made = files.make_file(BankFileKind(kind_name), storage=runtime.storage, config=runtime.config,
                                   user_id=None, origin=f"command line ({command}, system user {getpass.getuser()})")
        except Conflict as exc:
            print(f"{command}: {exc.message}", file=sys.stderr)
            return 1
    file = made.file
    for item in made.held:
        print(f"{command}: payment order {item.payment_order_id} held back: {item.reason}"
              + (f" ({item.field}: {item.problem})" if item.field else ""), file=sys.stderr)
    xml = runtime.storage.read_bytes(files.STORAGE_CONTEXT, file.storage_key)
    target = args.output or files.file_name(file)
    if target == "-":
        sys.stdout.buffer.write(xml)
        sys.stdout.buffer.flush()
        return 0
    Path(target).write_bytes(xml)
    print(f"{target}: {file.count} transaction(s), {file.control_sum_cents // 100}.{file.control_sum_cents % 100:02d} "
          f"EUR, requested for {file.requested_on}, message {file.message_id}, file {file.id}, sha256 {file.sha256}")
    return 0


def cmd_void(args) -> int:
    from backend.billing.bank import files
    from backend.db import database
    from backend.errors import DomainError
    from backend.runtime import boot

    boot(role="cli")
    with database.connection_context():
        try:
            file = files.void_file(args.file_id, reason=args.reason, user_id=None,
                                   origin=f"command line (vitrine bank void, system user {getpass.getuser()})")
        except DomainError as exc:
            print(f"vitrine bank void: {exc.message}", file=sys.stderr)
            return 1
    print(f"file {file.id} (message {file.message_id}) voided: its {file.count} payment order(s) are due again")
    return 0


def cmd_direct_debits(args) -> int:
    return _make(args, "direct_debit")


def cmd_transfers(args) -> int:
    return _make(args, "credit_transfer")


def cmd_import(args) -> int:
    from backend.billing.bank import camt, statements
    from backend.db import database
    from backend.errors import DomainError
    from backend.runtime import boot

    runtime = boot(role="cli")
    path = Path(args.file)
    if path.stat().st_size > camt.MAX_DOCUMENT_BYTES:
        print(f"vitrine bank import: {path}: larger than {camt.MAX_DOCUMENT_BYTES} bytes (too_large)", file=sys.stderr)
        return 1
    with database.connection_context():
        try:
            imported = statements.import_statement(path.read_bytes(), config=runtime.config, user_id=None)
        except DomainError as exc:
            print(f"vitrine bank import: {path}: {exc.message} ({exc.details.get('reason', exc.code)})",
                  file=sys.stderr)
            return 1
    print(f"statement {imported.id}: {imported.lines} lines, {imported.matched} matched, "
          f"{imported.returned} returned, {imported.unmatched} unmatched"
          + ("" if imported.created else " (already imported: nothing changed)"))
    return 0


def add_commands(sub, common, needs: str) -> None:
    """The `bank` group; `needs`: what its commands need started (`ops.cli.NEEDS_DATABASE`)."""
    group = sub.add_parser("bank", parents=[common], help="the bank: files out, statements in",
                           description="the bank: files out, statements in (docs/bank.md)")
    commands = group.add_subparsers(dest="bank_command", required=True, metavar="COMMAND", help="a bank command")

    help_text = "void a file the bank refused: its payment orders go in the next file"
    void = commands.add_parser("void", parents=[common], help=help_text, description=help_text)
    void.set_defaults(func=cmd_void, needs=needs)
    void.add_argument("file_id", metavar="FILE_ID", help="the file's id (GET /api/admin/billing/bank/files)")
    void.add_argument("--reason", required=True, metavar="TEXT", help="why the bank refused it (audited)")
    for name, func, help_text in (
        ("direct-debits", cmd_direct_debits, "make the direct debit file (pain.008.001.08) of every debit due"),
        ("transfers", cmd_transfers, "make the credit transfer file (pain.001.001.09) of every payout and refund due"),
    ):
        parser = commands.add_parser(name, parents=[common], help=help_text, description=help_text)
        parser.set_defaults(func=func, needs=needs)
        parser.add_argument("-o", "--output", metavar="FILE",
                            help="file to write (default <schema>-<messageId>.xml; - stdout)")
    statement = commands.add_parser("import", parents=[common], help="import a camt.053 or camt.054 bank statement",
                                    description="import a camt.053 or camt.054 bank statement")
    statement.set_defaults(func=cmd_import, needs=needs)
    statement.add_argument("file", metavar="FILE", help="the statement's XML file")
