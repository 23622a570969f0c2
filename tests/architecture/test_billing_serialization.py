"""One serialization rule in billing: services return models or dataclasses and `schemas/billing/`
dumps them, so `backend/billing/` builds no dictionary with camelCase keys (an API answer's
shape) outside the places below, each of which writes another format than an answer."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CAMEL = re.compile(r"^[a-z]+[A-Z][A-Za-z0-9]*$")

# (module under backend/billing, function): the format its camelCase dictionary is.
OTHER_FORMATS = {
    # log lines and the fingerprint of a request body (the API's request JSON) are keyed like the API
    ("collection.py", "collect"): "log line fields",
    ("collection.py", "auto_collect"): "log line fields",
    ("collection.py", "collection_key"): "the request body fingerprinted",
    ("legacy.py", "collect_step"): "log line fields",
    ("corrections.py", "refund"): "log line fields",
    ("corrections.py", "refund_once"): "the request body fingerprinted",
    ("payouts.py", "pay_out"): "log line fields",
    # JSON documents stored in a row as written there (read back by the documents and the API)
    ("parties.py", "party_of"): "the party snapshot stored on the invoice",
    ("parties.py", "platform_party"): "the party snapshot stored on the invoice",
    ("invoices.py", "as_json"): "the invoice lines stored on the invoice",
    ("self_billing/mandate.py", "_reserve_draft"): "the signer stored on the mandate",
    ("self_billing/mandate_demo.py", "<module>"): "the signer stored on the demo mandate",
    # the variables of a document template, the XMP of a Factur-X PDF
    ("documents/render.py", "template_context"): "the invoice template's variables",
    ("self_billing/mandate_document.py", "mandate_context"): "the mandate template's variables",
    ("documents/facturx.py", "<module>"): "XMP namespace prefixes",
    # what `vitrine billing recover-legacy` prints
    ("recovery.py", "recover_legacy"): "the command's JSON report",
    # The idempotent answers of the money routes are stored as the API shows them and replayed as
    # stored (`idempotency`); they are the next step of this rule (issue 27).
    ("collection.py", "_reservation_total"): "an idempotent answer, stored",
    ("collection.py", "_with_number"): "an idempotent answer, stored",
    ("legacy.py", "_collect"): "an idempotent answer, stored",
    ("corrections.py", "credit_in_full"): "an answer of the credit-note route",
    ("payouts.py", "_payout"): "an idempotent answer, stored",
}


def camel_dicts(folder: Path) -> set[tuple[str, str]]:
    """`(module, function)` of every dictionary display with a camelCase key under `folder`; the
    `details=` of an audit entry (stored as the audit trail shows it) is not looked at."""
    found: set[tuple[str, str]] = set()

    def visit(node: ast.AST, module: str, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.keyword) and child.arg == "details":
                continue
            inner = child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else where
            if isinstance(child, ast.Dict) and any(
                    isinstance(key, ast.Constant) and isinstance(key.value, str) and CAMEL.match(key.value)
                    for key in child.keys):
                found.add((module, inner))
            visit(child, module, inner)

    for path in sorted(folder.rglob("*.py")):
        visit(ast.parse(path.read_text()), path.relative_to(folder).as_posix(), "<module>")
    return found


def test_billing_builds_no_answer_shaped_dictionary():
    found = camel_dicts(ROOT / "backend" / "billing")
    assert sorted(found - set(OTHER_FORMATS)) == []
    assert sorted(set(OTHER_FORMATS) - found) == []  # the table lists nothing that went away


def test_the_check_sees_a_camel_case_answer(tmp_path):
    (tmp_path / "views.py").write_text(
        "def item(invoice):\n    return {'invoiceNumber': invoice.number}\n\n\n"
        "def audited(entry, invoice):\n    entry(details={'invoiceNumber': invoice.number}, kind='x')\n")
    assert camel_dicts(tmp_path) == {("views.py", "item")}
