"""The internal e-signature status (ESignStatus) and how provider statuses and events move it.

Pure rules, no database: the webhook processing, the reconciliation and the creation flow all ask
`next_status` whether a move applies, so the three can never disagree. The full table of events
is written down in `docs/onboarding.md`.
"""

from __future__ import annotations

from enum import StrEnum


class ESignStatus(StrEnum):
    PENDING_CREATION = "pending_creation"
    DRAFT = "draft"
    PENDING_SIGNATURE = "pending_signature"
    SIGNER_NOTIFIED = "signer_notified"
    SIGNER_OPENED = "signer_opened"
    SIGNED = "signed"
    DECLINED = "declined"
    EXPIRED = "expired"
    CANCELED = "canceled"
    INVALIDATED = "invalidated"
    ERROR = "error"


# Specification A, point 4: workspace access is redirected while the envelope is in one of these.
PENDING = frozenset({
    ESignStatus.PENDING_CREATION, ESignStatus.DRAFT, ESignStatus.PENDING_SIGNATURE,
    ESignStatus.SIGNER_NOTIFIED, ESignStatus.SIGNER_OPENED,
})
TERMINAL = frozenset({
    ESignStatus.SIGNED, ESignStatus.DECLINED, ESignStatus.EXPIRED, ESignStatus.CANCELED, ESignStatus.INVALIDATED,
})
# Order of progress of a live envelope: a late event of a lower rank never moves it back.
_RANK = {
    ESignStatus.PENDING_CREATION: 0, ESignStatus.DRAFT: 1, ESignStatus.PENDING_SIGNATURE: 2,
    ESignStatus.SIGNER_NOTIFIED: 3, ESignStatus.SIGNER_OPENED: 4,
}

# Status normalization of Specification A ("States and transitions").
_BY_PROVIDER_STATUS = {
    "draft": ESignStatus.DRAFT,
    "approval": ESignStatus.PENDING_SIGNATURE,
    "ongoing": ESignStatus.PENDING_SIGNATURE,
    "done": ESignStatus.SIGNED,
    "declined": ESignStatus.DECLINED,
    "expired": ESignStatus.EXPIRED,
    "canceled": ESignStatus.CANCELED,
    "rejected": ESignStatus.CANCELED,
}

# Subscribed provider events and the internal status each one asks for. None: the event is
# recorded and offered to further handlers but moves nothing by itself (`signer.done`: the
# request's own `signature_request.done` follows once every signer has signed).
EVENT_TARGETS: dict[str, ESignStatus | None] = {
    "signature_request.activated": ESignStatus.PENDING_SIGNATURE,
    "signer.notified": ESignStatus.SIGNER_NOTIFIED,
    "signer.link_opened": ESignStatus.SIGNER_OPENED,
    "signer.done": None,
    "signature_request.done": ESignStatus.SIGNED,
    "signer.declined": ESignStatus.DECLINED,
    "signature_request.declined": ESignStatus.DECLINED,
    "signature_request.expired": ESignStatus.EXPIRED,
    "signature_request.canceled": ESignStatus.CANCELED,
    "signer.error": ESignStatus.ERROR,
    "signer.notification_delivery_failed": ESignStatus.ERROR,
}
SUBSCRIBED_EVENTS = frozenset(EVENT_TARGETS)


def from_provider_status(provider_status: str | None) -> ESignStatus | None:
    """The internal status of a provider status; None for a status the provider never documented."""
    return _BY_PROVIDER_STATUS.get((provider_status or "").lower())


def asks_for_terminal(event_name: str) -> bool:
    """Whether the event claims a terminal status (then the provider is asked before applying it)."""
    return EVENT_TARGETS.get(event_name) in TERMINAL


def next_status(current: str, target: ESignStatus | None, *, newer: bool = True) -> ESignStatus | None:
    """The status `current` moves to when asked for `target`, or None when it stays.

    - a terminal status never moves (a late `signer.link_opened` leaves `signed`);
    - a terminal target applies from any live status (callers confirm it with the provider first);
    - `newer` is False for an event older than the last one applied: it moves nothing else;
    - `error` is left by any newer event (the envelope shows it is alive again) and is reached
      from any live status; otherwise a live status only moves forward in rank.
    """
    current = ESignStatus(current)
    if target is None or current in TERMINAL or target == current:
        return None
    if target in TERMINAL:
        return target
    if not newer:
        return None
    if ESignStatus.ERROR in (target, current):
        return target
    return target if _RANK[target] > _RANK[current] else None
