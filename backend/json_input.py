"""JSON from outside (request bodies, signed webhooks), parsed with bounds checked first.

`loads` refuses, with a VALIDATION_ERROR and before any recursive parsing: nesting deeper than
`MAX_DEPTH` (1,000 levels of `[` would otherwise reach Python's recursion limit in the decoder
or in the schema that walks the result), and NUL characters in strings (PostgreSQL cannot store
them in text). The depth is measured without recursion: escapes and string contents are removed
by regular expressions, then the brackets left are counted.
"""

from __future__ import annotations

import itertools
import json
import re

from backend.errors import ValidationError

MAX_DEPTH = 64
_ESCAPE = re.compile(rb"\\.", re.S)
_STRING = re.compile(rb'"[^"]*"')
_NOT_STRUCTURE = bytes(c for c in range(256) if c not in b'"[]{}')
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def nesting_depth(raw: bytes) -> int:
    """The deepest `[`/`{` nesting of a JSON text, counted outside strings."""
    unescaped = _ESCAPE.sub(b"", raw) if b"\\" in raw else raw
    # Adjacent quotes first, in C (empty strings, and two strings with nothing between them: what is
    # left of a list of ids): what they held stays between quotes, for `_STRING`.
    structure = _STRING.sub(b"", unescaped.translate(None, _NOT_STRUCTURE).replace(b'""', b""))
    return max(itertools.accumulate(_STEP.get(c, 0) for c in structure), default=0)  # an unclosed string leaves a quote


def loads(raw: bytes, *, what: str = "the body") -> object:
    if nesting_depth(raw) > MAX_DEPTH:
        raise ValidationError(f"{what} nests deeper than {MAX_DEPTH} levels")
    try:
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise ValidationError(f"{what} is not valid JSON", reason=str(exc)[:200]) from None
    if b"\\u0000" in raw.lower() and _has_nul(value):
        raise ValidationError(f"{what} contains a NUL character (\\u0000), which text cannot hold")
    return value


def _has_nul(value: object) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_nul(v) for v in value)
    return False
