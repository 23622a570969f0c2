"""Accounts: sign-up, sign-in, magic link, password reset and change, e-mail verification.

Unknown e-mail, wrong password and blocked account give one answer (AUTH_INVALID_CREDENTIALS on
sign-in; silence on magic link and password reset). A failure's audit row commits on its own
before the error is raised, since raising rolls back the transaction it would otherwise share.

An account is only trusted once its mailbox is proven (verification link, magic link or password
reset). Until then anybody may have created it with someone else's address, so the first proof
takes the account back for the mailbox's owner: the password chosen at sign-up is dropped (unless
the link is opened in a session of the account itself, which the password's holder opened) and
every other session is revoked. Setting or dropping a password also burns every unused reset and
magic-link token of the user.
"""

from __future__ import annotations

from dataclasses import dataclass

from peewee import IntegrityError

from backend import clock
from backend.audit import record_security_event
from backend.db import transaction
from backend.email.messages import queue_email
from backend.errors import Conflict, DomainError, InvalidCredentials, ValidationError
from backend.identity import sessions
from backend.identity.models import TokenPurpose, User
from backend.identity.secrets import hash_password, needs_rehash, verify_password
from backend.identity.tokens import burn_sign_in_tokens, consume_token, issue_token


@dataclass(frozen=True)
class Client:
    """Who is calling, for the session row."""

    ip: str | None = None
    user_agent: str | None = None
    session_ttl_days: int = 7


def normalize_email(email: str) -> str:
    return email.strip().lower()


def _failed(event: str, error: DomainError, *, actor_user_id: str | None = None, **details: object) -> DomainError:
    """Commit the failure's audit row, then give back the error for the caller to raise."""
    with transaction():
        record_security_event(event, actor_user_id=actor_user_id, target_type="user",
                              target_id=actor_user_id, details=details)
    return error


def _invalid_token() -> ValidationError:
    return ValidationError("the link is invalid, expired or already used", reason="invalid_token")


def _open_session(user: User, client: Client) -> str:
    return sessions.open_session(user, ttl_days=client.session_ttl_days, ip=client.ip, user_agent=client.user_agent)


def send_email_verification(user: User) -> None:
    queue_email("email_verification", to=user.email, name=user.name,
                link_at_delivery=issue_token(user.id, TokenPurpose.EMAIL_VERIFICATION))
    record_security_event("auth.email_verification.requested", actor_user_id=user.id,
                          target_type="user", target_id=user.id)


def sign_up(*, email: str, password: str, name: str, client: Client) -> tuple[User, str]:
    """Create the account (no role yet), open its session, queue the verification e-mail."""
    email = normalize_email(email)
    password_hash = hash_password(password)  # before the transaction: Argon2id takes tens of ms
    try:
        with transaction():
            user = User.create(email=email, name=name.strip(), password_hash=password_hash)
            send_email_verification(user)
            record_security_event("auth.sign_up.success", actor_user_id=user.id, target_type="user",
                                  target_id=user.id, details={"email": email})
            return user, _open_session(user, client)
    except IntegrityError:  # unique(email)
        raise _failed("auth.sign_up.failure", Conflict("an account already uses this e-mail address"),
                      email=email, reason="email_taken") from None


def sign_in(*, email: str, password: str, client: Client) -> tuple[User, str]:
    email = normalize_email(email)
    user = User.get_or_none(User.email == email)
    matches = verify_password(user.password_hash if user else None, password)
    if user is None or not matches or user.blocked_at is not None:
        reason = "unknown_email" if user is None else ("blocked" if matches else "wrong_password")
        raise _failed("auth.sign_in.failure", InvalidCredentials("wrong e-mail or password"),
                      actor_user_id=user.id if user else None, email=email, reason=reason)
    with transaction():
        if needs_rehash(user.password_hash):
            User.update(password_hash=hash_password(password)).where(User.id == user.id).execute()
        record_security_event("auth.sign_in.success", actor_user_id=user.id, target_type="user",
                              target_id=user.id, details={"method": "password"})
        return user, _open_session(user, client)


def sign_out(*, session_id: str, user_id: str) -> None:
    with transaction():
        sessions.revoke_session(session_id)
        record_security_event("auth.sign_out.success", actor_user_id=user_id, target_type="user",
                              target_id=user_id)


def _active_user(email: str) -> User | None:
    return User.get_or_none((User.email == normalize_email(email)) & User.blocked_at.is_null())


def request_magic_link(*, email: str, browser: str) -> None:
    """E-mail a sign-in link when the account exists and is not blocked; silent otherwise. The link
    works only in `browser` (the asking browser's cookie value): a link of one's own account sent to
    someone else signs nobody in (login CSRF)."""
    user = _active_user(email)
    with transaction():
        if user is not None:
            queue_email("magic_link", to=user.email, name=user.name,
                        link_at_delivery=issue_token(user.id, TokenPurpose.MAGIC_LINK, browser=browser))
        record_security_event("auth.magic_link.requested", actor_user_id=user.id if user else None,
                              target_type="user", target_id=user.id if user else None,
                              details={"email": normalize_email(email), "sent": user is not None})


def verify_magic_link(*, token: str, browser: str | None, client: Client) -> tuple[User, str]:
    with transaction():
        user = consume_token(token, TokenPurpose.MAGIC_LINK, browser=browser)
        if user is not None:
            # Opening the link proves the mailbox, as the verification link would.
            _prove_mailbox(user, current_session_id=None, method="magic_link")
            record_security_event("auth.magic_link.success", actor_user_id=user.id, target_type="user",
                                  target_id=user.id)
            return user, _open_session(user, client)
    raise _failed("auth.magic_link.failure", _invalid_token(), reason="invalid_token")


def request_password_reset(*, email: str) -> None:
    user = _active_user(email)
    with transaction():
        if user is not None:
            queue_email("password_reset", to=user.email, name=user.name,
                        link_at_delivery=issue_token(user.id, TokenPurpose.PASSWORD_RESET))
        record_security_event("auth.password_reset.requested", actor_user_id=user.id if user else None,
                              target_type="user", target_id=user.id if user else None,
                              details={"email": normalize_email(email), "sent": user is not None})


def confirm_password_reset(*, token: str, new_password: str, current_session_id: str | None) -> None:
    """Set the new password and revoke the user's sessions (but the caller's own, if any)."""
    with transaction():
        user = consume_token(token, TokenPurpose.PASSWORD_RESET)
        if user is not None:
            _prove_mailbox(user, current_session_id=current_session_id, method="password_reset")
            _set_password(user, new_password, keep_session_id=current_session_id)
            record_security_event("auth.password_reset.success", actor_user_id=user.id, target_type="user",
                                  target_id=user.id)
            return
    raise _failed("auth.password_reset.failure", _invalid_token(), reason="invalid_token")


def change_password(*, user_id: str, session_id: str, current_password: str, new_password: str) -> None:
    """Change a signed-in user's password; every other session of the user is revoked."""
    user = User.get_by_id(user_id)
    if not verify_password(user.password_hash, current_password):
        raise _failed("auth.password_change.failure", InvalidCredentials("wrong password"), actor_user_id=user_id)
    with transaction():
        _set_password(user, new_password, keep_session_id=session_id)
        record_security_event("auth.password_change.success", actor_user_id=user_id, target_type="user",
                              target_id=user_id)


def _set_password(user: User, password: str | None, *, keep_session_id: str | None) -> None:
    """Set (None: drop) the password, revoke the user's other sessions, burn its sign-in tokens."""
    password_hash = hash_password(password) if password is not None else None
    User.update(password_hash=password_hash, updated_at=clock.now()).where(User.id == user.id).execute()
    sessions.revoke_user_sessions(user.id, keep_session_id=keep_session_id)
    burn_sign_in_tokens(user.id)


def _prove_mailbox(user: User, *, current_session_id: str | None, method: str) -> None:
    """The first proof of the mailbox of an unverified account: mark it verified and take the
    account back from whoever created it (see the module's docstring). Verified: nothing to do."""
    if user.email_verified_at is not None:
        return
    user.email_verified_at = clock.now()
    User.update(email_verified_at=user.email_verified_at).where(User.id == user.id).execute()
    own_session = current_session_id if sessions.belongs_to(current_session_id, user.id) else None
    password_kept = own_session is not None and user.password_hash is not None
    if password_kept:
        sessions.revoke_user_sessions(user.id, keep_session_id=own_session)
    else:
        _set_password(user, None, keep_session_id=own_session)
        user.password_hash = None
    record_security_event("auth.email_verification.first_proof", actor_user_id=user.id, target_type="user",
                          target_id=user.id, details={"method": method, "passwordKept": password_kept})


def confirm_email_verification(*, token: str, current_session_id: str | None = None) -> User:
    with transaction():
        user = consume_token(token, TokenPurpose.EMAIL_VERIFICATION)
        if user is not None:
            _prove_mailbox(user, current_session_id=current_session_id, method="verification_link")
            record_security_event("auth.email_verification.success", actor_user_id=user.id,
                                  target_type="user", target_id=user.id)
            return user
    raise _failed("auth.email_verification.failure", _invalid_token(), reason="invalid_token")
