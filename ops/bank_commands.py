"""`vitrine bank ...`: the bank from the command line (docs/bank.md).

- `import FILE`: import a camt.053 or camt.054 statement, as `POST /api/admin/billing/bank/statements`
  does; prints the counts, exit 1 when the statement is refused (its reason on stderr).
"""

from __future__ import annotations

import sys
from pathlib import Path


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
    group = sub.add_parser("bank", parents=[common], help="the bank: statements in",
                           description="the bank: statements in")
    commands = group.add_subparsers(dest="bank_command", required=True, metavar="COMMAND", help="a bank command")
    parser = commands.add_parser("import", parents=[common], help="import a camt.053 or camt.054 bank statement",
                                 description="import a camt.053 or camt.054 bank statement")
    parser.set_defaults(func=cmd_import, needs=needs)
    parser.add_argument("file", metavar="FILE", help="the statement's XML file")
