"""Whether an organization's billing identity can be printed on an invoice as it stands.

An invoice never prints a placeholder for a legal mention (API.md "Money, books and banks (wave 3):
decisions"): the legal name and the postal address of a party must be known before anything is
invoiced to it. KYB approval (`onboarding.kyb_review`) and collection (`billing.collection`)
refuse an organization whose billing identity misses one: 409 `CONFLICT`, `details.reason =
billing_identity_incomplete`, `details.missing` naming the fields (the billing profile's
`legalName`, `address.street`, `address.postalCode`, `address.city`).
"""

from __future__ import annotations

from collections.abc import Mapping

from backend.errors import Conflict
from backend.identity.models import BillingProfile, Organization

# The billing profile's columns an invoice prints for a party, and their names in the API.
REQUIRED = (("legal_name", "legalName"), ("street", "address.street"), ("postal_code", "address.postalCode"),
            ("city", "address.city"))
REASON = "billing_identity_incomplete"


def identity_gaps(profile: Mapping[str, object] | None, *, organization_legal_name: str | None) -> list[str]:
    """The API names of the fields missing from a billing profile's columns (`profile`, None
    without a profile): its legal name falls back on the organization's, as the invoice does."""
    values = dict(profile or {})
    values["legal_name"] = values.get("legal_name") or organization_legal_name
    return [name for column, name in REQUIRED if not str(values.get(column) or "").strip()]


def require_complete(gaps: list[str]) -> None:
    if gaps:
        raise Conflict("the organization's billing identity is incomplete: an invoice needs its legal name and "
                       "postal address (billing profile)", reason=REASON, missing=gaps)


def organization_identity_gaps(organization_id: str) -> list[str]:
    """`identity_gaps` of the organization's billing profile, read now."""
    organization = Organization.select(Organization.legal_name).where(Organization.id == organization_id).first()
    profile = BillingProfile.get_or_none(BillingProfile.organization == organization_id)
    columns = {column: getattr(profile, column) for column, _ in REQUIRED} if profile else None
    return identity_gaps(columns, organization_legal_name=organization.legal_name if organization else None)
