"""The security audit log of Specification A: an append-only table of sensitive actions.

`record_security_event` writes one row in the caller's transaction, so an action and its trace
commit (or roll back) together. IP, user agent and request id come from the request context the
policy middleware binds (`bind_request_context`); outside a request (CLI, actors) they are None.
Details pass through the log redaction, so a key named like a secret is never stored.
"""

from __future__ import annotations

from contextvars import ContextVar
from datetime import datetime
from typing import NamedTuple

from peewee import BigAutoField, CharField
from playhouse.postgres_ext import BinaryJSONField

from backend import clock
from backend.context import current_request_id
from backend.listing import ListParams, Page, paginate
from backend.logs import redact
from backend.model import BaseModel, created_at_field


class RequestContext(NamedTuple):
    """A named tuple, not a frozen dataclass: one is made per request, and a frozen dataclass's
    `__init__` (`object.__setattr__` per field) cost more than the rest of the binding."""

    ip: str | None
    user_agent: str | None


_request_context: ContextVar[RequestContext | None] = ContextVar("audit_request_context", default=None)


def bind_request_context(ip: str | None, user_agent: str | None):
    """Set the caller's IP and user agent for this request; returns the token to reset."""
    return _request_context.set(RequestContext(ip=ip, user_agent=(user_agent or None) and user_agent[:400]))


def reset_request_context(token) -> None:
    _request_context.reset(token)


class SecurityEvent(BaseModel):
    id = BigAutoField()
    occurred_at = created_at_field()
    event = CharField(max_length=80)
    actor_user_id = CharField(max_length=36, null=True)  # no foreign key: the trail outlives users
    target_type = CharField(max_length=40, null=True)
    target_id = CharField(max_length=120, null=True)
    ip = CharField(max_length=64, null=True)
    user_agent = CharField(max_length=400, null=True)
    request_id = CharField(max_length=128, null=True)
    details = BinaryJSONField(default=dict)

    class Meta:
        table_name = "security_audit_event"


def record_security_event(
    event: str,
    *,
    actor_user_id: str | None,
    target_type: str | None = None,
    target_id: str | None = None,
    details: dict | None = None,
) -> None:
    """Append one audit row (in the caller's transaction); never pass a secret in `details`."""
    context = _request_context.get() or RequestContext(None, None)
    SecurityEvent.insert(
        occurred_at=clock.now(),
        event=event,
        actor_user_id=actor_user_id,
        target_type=target_type,
        target_id=target_id,
        ip=context.ip,
        user_agent=context.user_agent,
        request_id=current_request_id(),
        details=redact(details or {}),
    ).execute()


def event_family_filter(family: str):
    """Rows of `family`: the exact event or any event below it (`auth.sign_in` matches
    `auth.sign_in.success` and `auth.sign_in.failure`)."""
    return (SecurityEvent.event == family) | SecurityEvent.event.startswith(family + ".")


def audit_filters(
    *, family: str | None, actor_user_id: str | None, target_id: str | None,
    since: datetime | None, until: datetime | None,
) -> list:
    conditions = []
    if family:
        conditions.append(event_family_filter(family))
    if actor_user_id:
        conditions.append(SecurityEvent.actor_user_id == actor_user_id)
    if target_id:
        conditions.append(SecurityEvent.target_id == target_id)
    if since:
        conditions.append(SecurityEvent.occurred_at >= since)
    if until:
        conditions.append(SecurityEvent.occurred_at < until)
    return conditions


SECURITY_EVENT_SORTS = {"occurredAt": SecurityEvent.occurred_at, "event": SecurityEvent.event}


def list_security_events(params: ListParams, **filters) -> Page:
    """`GET /api/admin/audit/security`: filtered by `audit_filters`, newest first by default."""
    query = SecurityEvent.select()
    conditions = audit_filters(**filters)
    if conditions:
        query = query.where(*conditions)
    return paginate(
        query, params,
        sorts=SECURITY_EVENT_SORTS,
        default_sort="occurredAt", tiebreaker=SecurityEvent.id,
        search_columns=(SecurityEvent.event, SecurityEvent.target_id, SecurityEvent.ip),
    )
