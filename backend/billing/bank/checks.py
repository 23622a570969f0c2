"""What a bank file never carries: an IBAN, a BIC, a creditor identifier or a mandate reference
(RUM) that fails its check (python-stdnum: ISO 13616 IBAN with its ISO 7064 check digits, ISO 9362
BIC, the EPC creditor identifier with its ISO 7064 check digits). Each check answers None when the
value passes, else what is wrong, for the file run's `details.problems`.
"""

from __future__ import annotations

import re

from stdnum import bic, iban
from stdnum.eu import at_02
from stdnum.exceptions import ValidationError as NumberInvalid

# A mandate reference: 1 to 35 characters of the SEPA Latin set, neither starting nor ending with
# `/` nor holding `//` (EPC implementation guidelines, identifiers); no blank at either end.
_RUM = re.compile(r"^[A-Za-z0-9+?/:().,'-](?:[A-Za-z0-9+?/:().,' -]{0,33}[A-Za-z0-9+?/:().,'-])?$")


def _problem(module, value: str | None) -> str | None:
    if not value:
        return "missing"
    try:
        module.validate(value)
    except NumberInvalid as error:
        return str(error) or "invalid"
    return None


def iban_problem(value: str | None) -> str | None:
    return _problem(iban, value)


def bic_problem(value: str | None) -> str | None:
    return _problem(bic, value)


def creditor_id_problem(value: str | None) -> str | None:
    return _problem(at_02, value)


def mandate_reference_problem(value: str | None) -> str | None:
    if not value:
        return "missing"
    if not _RUM.match(value) or value.startswith("/") or value.endswith("/") or "//" in value:
        return "not 1 to 35 characters of the SEPA character set (no leading or trailing '/', no '//')"
    return None


def compact_iban(value: str) -> str:
    return iban.compact(value)


def compact_bic(value: str) -> str:
    return bic.compact(value)


def compact_creditor_id(value: str) -> str:
    return at_02.compact(value)
