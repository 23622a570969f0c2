"""Single-use, expiring tokens sent by e-mail: magic link, password reset, e-mail verification.

Consuming is one UPDATE ... WHERE used_at IS NULL AND expires_at > now: of two concurrent uses
of the same token exactly one wins, and a used or expired token can never be replayed.
"""

from __future__ import annotations

from datetime import timedelta

from backend import clock
from backend.identity.models import AuthToken, TokenPurpose, User
from backend.identity.secrets import new_token, token_digest

TOKEN_TTL = {
    TokenPurpose.MAGIC_LINK: timedelta(minutes=15),
    TokenPurpose.PASSWORD_RESET: timedelta(hours=1),
    TokenPurpose.EMAIL_VERIFICATION: timedelta(hours=48),
}


def issue_token(user_id: str, purpose: TokenPurpose, *, browser: str | None = None) -> str:
    """A new token for `user_id`; the caller e-mails it. Only its digest is stored; with `browser`
    (the asking browser's cookie), only a request bearing that cookie may consume it."""
    token = new_token()
    AuthToken.create(
        user=user_id,
        purpose=purpose,
        token_hash=token_digest(token),
        browser_hash=token_digest(browser) if browser else None,
        expires_at=clock.now() + TOKEN_TTL[purpose],
    )
    return token


def consume_token(token: str, purpose: TokenPurpose, *, browser: str | None = None) -> User | None:
    """Mark the token used and return its (unblocked) user; None when unknown, used, expired, or
    bound to another browser than `browser` (a bound token stays usable by its own)."""
    now = clock.now()
    rows = list(
        AuthToken.update(used_at=now)
        .where(
            AuthToken.token_hash == token_digest(token),
            AuthToken.purpose == purpose,
            AuthToken.used_at.is_null(),
            AuthToken.expires_at > now,
            AuthToken.browser_hash.is_null() | (AuthToken.browser_hash == token_digest(browser or "")),
        )
        .returning(AuthToken.user)
        .execute()
    )
    if not rows:
        return None
    return User.get_or_none((User.id == rows[0].user_id) & User.blocked_at.is_null())


def burn_sign_in_tokens(user_id: str) -> int:
    """Mark every unused magic-link and reset token of the user as used (its password changed:
    a link sent before must not sign in or set a password any more); returns how many."""
    return (
        AuthToken.update(used_at=clock.now())
        .where(
            AuthToken.user == user_id,
            AuthToken.purpose.in_([TokenPurpose.MAGIC_LINK, TokenPurpose.PASSWORD_RESET]),
            AuthToken.used_at.is_null(),
        )
        .execute()
    )
