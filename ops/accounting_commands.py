"""`vitrine accounting ...`: the books from the command line (docs/accounting.md).

- `fec --year YYYY [-o FILE]`: the FEC of a fiscal year (default file `<SIREN>FEC<closing date>.txt`,
  refused without `PLATFORM_LEGAL_SIRET`; `-o -` writes to stdout), as the admin route streams it;
- `trial-balance [--from YYYY-MM-DD] [--to YYYY-MM-DD]`: the table the admin route answers;
- `close --until YYYY-MM-DD`: close the books up to that day included;
- `reconcile --date YYYY-MM-DD [--pdf FILE]`: the bank reconciliation the admin route answers, and
  its printable PDF (the platform's renderer);
- `vat --month YYYY-MM`: the VAT of a month from the books, per rate (the admin route's figures);
- `verify`: every breach of the books, invoice series, stored PDFs and their XML, and e-invoicing
  transmissions, one line each; exit status 1 on any.
"""

from __future__ import annotations

import argparse
import sys
from datetime import date
from pathlib import Path


def _boot():
    from backend.runtime import boot

    return boot(role="cli")


def _euros(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    return f"{sign}{abs(cents) // 100:,}.{abs(cents) % 100:02d}".replace(",", " ")


def cmd_fec(args) -> int:
    from backend.billing.accounting import fec
    from backend.db import database
    from backend.errors import Conflict

    runtime = _boot()
    try:  # `-o` names the file: its records hold no SIREN
        name = args.output or fec.file_name(fec.platform_siren(runtime.config), args.year)
    except Conflict as exc:
        print(f"vitrine accounting fec: {exc.message}, or name the file with -o", file=sys.stderr)
        return 1
    with database.connection_context():
        if name == "-":
            fec.write_fec(args.year, sys.stdout.buffer)
            sys.stdout.buffer.flush()
            return 0
        with Path(name).open("wb") as out:
            fec.write_fec(args.year, out)
    print(f"{name}: FEC of fiscal year {args.year}, {Path(name).stat().st_size} bytes")
    return 0


def format_trial_balance(balance) -> list[str]:
    """The trial balance as the command prints it: one row per account, then the totals."""
    rows = [f"{'account':<8} {'label':<44} {'debit':>16} {'credit':>16} {'balance':>16}"]
    for line in [*balance.accounts, balance.totals]:
        rows.append(f"{line.account:<8} {line.label[:44]:<44} {_euros(line.debit_cents):>16} "
                    f"{_euros(line.credit_cents):>16} {_euros(line.balance_cents):>16}")
    return rows


def cmd_trial_balance(args) -> int:
    from backend.billing.accounting import reports
    from backend.db import database

    _boot()
    with database.connection_context():
        balance = reports.trial_balance(start=args.start, end=args.end)
    print("\n".join(format_trial_balance(balance)))
    return 0


def cmd_close(args) -> int:
    from backend.billing.accounting import closing
    from backend.db import database
    from backend.errors import Conflict

    _boot()
    with database.connection_context():
        try:
            closing.close_until(args.until, closed_by="vitrine accounting close")
        except Conflict as exc:
            print(f"vitrine accounting close: {exc.message}", file=sys.stderr)
            return 1
    print(f"books closed until {args.until}: later events post on {date.fromordinal(args.until.toordinal() + 1)}")
    return 0


def cmd_verify(args) -> int:
    from backend.billing.accounting.verify import verify
    from backend.db import database
    from backend.einvoicing.reconciliation import missing_transmissions

    runtime = _boot()
    with database.connection_context():
        breaches = verify(storage=runtime.storage, missing_transmissions=lambda: missing_transmissions(runtime.config))
    for breach in breaches:
        print(breach)
    if breaches:
        print(f"vitrine accounting verify: {len(breaches)} breach(es)", file=sys.stderr)
        return 1
    print("the books are clean: entries balanced and validated, journals and invoice series without gap, "
          "every issued invoice and every payment the bank booked posted once, at the amounts invoiced and "
          "paid, 512 as the statements imported, "
          "every stored invoice PDF as first stored and its embedded XML at the same totals, "
          "every invoice in e-invoicing scope transmitted")
    return 0


def format_reconciliation(report) -> list[str]:
    """The bank reconciliation as the command prints it: the balances, then one row per item."""
    rows = [f"bank reconciliation at {report.date.isoformat()}",
            f"{'bank balance (statements imported)':<40} {_euros(report.bank_balance_cents):>16}",
            f"{'books balance (512)':<40} {_euros(report.book_balance_cents):>16}",
            f"{'difference (bank - books)':<40} {_euros(report.difference_cents):>16}",
            f"{'unexplained':<40} {_euros(report.unexplained_cents):>16}",
            f"{len(report.items)} item(s)"]
    for item in report.items:
        age = "" if item.age_days is None else f" ({item.age_days} d)"
        rows.append(f"  {item.kind:<20} {item.reference[:40]:<40} {_euros(item.amount_cents):>16}{age}")
    return rows


def cmd_reconcile(args) -> int:
    from backend.billing.accounting import reconciliation
    from backend.db import database

    runtime = _boot()
    with database.connection_context():
        report = reconciliation.reconcile(args.date)
    print("\n".join(format_reconciliation(report)))
    if args.pdf:
        from backend.documents.rendering import html_to_pdf

        company = runtime.config.platform_legal_company_name or runtime.config.platform_name
        Path(args.pdf).write_bytes(html_to_pdf(reconciliation.as_html(report, company=company)))
        print(f"{args.pdf}: the reconciliation as a PDF")
    return 0


def format_vat_return(report) -> list[str]:
    """The VAT of a month as the command prints it: per rate, collected then deductible, the totals."""
    rows = [f"VAT of {report.month}", f"{'':<12} {'rate':>8} {'base':>16} {'VAT':>16}"]
    for title, lines in (("collected", report.collected), ("deductible", report.deductible)):
        for line in lines:
            rate = "?" if line.rate_bps is None else f"{line.rate_bps / 100:g} %"
            rows.append(f"{title:<12} {rate:>8} {_euros(line.base_cents):>16} {_euros(line.vat_cents):>16}")
    rows += [f"{'collected (44571)':<38} {_euros(report.collected_cents):>16}",
             f"{'deductible (44566)':<38} {_euros(report.deductible_cents):>16}",
             f"{'due (credit when negative)':<38} {_euros(report.due_cents):>16}"]
    return rows


def cmd_vat(args) -> int:
    from backend.billing.accounting import vat_return
    from backend.db import database

    _boot()
    with database.connection_context():
        report = vat_return.vat_return(args.month)
    print("\n".join(format_vat_return(report)))
    return 0


def _month(text: str) -> str:
    from backend.billing.accounting.vat_return import month_bounds

    try:
        month_bounds(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a month YYYY-MM: {text!r}") from None
    return text


def _day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a day YYYY-MM-DD: {text!r}") from None


def add_commands(sub, common, needs: str) -> None:
    """The `accounting` group; `needs`: what its commands need started (`ops.cli.NEEDS_DATABASE`)."""
    group = sub.add_parser("accounting", parents=[common], help="the books: FEC, trial balance, closing, verify",
                           description="the books: FEC, trial balance, closing, verify")
    commands = group.add_subparsers(dest="accounting_command", required=True, metavar="COMMAND",
                                    help="an accounting command")

    def command(name: str, func, help_text: str) -> argparse.ArgumentParser:
        parser = commands.add_parser(name, parents=[common], help=help_text, description=help_text)
        parser.set_defaults(func=func, needs=needs)
        return parser

    fec = command("fec", cmd_fec, "write the FEC (Fichier des Écritures Comptables) of a fiscal year")
    fec.add_argument("--year", type=int, required=True, metavar="YYYY", help="the year of the closing date")
    fec.add_argument("-o", "--output", metavar="FILE", help="file to write (default <SIREN>FEC<date>.txt; - stdout)")
    balance = command("trial-balance", cmd_trial_balance, "print the trial balance of a period")
    balance.add_argument("--from", dest="start", type=_day, metavar="YYYY-MM-DD", help="first entry date (included)")
    balance.add_argument("--to", dest="end", type=_day, metavar="YYYY-MM-DD", help="last entry date (included)")
    close = command("close", cmd_close, "close the books up to a day included (no entry dated then afterwards)")
    close.add_argument("--until", type=_day, required=True, metavar="YYYY-MM-DD", help="the last closed day")
    reconcile = command("reconcile", cmd_reconcile, "the bank reconciliation: bank and books balances and the items "
                        "between them")
    reconcile.add_argument("--date", type=_day, required=True, metavar="YYYY-MM-DD", help="as of the end of that day")
    reconcile.add_argument("--pdf", metavar="FILE", help="also write it as a printable PDF")
    vat = command("vat", cmd_vat, "the VAT of a month from the books: collected and deductible per rate, due")
    vat.add_argument("--month", type=_month, required=True, metavar="YYYY-MM", help="the month")
    command("verify", cmd_verify, "check the books and invoice series of the whole database (exit 1 on a breach)")
