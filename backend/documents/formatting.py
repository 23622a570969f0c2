"""Typed variables: checking context values against their declared type, and French display.

`currency` values are integer cents shown as French euros (`1 234,56 €`), `date` values ISO
dates shown in words (`22 novembre 2026`), numbers with a decimal comma and grouped thousands,
booleans as `oui` / `non`. Typed values keep their Python nature (a `Currency` is an int, a
`FrenchDate` a date), so templates may still compare and compute with them.
"""

from __future__ import annotations

from datetime import date, datetime

from backend.errors import ValidationError

MONTHS = ("janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre",
          "octobre", "novembre", "décembre")
GROUP = "\u202f"  # narrow no-break space: the French thousands separator
NBSP = "\u00a0"


def group_thousands(digits: str) -> str:
    head = len(digits) % 3 or 3
    parts = [digits[:head]] + [digits[i:i + 3] for i in range(head, len(digits), 3)]
    return GROUP.join(parts)


def format_euros(cents: int) -> str:
    """Integer cents as French euros: 123456 -> `1 234,56 €`."""
    sign = "-" if cents < 0 else ""
    euros, rest = divmod(abs(int(cents)), 100)
    return f"{sign}{group_thousands(str(euros))},{rest:02d}{NBSP}€"


def format_number(value: int | float) -> str:
    """French decimal: 1234.5 -> `1 234,5`; integers stay integers."""
    if isinstance(value, bool):
        return format_boolean(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int):
        return ("-" if value < 0 else "") + group_thousands(str(abs(value)))
    whole, _, decimals = f"{abs(value):.4f}".rstrip("0").partition(".")
    sign = "-" if value < 0 else ""
    return f"{sign}{group_thousands(whole)},{decimals}" if decimals else f"{sign}{group_thousands(whole)}"


def format_date(value: date) -> str:
    """`22 novembre 2026`; the first of the month is `1er` as French writes it."""
    day = "1er" if value.day == 1 else str(value.day)
    return f"{day} {MONTHS[value.month - 1]} {value.year}"


def format_boolean(value: bool) -> str:
    return "oui" if value else "non"


class Currency(int):
    """Integer cents that display as French euros."""

    def __str__(self) -> str:
        return format_euros(self)


class FrenchDate(date):
    """A date that displays in French words."""

    def __str__(self) -> str:
        return format_date(self)


def parse_date(value: object) -> date | None:
    """An ISO date (`2026-11-22`) or date-time (its date part); None when unparsable."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if not isinstance(value, str):
        return None
    try:
        return date.fromisoformat(value[:10])
    except ValueError:
        return None


def type_problem(kind: str, value: object) -> str | None:
    """Why `value` does not fit the declared type, or None when it does."""
    if kind == "string":
        return None if isinstance(value, str) else "must be a string"
    if kind == "number":
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return None if ok else "must be a number"
    if kind == "boolean":
        return None if isinstance(value, bool) else "must be true or false"
    if kind == "currency":
        ok = isinstance(value, int) and not isinstance(value, bool)
        return None if ok else "must be an integer amount in cents"
    if kind == "date":
        return None if parse_date(value) is not None else "must be an ISO 8601 date (YYYY-MM-DD)"
    if kind == "array":
        return None if isinstance(value, list) else "must be an array"
    if kind == "object":
        return None if isinstance(value, dict) else "must be an object"
    return f"has an unknown type {kind!r}"


def typed_value(kind: str, value: object) -> object:
    """The value templates receive: currency and date wrapped so they display in French."""
    if kind == "currency":
        return Currency(value)
    if kind == "date":
        day = parse_date(value)
        return FrenchDate(day.year, day.month, day.day)
    return value


def prepare_variables(variables, context: dict) -> dict:
    """The declared variables of `context`, checked and typed.

    Missing required variables and values of the wrong type give one VALIDATION_ERROR naming
    them all. Undeclared keys are dropped: a template only ever sees what the catalog declares.
    """
    missing = [v.name for v in variables if v.required and context.get(v.name) is None]
    fields: dict[str, list[str]] = {name: ["is required"] for name in missing}
    prepared: dict[str, object] = {}
    for variable in variables:
        value = context.get(variable.name)
        if value is None:
            prepared[variable.name] = None
            continue
        problem = type_problem(variable.type, value)
        if problem:
            fields[variable.name] = [problem]
            continue
        prepared[variable.name] = typed_value(variable.type, value)
    if missing:
        raise ValidationError(f"missing required variables: {', '.join(missing)}", fields=fields,
                              missing=missing)
    if fields:
        raise ValidationError(f"invalid variables: {', '.join(sorted(fields))}", fields=fields)
    return prepared


def display(value: object) -> str:
    """How a value prints in a document (typed values carry their own French display)."""
    if value is None:
        return ""
    if isinstance(value, Currency | FrenchDate | str):
        return str(value)
    if isinstance(value, bool):
        return format_boolean(value)
    if isinstance(value, int | float):
        return format_number(value)
    if isinstance(value, list | tuple):
        return ", ".join(display(item) for item in value)
    if isinstance(value, dict):
        return ", ".join(f"{key} : {display(item)}" for key, item in value.items())
    return str(value)


def euros_filter(value: object) -> Currency:
    """`{{ line.totalCents | euros }}` for amounts nested in arrays or objects."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(f"euros expects an integer amount in cents, got {value!r}")
    return Currency(value)


def date_filter(value: object) -> FrenchDate:
    """`{{ line.deliveredOn | date_fr }}` for dates nested in arrays or objects."""
    day = parse_date(value)
    if day is None:
        raise ValidationError(f"date_fr expects an ISO date, got {value!r}")
    return FrenchDate(day.year, day.month, day.day)
