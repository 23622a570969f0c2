"""What the company registry decides in KYB: whether the signer is "on the registry extract".

The applicant no longer says so (a client's `signer.onRegistryExtract` is ignored): when a billing
profile is saved and when onboarding starts, the signer is matched against the representatives
the registry lists (`registry_names.py`), using the cached extract (`registry_cache.py`).

- Matched: the signer is on the extract; no delegation proof is needed.
- Not matched (another person, a homonym with another given name, a legal person as
  representative): the delegation documents are required, whatever the client said.
- The registry answered that it does not know the SIREN: onboarding is refused (409,
  `siren_unknown_to_registry`); a ceased company too (409, `company_ceased`).
- The registry could not answer: onboarding still starts, with `registryChecked: false` on the
  envelope and the delegation documents required (the safe side); an admin refresh of the SIREN
  later (`refresh_company`) re-checks the latest envelope of every organization of that SIREN not
  approved yet, which can lift the requirement.

Saving a billing profile also pre-fills its legal form from the extract (`prefilled`).

The decision is recorded on the envelope (`registry_checked`, `registry_check`: the
representative matched with its role, the extract's date, and warnings for the reviewer when the
legal name or the head-office postcode differ from the registry's, which never refuse).
"""

from __future__ import annotations

from dataclasses import dataclass

from backend import clock
from backend.audit import record_security_event
from backend.db import transaction
from backend.errors import Conflict
from backend.identity.models import BillingProfile, KybStatus, Organization
from backend.identity.organizations import BILLING_EDITORS, billing_profile_of, organization_for, put_billing_profile
from backend.identity.principal import Principal
from backend.logs import get_logger
from backend.onboarding.legal_forms import legal_form_of
from backend.onboarding.models import RegistryCompany, SignatureRequest
from backend.onboarding.registry import CompanyRegistry, CompanyState, RegistryUnavailable
from backend.onboarding.registry_cache import company_extract, fetch_company, representatives_of
from backend.onboarding.registry_names import legal_names_differ, matching_representative
from backend.onboarding.status import ESignStatus

log = get_logger("registry")


@dataclass(frozen=True)
class Signer:
    """What the billing profile says about the company and its signer."""

    first_name: str
    last_name: str
    legal_name: str
    postal_code: str

    @classmethod
    def of_profile(cls, profile: BillingProfile) -> Signer:
        return cls(profile.signer_first_name, profile.signer_last_name, profile.legal_name, profile.postal_code)


@dataclass(frozen=True)
class RegistryDecision:
    on_extract: bool  # the signer is a listed representative of an active or ceased company
    checked: bool  # the registry answered
    check: dict | None  # what is recorded on the envelope (`registry_check`; None before the registry was read)

    @classmethod
    def of_envelope(cls, envelope: SignatureRequest) -> RegistryDecision:
        """The decision an envelope recorded (a relaunch carries it to the new envelope)."""
        return cls(envelope.signer_on_registry_extract, envelope.registry_checked, envelope.registry_check)

    @property
    def state(self) -> str | None:
        return (self.check or {}).get("state")


def check_signer(siren: str, signer: Signer, *, registry: CompanyRegistry, cache_days: int) -> RegistryDecision:
    """The registry's decision about `signer` of the company `siren` (never raises for the registry)."""
    try:
        company = company_extract(siren, registry=registry, cache_days=cache_days)
    except RegistryUnavailable as exc:
        log.warning("company registry unavailable: delegation documents required", extra={"fields": {
            "siren": siren, "error": exc.message}})
        return RegistryDecision(False, False, {"reason": "registry_unavailable", "message": exc.message,
                                               "checked_at": clock.iso(clock.now())})
    return decision_of(company, signer)


def decision_of(company: RegistryCompany, signer: Signer) -> RegistryDecision:
    base = {"state": company.state, "fetched_at": clock.iso(company.fetched_at),
            "extract_date": (company.registry_updated_on or company.fetched_at.date()).isoformat(),
            "signer": {"first_name": signer.first_name, "last_name": signer.last_name}}
    if company.state == CompanyState.UNKNOWN:
        return RegistryDecision(False, True, {**base, "reason": "siren_unknown_to_registry", "representative": None,
                                              "warnings": []})
    representative = matching_representative(signer.first_name, signer.last_name, representatives_of(company))
    warnings = []
    if legal_names_differ(signer.legal_name, company.legal_name):
        warnings.append({"code": "legal_name_differs", "ours": signer.legal_name, "registry": company.legal_name})
    if company.postal_code and signer.postal_code.replace(" ", "") != company.postal_code:
        warnings.append({"code": "postal_code_differs", "ours": signer.postal_code, "registry": company.postal_code})
    return RegistryDecision(representative is not None, True, {
        **base, "reason": None if representative else "signer_not_listed",
        "representative": {"first_names": representative.first_names, "last_name": representative.last_name,
                           "role": representative.role} if representative else None,
        "warnings": warnings})


def refuse_unregistrable(decision: RegistryDecision) -> None:
    """Onboarding of a SIREN the registry does not know, or of a ceased company, is refused."""
    if decision.checked and decision.state == CompanyState.UNKNOWN:
        raise Conflict("the company registry does not know this SIREN", reason="siren_unknown_to_registry")
    if decision.checked and decision.state == CompanyState.CEASED:
        raise Conflict("the company registry lists this company as ceased", reason="company_ceased")


def put_checked_billing_profile(*, principal: Principal, organization_id: str, profile: dict,
                                registry: CompanyRegistry, cache_days: int) -> BillingProfile:
    """Save the billing profile with `onRegistryExtract` as the registry says (the client's value
    is ignored); the registry is asked before the profile's transaction opens. When it cannot
    answer, a profile keeping its signer keeps the registry's earlier answer (an outage must not
    reopen an approved KYB); a new signer counts as not on the extract."""
    organization = organization_for(principal, organization_id, membership_roles=BILLING_EDITORS)
    signer = Signer(profile["signer"]["firstName"].strip(), profile["signer"]["lastName"].strip(),
                    profile["legalName"].strip(), profile["address"]["postalCode"].strip())
    decision = check_signer(organization.siren, signer, registry=registry, cache_days=cache_days)
    on_extract = decision.on_extract
    before = billing_profile_of(organization.id)
    if not decision.checked and before is not None and (before.signer_first_name, before.signer_last_name) == (
            signer.first_name, signer.last_name):
        on_extract = before.signer_on_registry_extract
    return put_billing_profile(principal=principal, organization_id=organization_id,
                               profile=prefilled(profile, before, organization.siren) if decision.checked else profile,
                               signer_on_registry_extract=on_extract)


def prefilled(profile: dict, before: BillingProfile | None, siren: str) -> dict:
    """`profile` with its legal form taken from the registry's extract of `siren` (just read, or
    fresh in the cache) when the client leaves it out and none is stored yet (a legal form given,
    or stored, is kept). The
    directory answers no share capital and no registry city: those stay the organization's to
    enter."""
    if "legalForm" in profile or (before is not None and before.legal_form):
        return profile
    company = RegistryCompany.get_or_none(RegistryCompany.siren == siren)
    form = legal_form_of(company.legal_category) if company is not None else None
    return {**profile, "legalForm": form} if form else profile


def refresh_company(*, siren: str, registry: CompanyRegistry, actor_user_id: str) -> RegistryCompany:
    """Ask the registry again (503 `REGISTRY_UNAVAILABLE` when it cannot answer), then re-check the
    latest envelope of each organization of that SIREN whose KYB is not approved yet."""
    company = fetch_company(siren, registry=registry)
    with transaction():
        rechecked = [_recheck(organization, company) for organization in
                     Organization.select().where(Organization.siren == siren,
                                                 Organization.kyb_status.is_null() | (
                                                     Organization.kyb_status != KybStatus.APPROVED))
                     .order_by(Organization.id).for_update()]
        record_security_event("registry.company.refreshed", actor_user_id=actor_user_id, target_type="siren",
                              target_id=siren, details={"state": company.state,
                                                        "rechecked": [r for r in rechecked if r]})
    return company


def _recheck(organization: Organization, company: RegistryCompany) -> str | None:
    envelope = (SignatureRequest.select().where(SignatureRequest.organization == organization.id,
                                                SignatureRequest.status != ESignStatus.INVALIDATED)
                .order_by(SignatureRequest.created_at.desc(), SignatureRequest.id.desc()).first())
    profile = billing_profile_of(organization.id)
    if envelope is None or profile is None:
        return None
    decision = decision_of(company, Signer.of_profile(profile))
    SignatureRequest.update(signer_on_registry_extract=decision.on_extract, registry_checked=True,
                            registry_check=decision.check, updated_at=clock.now()).where(
        SignatureRequest.id == envelope.id).execute()
    BillingProfile.update(signer_on_registry_extract=decision.on_extract).where(
        BillingProfile.organization == organization.id).execute()
    return envelope.id


def registry_view(organization: Organization) -> dict:
    """For the admin organization detail: the cached extract of its SIREN and what its latest
    envelope recorded."""
    envelope = (SignatureRequest.select().where(SignatureRequest.organization == organization.id)
                .order_by(SignatureRequest.created_at.desc(), SignatureRequest.id.desc()).first())
    return {"extract": RegistryCompany.get_or_none(RegistryCompany.siren == organization.siren),
            "registry_checked": envelope.registry_checked if envelope else None,
            "check": envelope.registry_check if envelope else None}
