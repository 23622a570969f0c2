"""An organization's bank details: the account an admin approved, kept apart from the live profile.

The billing profile is what the organization typed last; the approved account
(`billing_profile_approved_account`) is what an admin reviewed: the profile's IBAN, BIC and holder
name when its KYB was last approved (`record_approved`, called by the approval). The BIC is
optional (an IBAN-only transfer is valid SEPA) and goes with an IBAN (`check_bic`). An
organization given back after squatting has its approved account voided (`void_approved`): it was
the squatter's. Payouts and refunds record the approved account on their payment order and the
credit transfer file pays it (API.md "Payouts and refunds only move money received, to accounts
reviewed"), so a session that changes the IBAN redirects nothing: the change sends the KYB back
to review (`organizations`), holds the organization's unsent orders back from files until an
admin approves it again, and its managers are e-mailed (`announce_iban_change`) with both IBANs
masked but for their last four characters.
"""

from __future__ import annotations

from datetime import datetime

from peewee import CharField
from playhouse.postgres_ext import DateTimeTZField
from stdnum import bic as stdnum_bic
from stdnum.exceptions import ValidationError as NumberInvalid

from backend import clock
from backend.audit import record_security_event
from backend.email.messages import queue_email
from backend.errors import ValidationError
from backend.identity.models import BillingProfile, Membership, Organization, User
from backend.identity.permissions import MembershipRole
from backend.model import BaseModel

MASK = "•"


class ApprovedAccount(BaseModel):
    """The account an admin approved at the organization's last KYB approval."""

    organization_id = CharField(max_length=64, primary_key=True)
    iban = CharField(max_length=34, null=True)
    bic = CharField(max_length=11, null=True)
    holder_name = CharField(max_length=200)
    approved_at = DateTimeTZField()
    # The organization was given back after squatting: the account approved before is never paid.
    voided_at = DateTimeTZField(null=True)

    class Meta:
        table_name = "billing_profile_approved_account"


def approved_account(organization_id: str) -> ApprovedAccount | None:
    """The account of the organization's last KYB approval; None when it has none, or when it was
    voided since (`void_approved`)."""
    account = ApprovedAccount.get_or_none(ApprovedAccount.organization_id == organization_id)
    if account is None or (account.voided_at is not None and account.voided_at >= account.approved_at):
        return None
    return account


def voided_at(organization_ids: set[str]) -> dict[str, datetime]:
    """When each of `organization_ids` whose approved account was ever voided last had it voided:
    what an order recorded from an account approved before that moment must not pay."""
    rows = ApprovedAccount.select(ApprovedAccount.organization_id, ApprovedAccount.voided_at).where(
        ApprovedAccount.organization_id.in_(list(organization_ids)), ApprovedAccount.voided_at.is_null(False))
    return {row.organization_id: row.voided_at for row in rows}


def void_approved(organization_id: str) -> str | None:
    """The organization's approved account voided (it was given back after squatting: the account
    is the squatter's), inside the caller's transaction; answers its IBAN masked, None when there
    was none. The next approval records a new account; `voided_at` stays."""
    account = approved_account(organization_id)
    if account is None:
        return None
    (ApprovedAccount.update(iban=None, bic=None, voided_at=clock.now())
     .where(ApprovedAccount.organization_id == organization_id).execute())
    return mask_iban(account.iban)


def record_approved(organization_id: str) -> ApprovedAccount | None:
    """The live profile's IBAN and holder name become the approved account (the KYB approval, in its
    transaction, audited there as `kyb.company.reviewed`); None without a billing profile."""
    profile = BillingProfile.get_or_none(BillingProfile.organization == organization_id)
    if profile is None:
        return None
    values = {"iban": profile.iban, "bic": profile.bic, "holder_name": profile.legal_name,
              "approved_at": clock.now()}
    (ApprovedAccount.insert(organization_id=organization_id, **values)
     .on_conflict(conflict_target=[ApprovedAccount.organization_id], update=values).execute())
    return approved_account(organization_id)


def check_bic(bic: str | None, *, iban: str | None) -> str | None:
    """The BIC of the profile's IBAN (ISO 9362: 8 or 11 characters, a bank code, an ISO 3166 country
    code, a location and an optional branch), without spaces, upper case; None when not given. 400
    when it fails its check or comes without an IBAN (it names the IBAN's bank)."""
    if not bic:
        return None
    if not iban:
        raise ValidationError("a BIC without an IBAN", fields={"bic": ["names the bank of the IBAN: give the IBAN"]})
    try:
        return stdnum_bic.validate(bic)
    except NumberInvalid as error:
        raise ValidationError("invalid BIC", fields={"bic": [f"not a valid BIC (ISO 9362): {error}"]}) from None


def mask_iban(iban: str | None) -> str:
    """Every character but the last four masked (what an e-mail or an audit entry may show)."""
    if not iban:
        return "(aucun)"
    return MASK * (len(iban) - 4) + iban[-4:]


def manager_emails(organization_id: str) -> list[str]:
    rows = (User.select(User.email).join(Membership, on=Membership.user == User.id)
            .where(Membership.organization == organization_id, Membership.role == MembershipRole.MANAGER)
            .distinct().order_by(User.email))
    return [row.email for row in rows]


def announce_iban_change(organization: Organization, *, before: str | None, after: str | None,
                         actor_user_id: str) -> None:
    """The IBAN of `organization` changed (inside the change's transaction): audited, and each of
    its managers e-mailed with the old and new IBAN masked."""
    masked = {"before": mask_iban(before), "after": mask_iban(after)}
    record_security_event("organization.bank_details.changed", actor_user_id=actor_user_id,
                          target_type="organization", target_id=organization.id,
                          details={"accountBefore": masked["before"], "accountAfter": masked["after"]})
    for to in manager_emails(organization.id):
        queue_email("iban_changed", to=to, organization=organization.legal_name, iban_before=masked["before"],
                    iban_after=masked["after"])
