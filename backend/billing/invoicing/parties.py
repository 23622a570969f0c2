"""The parties printed on an invoice, snapshotted when it is issued.

An organization party comes from its billing profile (legal name, SIRET, VAT number, billing
address) with the organization's own legal name and SIREN as fallbacks; the platform party comes
from the `PLATFORM_LEGAL_*` variables. A missing value never blocks issuing (spec C: documents use
readable fallback values): it is written as `non renseigné`, and `complete` says whether a value
was missing, so the PDF and the e-invoicing flow can tell.
"""

from __future__ import annotations

from peewee import JOIN

from backend.config import Config
from backend.identity.models import BillingProfile, Organization

NOT_PROVIDED = "non renseigné"
PLATFORM_FALLBACK_NAME = "Vitrine (raison sociale non renseignée)"


def platform_party(config: Config) -> dict:
    siret = config.platform_legal_siret
    values = {
        "organizationId": None,
        "legalName": config.platform_legal_company_name,
        "siren": siret[:9] if siret else None,
        "siret": siret,
        "vatNumber": config.platform_legal_vat_number,
        "street": config.platform_legal_street,
        "postalCode": config.platform_legal_postal_code,
        "city": config.platform_legal_city,
        "country": config.platform_legal_country or "FR",
        "email": config.platform_legal_email,
        "iban": config.platform_legal_iban,
        "legalForm": config.platform_legal_form,
        "shareCapitalCents": config.platform_share_capital_cents,
        "registration": config.platform_registration,
    }
    party = _with_fallbacks(values, name_fallback=config.platform_legal_company_name or PLATFORM_FALLBACK_NAME)
    # The platform's option for VAT on debits, frozen with its identity: its invoices print it.
    return {**party, "vatOnDebits": config.platform_vat_on_debits}


# The billing profile's columns a party is made of (`party_of`), for a caller reading them itself.
PROFILE_COLUMNS = ("legal_name", "siret", "vat_number", "street", "postal_code", "city", "country", "iban",
                   "legal_form", "share_capital_cents", "registration")


def organization_party(organization_id: str) -> dict:
    """The organization's billing identity; its billing profile when there is one."""
    row = (
        Organization.select(Organization, BillingProfile)
        .join(BillingProfile, JOIN.LEFT_OUTER, on=BillingProfile.organization == Organization.id, attr="profile")
        .where(Organization.id == organization_id)
        .first()
    )
    if row is None:
        raise LookupError(f"organization {organization_id} not found")
    profile = getattr(row, "profile", None)
    return party_of(organization_id=row.id, legal_name=row.legal_name, siren=row.siren,
                    profile={name: getattr(profile, name) for name in PROFILE_COLUMNS} if profile else None)


def party_of(*, organization_id: str, legal_name: str | None, siren: str | None, profile: dict | None) -> dict:
    """The party of an organization (its legal name and SIREN) and its billing profile's
    `PROFILE_COLUMNS` (None without a profile)."""
    has_profile = profile is not None and profile["siret"] is not None
    values = {
        "organizationId": organization_id,
        "legalName": (profile["legal_name"] if has_profile else None) or legal_name,
        "siren": siren,
        "siret": profile["siret"] if has_profile else None,
        "vatNumber": profile["vat_number"] if has_profile else None,
        "street": profile["street"] if has_profile else None,
        "postalCode": profile["postal_code"] if has_profile else None,
        "city": profile["city"] if has_profile else None,
        "country": (profile["country"] if has_profile else None) or "FR",
        "email": None,
        # The account its money is paid into (a payout, a refund): the payee of its documents (BT-84).
        "iban": profile.get("iban") if has_profile else None,
        # The company mentions (Code de commerce, art. R123-237), None until the profile gives them.
        "legalForm": profile.get("legal_form") if has_profile else None,
        "shareCapitalCents": profile.get("share_capital_cents") if has_profile else None,
        "registration": profile.get("registration") if has_profile else None,
    }
    return _with_fallbacks(values, name_fallback=legal_name)


_REQUIRED = ("siret", "street", "postalCode", "city")


def _with_fallbacks(values: dict, *, name_fallback: str) -> dict:
    complete = bool(values["legalName"]) and all(values[k] for k in _REQUIRED)
    party = dict(values)
    party["legalName"] = values["legalName"] or name_fallback
    for key in _REQUIRED:
        party[key] = values[key] or NOT_PROVIDED
    party["complete"] = complete
    return party
