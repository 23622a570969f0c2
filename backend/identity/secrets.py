"""Passwords (Argon2id) and random tokens (stored only as SHA-256 digests).

The Argon2 costs are a process setting: `backend.runtime.boot` applies the configured ones
(`use_costs`) once; before that, argon2-cffi's defaults apply (RFC 9106 low-memory profile).
"""

from __future__ import annotations

import hashlib
import secrets
from functools import lru_cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

TOKEN_BYTES = 32
_costs: tuple[int, int, int] | None = None  # (time cost, memory cost in KiB, parallelism)


def use_costs(*, time_cost: int, memory_cost_kib: int, parallelism: int) -> None:
    """The Argon2 costs of new hashes and of `needs_rehash` in this process (called at boot)."""
    global _costs
    _costs = (time_cost, memory_cost_kib, parallelism)


@lru_cache(maxsize=4)
def _hasher(time_cost: int, memory_cost: int, parallelism: int) -> PasswordHasher:
    return PasswordHasher(time_cost=time_cost, memory_cost=memory_cost, parallelism=parallelism)


def _current_hasher() -> PasswordHasher:
    if _costs is None:
        return PasswordHasher()  # argon2-cffi defaults: Argon2id, RFC 9106 low-memory profile
    return _hasher(*_costs)


def hash_password(password: str) -> str:
    return _current_hasher().hash(password)


# Verified against when the e-mail is unknown, so an unknown address costs the same time as a
# wrong password and the answer's timing does not tell whether the account exists.
@lru_cache(maxsize=1)
def _decoy_hash() -> str:
    return hash_password(secrets.token_urlsafe(16))


def verify_password(password_hash: str | None, password: str) -> bool:
    """True when `password` matches; always does one Argon2 verification."""
    try:
        return _current_hasher().verify(password_hash or _decoy_hash(), password) and password_hash is not None
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def needs_rehash(password_hash: str) -> bool:
    """True when the hash was made with other cost settings than those in force."""
    return _current_hasher().check_needs_rehash(password_hash)


def new_token() -> str:
    """A URL-safe random token of 32 bytes (what the client holds; only its digest is stored)."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
