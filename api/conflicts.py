"""Concurrent changes that lose a race answer 409 CONFLICT, never 500.

Services take their row locks in one order (printing: the reservation, then its order; several
rows: sorted by id), so deadlocks should not happen; a deadlock, a serialization failure or a
unique violation that still does (`backend.db.is_concurrency_conflict`) is handled here, for every
route at once:

- `retrying(resource)` wraps each responder of a resource: a responder that fails with such an
  error, outside any open transaction (its own was rolled back), is run once more, transparently
  (the JSON body is kept on the request, so it is read again). A multipart upload, whose body was
  streamed, is not run again.
- both log the route template, never the path, which may hold a token (an invitation's);
- `handle_database_error`, the error handler of `peewee.DatabaseError`: such an error that still
  happens answers 409 `CONFLICT` with `details.reason = concurrent_update` (the client may retry);
  any other database error is an uncaught 500.
"""

from __future__ import annotations

import functools
import inspect

import falcon

from api.errors import _answer, handle_uncaught
from backend.db import in_transaction, is_concurrency_conflict, sqlstate
from backend.logs import get_logger

log = get_logger("api.conflicts")
RESPONDER_PREFIX = "on_"


def _replayable(req: falcon.Request) -> bool:
    return not (req.content_type or "").lower().startswith("multipart/")


def _retry_once(responder):
    @functools.wraps(responder)
    def run(req, resp, *args, **kwargs):
        try:
            return responder(req, resp, *args, **kwargs)
        except Exception as exc:
            if not is_concurrency_conflict(exc) or in_transaction() or not _replayable(req):
                raise
            log.warning("concurrent change lost a race: run once more", extra={"fields": {
                "method": req.method, "route": req.uri_template, "sqlstate": sqlstate(exc)}})
        return responder(req, resp, *args, **kwargs)

    run.retries_conflicts = True
    return run


def retrying(resource: object) -> object:
    """Wrap every responder (`on_get`, `on_post_item`, ...) of `resource` once; returns it."""
    for name, member in inspect.getmembers(resource, inspect.ismethod):
        if name.startswith(RESPONDER_PREFIX) and not getattr(member, "retries_conflicts", False):
            setattr(resource, name, _retry_once(member))
    return resource


def handle_database_error(req, resp, ex: Exception, params) -> None:
    if not is_concurrency_conflict(ex):
        handle_uncaught(req, resp, ex, params)
        return
    log.warning("concurrent change lost a race twice: 409", extra={"fields": {
        "method": req.method, "route": req.uri_template, "sqlstate": sqlstate(ex)}})
    _answer(resp, "CONFLICT", "a concurrent change got there first; try again", {"reason": "concurrent_update"})


def register(app: falcon.App) -> None:
    from peewee import DatabaseError

    app.add_error_handler(DatabaseError, handle_database_error)
