"""Free text that reaches legal documents (legal names, streets, cities, signers' names): one rule.

Such a value is printed on invoices, written to the FEC, put in e-mail headers and opened in
spreadsheets. It holds no control character (a CR/LF in an organization's name makes every
e-mail naming it fail; a tab breaks the FEC's fields) and does not start with `=`, `+`, `-` or
`@`, which a spreadsheet reads as a formula and runs (OWASP, "CSV Injection"). A value stored
before this rule is cleaned once by migration 187, which records what it changed.
"""

from __future__ import annotations

import re

FORMULA_STARTS = ("=", "+", "-", "@")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


# The same rule as a regular expression, for the OpenAPI document (clients and the fuzzer read it).
PATTERN = r"^[^=+\-@\x00-\x1f\x7f-\x9f][^\x00-\x1f\x7f-\x9f]*$"


def problem(value: str) -> str | None:
    """Why `value` is refused, None when it is fine."""
    if _CONTROL.search(value):
        return "must not contain control characters (tab, line breaks...)"
    if value.startswith(FORMULA_STARTS):
        return "must not start with =, +, - or @"
    return None

