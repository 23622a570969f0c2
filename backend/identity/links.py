"""The single-use links identity e-mails carry, minted by the `deliver_email` actor as it sends
(`backend.email.messages.deliver_email`'s `mint_link`; docs/identity.md "E-mail")."""

from __future__ import annotations

from backend.email.messages import public_link
from backend.identity.invitations import INVITATION_LINK, mint_invitation_token
from backend.identity.models import TokenPurpose
from backend.identity.tokens import AUTH_TOKEN_LINK, mint_token

# The front-end pages (and the API route) each purpose's link opens.
LINK_PATHS = {
    TokenPurpose.MAGIC_LINK: "/api/auth/magic-link/verify",
    TokenPurpose.PASSWORD_RESET: "/reset-password",
    TokenPurpose.EMAIL_VERIFICATION: "/verify-email",
}


def mint_link(kind: str, ref: str) -> str | None:
    """The link of a new token for the row `ref` names; None when that row may no longer have one."""
    if kind == AUTH_TOKEN_LINK:
        minted = mint_token(int(ref))
        return None if minted is None else public_link(LINK_PATHS[minted[0]], token=minted[1])
    if kind == INVITATION_LINK:
        token = mint_invitation_token(ref)
        return None if token is None else public_link(f"/invitations/{token}")
    raise ValueError(f"no link of kind {kind!r}")
