"""Test factories of identity: users, organizations with a Luhn-valid SIREN, memberships and
signed-in request headers. Plain functions: call them inside a test (its transaction)."""

from __future__ import annotations

import itertools
import random
import uuid

from stdnum.luhn import calc_check_digit

from backend import clock
from backend.identity.memberships import grant_role
from backend.identity.models import BillingProfile, Membership, Organization, User
from backend.identity.permissions import ROLE_BY_ACTOR_TYPE
from backend.identity.secrets import hash_password
from backend.identity.sessions import open_session

DEFAULT_PASSWORD = "correct-horse-battery"
_sequence = itertools.count(1)


def random_siren() -> str:
    """A Luhn-valid SIREN, different at each call."""
    prefix = f"{random.randrange(10_000_000, 99_999_999):08d}"
    return prefix + calc_check_digit(prefix)


def siret_for(siren: str, establishment: str = "0001") -> str:
    """A Luhn-valid SIRET of `siren` (a 4-digit establishment number and the check digit)."""
    prefix = siren + establishment
    return prefix + calc_check_digit(prefix)


def make_user(**overrides) -> User:
    """A user with a verified e-mail and `DEFAULT_PASSWORD` (pass `password=` to change it)."""
    number = next(_sequence)
    password = overrides.pop("password", DEFAULT_PASSWORD)
    values = {
        "email": f"user-{number}-{uuid.uuid4().hex[:8]}@example.com",
        "name": f"Utilisateur {number}",
        "password_hash": hash_password(password) if password else None,
        "roles": [],
        "email_verified_at": clock.now(),
    }
    values.update(overrides)
    return User.create(**values)


def make_admin(**overrides) -> User:
    return make_user(roles=["admin"], **overrides)


def make_organization(actor_type: str = "industrial", kyb_status: str | None = None, **overrides) -> Organization:
    siren = overrides.pop("siren", None) or random_siren()
    values = {
        "id": f"{actor_type}:{siren}",
        "actor_type": actor_type,
        "siren": siren,
        "legal_name": f"Société {siren}",
        "kyb_status": kyb_status,
    }
    values.update(overrides)
    return Organization.create(**values)


def add_billing_profile(organization: Organization, **overrides) -> BillingProfile:
    """A complete billing profile (legal name, SIRET of its SIREN, postal address, signer on the
    registry extract): what an onboarded organization has, and what invoicing it needs."""
    values = {
        "organization": organization.id, "legal_name": f"{organization.legal_name} SAS",
        "siret": siret_for(organization.siren), "vat_number": None, "street": "12 rue des Lilas",
        "postal_code": "74000", "city": "Annecy", "country": "FR", "iban": None, "signer_first_name": "Alice",
        "signer_last_name": "Martin", "signer_email": "alice@example.com", "signer_phone": "+33612345678",
        "signer_on_registry_extract": True,
    }
    values.update(overrides)
    return BillingProfile.create(**values)


def add_member(user: User, organization: Organization, role: str = "manager") -> Membership:
    """Make `user` a member and give it the organization's role, as joining does."""
    membership = Membership.create(user=user.id, organization=organization.id, role=role)
    grant_role(user.id, ROLE_BY_ACTOR_TYPE[organization.actor_type])
    return membership


def session_cookie(user: User, organization: Organization | None = None) -> str:
    """A live session token for `user` (active organization: `organization`, else its first)."""
    return open_session(user, ttl_days=7, active_organization_id=organization.id if organization else None)


def signed_in(user: User, organization: Organization | None = None) -> dict[str, str]:
    """Headers of a request by `user`: `client.simulate_get(path, headers=signed_in(user))`."""
    return {"Cookie": f"auth.session_token={session_cookie(user, organization)}"}
