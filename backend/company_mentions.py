"""The company mentions a French invoice prints for a company seller: its legal form, its share
capital and its registration (Code de commerce, art. R123-237: the register, the city of its
registry and the SIREN).

One set of checks for the platform's own settings (`PLATFORM_LEGAL_FORM`,
`PLATFORM_SHARE_CAPITAL_CENTS`, `PLATFORM_REGISTRATION`, checked at boot) and for a billing
profile's `legalForm`, `shareCapitalCents` and `registration`. A registration names a register
(`RCS` for a trading company, `RM` the trade register of a craftsman), a place and the company's
SIREN, which must be the organization's: it is written back in one normal form,
`RCS Paris 901 234 567`.
"""

from __future__ import annotations

import re

LEGAL_FORM_MAX = 60
# A share capital is a positive amount; a company cannot print more than this without a typo.
SHARE_CAPITAL_MAX_CENTS = 10**15
REGISTERS = ("RCS", "RM")
_REGISTRATION = re.compile(r"^(RCS|RM)\s+(\S(?:.*\S)?)\s+((?:\d\s?){8}\d)$", re.IGNORECASE)


def legal_form_problem(value: str) -> str | None:
    """Why `value` is no legal form (None when it is one): 1 to 60 characters, a letter first."""
    text = value.strip()
    if not text or len(text) > LEGAL_FORM_MAX:
        return f"must be 1 to {LEGAL_FORM_MAX} characters"
    if not text[0].isalpha():
        return "must start with a letter (e.g. SAS, SARL, entrepreneur individuel)"
    return None


def share_capital_problem(cents: int) -> str | None:
    if isinstance(cents, bool) or not isinstance(cents, int) or not 0 < cents <= SHARE_CAPITAL_MAX_CENTS:
        return "must be a positive number of cents"
    return None


def normal_registration(value: str, *, siren: str | None) -> str:
    """`value` in its normal form (`RCS Paris 901 234 567`); ValueError saying why it is refused:
    not a register, place and SIREN, or a SIREN other than `siren` (when given)."""
    match = _REGISTRATION.fullmatch(" ".join(value.split()))
    if match is None:
        raise ValueError(f"must be the register ({' or '.join(REGISTERS)}), the city of its registry and the "
                         "SIREN, e.g. RCS Paris 901 234 567")
    register, place, digits = match.group(1).upper(), match.group(2), re.sub(r"\s", "", match.group(3))
    if siren is not None and digits != siren:
        raise ValueError(f"must name the company's SIREN {siren}")
    return f"{register} {place} {digits[:3]} {digits[3:6]} {digits[6:]}"


# The mentions by their API names (the billing profile's `legalForm`, `shareCapitalCents`, `registration`).
API_NAMES = (("legal_form", "legalForm"), ("share_capital_cents", "shareCapitalCents"),
             ("registration", "registration"))


def missing(values: object) -> list[str]:
    """The API names of the company mentions `values` (an object with the billing profile's
    columns as attributes) does not give: what the admin's KYB review shows as missing. An
    individual entrepreneur has no share capital: none is asked of a legal form saying so."""
    gaps = [name for column, name in API_NAMES if getattr(values, column, None) in (None, "")]
    form = (getattr(values, "legal_form", None) or "").strip().lower()
    if form.startswith(("entrepreneur individuel", "entreprise individuelle", "ei", "micro")):
        gaps = [name for name in gaps if name != "shareCapitalCents"]
    return gaps
