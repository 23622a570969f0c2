"""Single-use, expiring tokens sent by e-mail: magic link, password reset, e-mail verification.

Consuming is one UPDATE ... WHERE used_at IS NULL AND expires_at > now: of two concurrent uses
of the same token exactly one wins, and a used or expired token can never be replayed.
A token exists only once its e-mail is delivered: `issue_token` creates the row without a digest,
and the deliver actor has `mint_token` create the token and store its digest (backend.email.messages).
"""

from __future__ import annotations

from datetime import timedelta

from backend import clock
from backend.email.messages import LinkAtDelivery
from backend.identity.models import AuthToken, TokenPurpose, User
from backend.identity.secrets import new_token, token_digest

TOKEN_TTL = {
    TokenPurpose.MAGIC_LINK: timedelta(minutes=15),
    TokenPurpose.PASSWORD_RESET: timedelta(hours=1),
    TokenPurpose.EMAIL_VERIFICATION: timedelta(hours=48),
}


AUTH_TOKEN_LINK = "auth_token"  # noqa: S105 (the `LinkAtDelivery` kind of these rows, not a secret)


def issue_token(user_id: str, purpose: TokenPurpose, *, browser: str | None = None) -> LinkAtDelivery:
    """A token for `user_id`, valid from now, for the caller to e-mail (`queue_email`'s
    `link_at_delivery`): the token itself is minted at delivery. With `browser` (the asking
    browser's cookie), only a request bearing that cookie may consume it."""
    row = AuthToken.create(
        user=user_id,
        purpose=purpose,
        browser_hash=token_digest(browser) if browser else None,
        expires_at=clock.now() + TOKEN_TTL[purpose],
    )
    return LinkAtDelivery(AUTH_TOKEN_LINK, str(row.id))


def mint_token(token_id: int) -> tuple[TokenPurpose, str] | None:
    """A new token for the row `token_id`, whose e-mail is being delivered: its digest replaces any
    earlier one (only the last link sent works). None when the row was used, burned or expired."""
    token = new_token()
    rows = list(
        AuthToken.update(token_hash=token_digest(token))
        .where(AuthToken.id == token_id, AuthToken.used_at.is_null(), AuthToken.expires_at > clock.now())
        .returning(AuthToken.purpose)
        .execute()
    )
    return (TokenPurpose(rows[0].purpose), token) if rows else None


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
