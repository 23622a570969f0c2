"""Organizations: creation, access scoped to membership, billing profile, KYB submission.

Reads go through `organization_for`, which puts the caller's membership into the query: an
organization the caller is not a member of is NOT_FOUND, exactly like one that does not exist.
"""

from __future__ import annotations

from peewee import IntegrityError

from backend import clock, company_mentions
from backend.audit import record_security_event
from backend.db import transaction
from backend.errors import Conflict, Forbidden, NotFound, ValidationError
from backend.events import ORGANIZATION_IBAN_CHANGED, publish
from backend.identity import bank_details, sessions
from backend.identity.french_ids import check_iban, check_siren, check_siret, check_vat_number, to_e164
from backend.identity.memberships import add_membership
from backend.identity.models import ActorType, BillingProfile, KybStatus, Membership, Organization, User
from backend.identity.permissions import MembershipRole
from backend.identity.principal import Principal

# Who may change an organization's billing profile, submit its KYB and invite colleagues.
BILLING_EDITORS = (MembershipRole.MANAGER, MembershipRole.BILLING)
MANAGERS = (MembershipRole.MANAGER,)
# A KYB may be (re)submitted by the organization only before review or after a rejection.
KYB_SUBMITTABLE = (None, KybStatus.REJECTED)
# What an approved KYB vouched for: changing one of these reopens the review.
KYB_FROZEN_FIELDS = ("legal_name", "siret", "iban", "bic", "signer_first_name", "signer_last_name", "signer_email",
                     "signer_phone", "signer_on_registry_extract")
# Where invoices go and the VAT number they carry: vouched for too.
KYB_ADDRESS_FIELDS = ("vat_number", "street", "postal_code", "city", "country")


def organization_id_for(actor_type: str, siren: str) -> str:
    return f"{actor_type}:{siren}"


def organization_for(
    principal: Principal, organization_id: str, *, membership_roles: tuple[str, ...] = (),
    for_update: bool = False,
) -> Organization:
    """The organization if the caller is an admin or a member (NOT_FOUND otherwise); with
    `membership_roles`, a member of another role is FORBIDDEN."""
    query = Organization.select(Organization).where(Organization.id == organization_id)
    if not principal.is_admin:
        query = (
            query.select_extend(Membership.role.alias("caller_role"))
            .join(Membership)
            .where(Membership.user == principal.user_id)
            .objects()  # the caller's role lands on the organization row
        )
    if for_update:
        query = query.for_update(of=Organization)
    organization = query.first()
    if organization is None:
        raise NotFound("no such organization")
    if membership_roles and not principal.is_admin and organization.caller_role not in membership_roles:
        raise Forbidden("your role in this organization does not allow this")
    return organization


def require_verified_email(user_id: str) -> None:
    """Trust (creating an organization, joining one) needs a proven mailbox: an unverified account
    may have been created by anybody with the owner's address."""
    if not User.select().where(User.id == user_id, User.email_verified_at.is_null(False)).exists():
        raise Forbidden("confirm your e-mail address first (see the verification e-mail)",
                        reason="email_not_verified")


def create_organization(
    *, actor_type: str, siren: str, legal_name: str, actor_user_id: str, becomes_manager: bool = True,
    session_id: str | None = None,
) -> Organization:
    """Create `<actorType>:<siren>` (409 if it exists). When `becomes_manager`, the caller is its
    manager and its session's active organization switches to it."""
    check_siren(siren)
    if becomes_manager:
        require_verified_email(actor_user_id)
    organization_id = organization_id_for(actor_type, siren)
    with transaction():
        try:
            with transaction():
                organization = Organization.create(
                    id=organization_id, actor_type=actor_type, siren=siren, legal_name=legal_name.strip()
                )
        except IntegrityError:  # primary key: the organization exists
            raise Conflict("this organization already exists", organizationId=organization_id) from None
        record_security_event("organization.created", actor_user_id=actor_user_id,
                              target_type="organization", target_id=organization_id,
                              details={"actorType": actor_type})
        if becomes_manager:
            add_membership(user_id=actor_user_id, organization=organization, role=MembershipRole.MANAGER,
                           actor_user_id=actor_user_id)
            if session_id is not None:
                sessions.set_active_organization(session_id=session_id, user_id=actor_user_id,
                                                 organization_id=organization_id)
    organization.billing = None  # a new organization has no billing profile yet
    return organization


def organization_detail(principal: Principal, organization_id: str) -> Organization:
    """The organization (member or admin) with its billing profile as `.billing` (None if unset)."""
    organization = organization_for(principal, organization_id)
    organization.billing = billing_profile_of(organization.id)
    return organization


def create_printer_organization(*, siren: str, legal_name: str, admin_user_id: str) -> Organization:
    """Printers are provisioned by an admin only (spec B); nobody becomes a member yet."""
    return create_organization(actor_type=ActorType.PRINTER, siren=siren, legal_name=legal_name,
                               actor_user_id=admin_user_id, becomes_manager=False)


def billing_profile_of(organization_id: str) -> BillingProfile | None:
    return BillingProfile.get_or_none(BillingProfile.organization == organization_id)


def put_billing_profile(*, principal: Principal, organization_id: str, profile: dict,
                        signer_on_registry_extract: bool) -> BillingProfile:
    """Create or replace the billing profile; identifiers are checked against the SIREN. Whether the
    signer is on the registry extract is the company registry's answer (onboarding's
    `registry_check.put_checked_billing_profile` asks it), never the client's."""
    organization = organization_for(principal, organization_id, membership_roles=BILLING_EDITORS)
    siren = organization.siren
    signer, address = profile["signer"], profile["address"]
    values = {
        "legal_name": profile["legalName"].strip(),
        "siret": check_siret(profile["siret"], siren=siren),
        "vat_number": (check_vat_number(profile["vatNumber"], siren=siren, country=address["country"])
                       if profile.get("vatNumber") else None),
        "street": address["street"].strip(),
        "postal_code": address["postalCode"].strip(),
        "city": address["city"].strip(),
        "country": address["country"].upper(),
        "iban": check_iban(profile["iban"]) if profile.get("iban") else None,
        "signer_first_name": signer["firstName"].strip(),
        "signer_last_name": signer["lastName"].strip(),
        "signer_email": signer["email"].strip().lower(),
        "signer_phone": to_e164(signer["phone"], field="signer.phone"),
        "signer_on_registry_extract": signer_on_registry_extract,
        "billing_email": profile["billingEmail"].strip().lower() if profile.get("billingEmail") else None,
        **company_mentions_of(profile, siren=siren),
        "updated_at": clock.now(),
    }
    values["bic"] = bank_details.check_bic(profile.get("bic"), iban=values["iban"])
    with transaction():
        locked = Organization.select().where(Organization.id == organization.id).for_update().get()
        before = billing_profile_of(organization.id)
        iban_changed = before is not None and before.iban != values["iban"]
        if before is not None and (before.iban, before.bic) != (values["iban"], values["bic"]):
            require_bank_details_editor(principal, organization)
        (
            BillingProfile.insert(organization=organization.id, **values)
            .on_conflict(conflict_target=[BillingProfile.organization], update=values)
            .execute()
        )
        record_security_event("organization.billing_profile.updated", actor_user_id=principal.user_id,
                              target_type="organization", target_id=organization.id,
                              details={"siret": values["siret"]})
        changed = vouched_changes(before, values)
        if changed:
            reopen_kyb(locked, actor_user_id=principal.user_id, reason="billing_profile_changed", changed=changed)
        if iban_changed:
            bank_details.announce_iban_change(organization, before=before.iban, after=values["iban"],
                                              actor_user_id=principal.user_id)
            # A signed SEPA mandate names an account: billing ends it when another one is entered.
            publish(ORGANIZATION_IBAN_CHANGED, organization.id)
    return billing_profile_of(organization.id)


def require_bank_details_editor(principal: Principal, organization: Organization) -> None:
    """Only a manager (or an admin) changes where the organization's money goes: a `billing` member
    may edit the rest of the profile (403 `bank_details_manager_only`)."""
    if not principal.is_admin and organization.caller_role not in MANAGERS:
        raise Forbidden("only a manager of the organization may change its bank details",
                        reason="bank_details_manager_only")


def company_mentions_of(profile: dict, *, siren: str) -> dict:
    """The columns of the company mentions `profile` gives (`legalForm`, `shareCapitalCents`,
    `registration`; null clears one), checked: a key left out keeps the stored value, so a client
    that does not know them yet changes nothing."""
    problems, values = {}, {}
    if "legalForm" in profile:
        form = (profile["legalForm"] or "").strip() or None
        if form is not None and (problem := company_mentions.legal_form_problem(form)):
            problems["legalForm"] = [problem]
        values["legal_form"] = form
    if "shareCapitalCents" in profile:
        capital = profile["shareCapitalCents"]
        if capital is not None and (problem := company_mentions.share_capital_problem(capital)):
            problems["shareCapitalCents"] = [problem]
        values["share_capital_cents"] = capital
    if "registration" in profile:
        registration = (profile["registration"] or "").strip() or None
        try:
            values["registration"] = registration and company_mentions.normal_registration(registration, siren=siren)
        except ValueError as exc:
            problems["registration"] = [str(exc)]
    if problems:
        raise ValidationError("invalid company mentions", fields=problems)
    return values


def vouched_changes(before: BillingProfile | None, values: dict) -> list[str]:
    """The fields an approved KYB vouched for that `values` change in the profile `before`."""
    if before is None:
        return []
    return [name for name in (*KYB_FROZEN_FIELDS, *KYB_ADDRESS_FIELDS) if getattr(before, name) != values[name]]


def reopen_kyb(organization: Organization, *, actor_user_id: str, reason: str, changed: list[str]) -> bool:
    """An approved organization whose vouched-for data changed goes back to `submitted` (its
    workspace is blocked again until an admin approves it anew); audited. Call inside the
    transaction that makes the change, with the organization row locked. True when reopened."""
    if organization.kyb_status != KybStatus.APPROVED:
        return False
    now = clock.now()
    Organization.update(kyb_status=KybStatus.SUBMITTED, kyb_submitted_at=now, kyb_reviewed_at=None,
                        updated_at=now).where(Organization.id == organization.id).execute()
    organization.kyb_status = KybStatus.SUBMITTED
    record_security_event("kyb.reopened", actor_user_id=actor_user_id, target_type="organization",
                          target_id=organization.id, details={"reason": reason, "changed": changed,
                                                              "previousStatus": KybStatus.APPROVED.value})
    return True


def submit_kyb(*, principal: Principal, organization_id: str) -> Organization:
    """The organization asks for review: KYB becomes `submitted` (needs a billing profile)."""
    with transaction():
        organization = organization_for(principal, organization_id, membership_roles=MANAGERS, for_update=True)
        if organization.kyb_status not in KYB_SUBMITTABLE:
            raise Conflict(f"KYB is already {organization.kyb_status}", kybStatus=organization.kyb_status)
        if billing_profile_of(organization.id) is None:
            raise Conflict("fill in the billing profile before submitting KYB", reason="billing_profile_missing")
        now = clock.now()
        Organization.update(kyb_status=KybStatus.SUBMITTED, kyb_submitted_at=now, updated_at=now).where(
            Organization.id == organization.id
        ).execute()
        record_security_event("kyb.submitted", actor_user_id=principal.user_id, target_type="organization",
                              target_id=organization.id, details={"previousStatus": organization.kyb_status})
    return organization_detail(principal, organization.id)


def business_open(organization_id: str | None) -> bool:
    """Whether the business routes of an active organization's workspace are open: an industrial
    or distributor organization is blocked until its KYB is approved (Specification A)."""
    organization = Organization.get_or_none(Organization.id == organization_id) if organization_id else None
    return organization is not None and not organization.kyb_blocked


def organizations_of(user_id: str) -> list[tuple[Organization, str]]:
    """The user's organizations with its role in each, oldest membership first."""
    rows = (
        Organization.select(Organization, Membership.role.alias("member_role"))
        .join(Membership)
        .where(Membership.user == user_id)
        .order_by(Membership.created_at, Membership.id)
        .objects()  # the membership role lands on the organization row
    )
    return [(row, row.member_role) for row in rows]
