"""How the API writes JSON: every `resp.media` (the `{ok, data}` envelope, errors, the OpenAPI
document) goes through `dumps`, installed once as Falcon's JSON handler by `create_app`.

orjson (much faster than the standard library on large answers, such as a printer's whole order
list), with the standard library's semantics: UTF-8, non-ASCII characters as they are (never `\\u`
escapes), keys in insertion order, and a value JSON has no type for refused with a `TypeError`
(a `datetime`, a `date`, a `Decimal`, a dataclass: schemas dump those to strings or numbers
first). What orjson itself refuses but the standard library wrote (integers past 64 bits, keys
that are not strings, tuple subclasses, nesting past 254 levels) is written by the standard
library, so no answer that was sent before fails now. Separators are compact (`{"a":1,"b":[1,2]}`).

Two differences remain, both for values no schema produces: orjson writes a `UUID` or an `Enum`
member (the standard library refused them), and `NaN` or an infinity as `null` (the standard
library wrote `NaN`, which is not JSON). Request bodies are read by `backend.json_input`.
"""

from __future__ import annotations

import json

import falcon
import orjson
from falcon.media import JSONHandler

# datetime, date, time and dataclasses go to `default`, which is absent: orjson refuses them.
_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
_STANDARD = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def dumps(obj: object) -> bytes:
    """`obj` as UTF-8 JSON; TypeError (or ValueError for a circular reference) when it has a
    value JSON cannot hold, as `json.dumps` would."""
    try:
        return orjson.dumps(obj, option=_OPTIONS)
    except orjson.JSONEncodeError:
        # What orjson refuses: the standard library writes it, or raises its own error.
        return _STANDARD.encode(obj).encode()


def install(app: falcon.App) -> None:
    """Make `dumps` the app's JSON serializer (answers only; bodies are read by `api.requests`)."""
    app.resp_options.media_handlers[falcon.MEDIA_JSON] = JSONHandler(dumps=dumps)
