"""One serialization rule in billing: services return models or dataclasses and `schemas/billing/`
dumps them, so `backend/billing/` builds no dictionary with camelCase keys (an API answer's
shape) outside the places below, each of which writes another format than an answer."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CAMEL = re.compile(r"^[a-z]+[A-Z][A-Za-z0-9]*$")

# The formats other than an answer, and where (module under backend/billing, function) each is built.
OTHER_FORMATS = {
    # log lines, an error's field names and the fingerprint of a request body (the API's request
    # JSON) are keyed like the API
    "log line fields, a validation error's fields": {
        ("collection/collect.py", "collect"), ("collection/auto.py", "auto_collect"), ("legacy.py", "collect_step"),
        ("corrections.py", "refund"), ("payouts.py", "pay_out"), ("self_billing/resolution.py", "resolve")},
    "an error's details (the bank file run's refusal)": {("bank/orders.py", "shown")},
    "a list's `sortBy` values (the query's, API.md Lists)": {("bank/files.py", "<module>"),
                                                            ("self_billing/resolution.py", "contested")},
    "the request body fingerprinted": {("collection/collect.py", "collection_key"), ("corrections.py", "refund_once")},
    # JSON documents stored in a row as written there (read back by the documents and the API)
    "a JSON document stored on its row (party snapshot, invoice lines, mandate signer)": {
        ("invoicing/parties.py", "party_of"), ("invoicing/parties.py", "platform_party"),
        ("invoicing/invoices.py", "as_json"),
        ("self_billing/mandate.py", "_reserve_draft"), ("self_billing/mandate_demo.py", "<module>")},
    # the variables of a document template, the XMP of a Factur-X PDF, a command's JSON report
    "a template's variables": {("documents/render.py", "template_context"),
                               ("self_billing/mandate_document.py", "mandate_context")},
    "XMP namespace prefixes": {("documents/facturx.py", "<module>")},
    "what `vitrine billing recover-legacy` prints": {("recovery.py", "recover_legacy")},
}
PLACES = {place for places in OTHER_FORMATS.values() for place in places}


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
    assert sorted(found - PLACES) == []
    assert sorted(PLACES - found) == []  # the table lists nothing that went away


def test_the_check_sees_a_camel_case_answer(tmp_path):
    (tmp_path / "views.py").write_text(
        "def item(invoice):\n    return {'invoiceNumber': invoice.number}\n\n\n"
        "def audited(entry, invoice):\n    entry(details={'invoiceNumber': invoice.number}, kind='x')\n")
    assert camel_dicts(tmp_path) == {("views.py", "item")}
