"""SEPA direct-debit mandates of organizations (API.md: the onboarding's signed `sepa_mandate`
document plus the billing profile IBAN make one, its reference the one printed on the signed
document: `backend.sepa.mandate_reference`, one RUM from the signature to the debit).

`record_from_envelope` runs as a subscriber of `onboarding.envelope_signed`: once an onboarding
envelope holding a `sepa_mandate` document is signed, the organization's active mandate is the
one of that envelope (a previous active one is ended: the new signature supersedes it). It is
idempotent per envelope. `end_active_mandates` runs when the organization's IBAN changes
(`organization.iban_changed`): when the profile now names another account than the signed mandate,
the mandate ends and `sepa_dd` is refused until a new mandate is signed; an IBAN removed, or the
mandate's own IBAN entered again, keeps it.
"""

from __future__ import annotations

from backend import clock
from backend.billing.models import MandateStatus, PaymentMethod, SepaMandate
from backend.db import transaction
from backend.errors import Conflict
from backend.identity.models import BillingProfile, Organization
from backend.logs import log_event
from backend.onboarding.models import SignatureDocument, SignatureRequest
from backend.onboarding.status import ESignStatus
from backend.onboarding.verification import DocumentType
from backend.sepa import mandate_reference


def active_mandate(organization_id: str) -> SepaMandate | None:
    return (SepaMandate.select()
            .where(SepaMandate.organization_id == organization_id, SepaMandate.status == MandateStatus.ACTIVE)
            .first())


def default_method(organization_id: str) -> PaymentMethod:
    """How a collection that names no method collects (the platform's own, or a client's without
    `paymentMethod`): by direct debit under the organization's active mandate, else by bank
    transfer. A client may still ask for `bank_transfer` (spec C)."""
    return PaymentMethod.SEPA_DD if active_mandate(organization_id) else PaymentMethod.BANK_TRANSFER


def record_from_envelope(signature_request_id: str) -> SepaMandate | None:
    """The mandate of a signed onboarding envelope; None when the envelope is not signed, holds
    no `sepa_mandate` document or the organization has no IBAN on its billing profile."""
    with transaction():
        request = (SignatureRequest.select().where(SignatureRequest.id == signature_request_id)
                   .for_update().first())
        if request is None or request.status != ESignStatus.SIGNED:
            return None
        existing = SepaMandate.get_or_none(SepaMandate.signature_request_id == request.id)
        if existing is not None:
            return existing
        document = SignatureDocument.get_or_none(
            SignatureDocument.signature_request == request.id,
            SignatureDocument.document_type == DocumentType.SEPA_MANDATE,
        )
        if document is None:
            return None
        organization = Organization.get_by_id(request.organization_id)
        profile = BillingProfile.get_or_none(BillingProfile.organization == organization.id)
        if profile is None or not profile.iban:
            log_event("billing.sepa_mandate.skipped_no_iban", "signed SEPA mandate without an IBAN", "warn",
                      organizationId=organization.id, signatureRequestId=request.id)
            return None
        now = clock.now()
        ended = _end(organization.id, reason="superseded by a new signed mandate", now=now)
        mandate = SepaMandate.create(
            organization_id=organization.id,
            mandate_ref=mandate_reference(request.id),  # the reference printed on the signed document
            iban=profile.iban,
            status=MandateStatus.ACTIVE,
            signature_request_id=request.id,
            document_storage_key=document.signed_storage_key,
            signed_at=request.status_changed_at or now,
        )
    log_event("billing.sepa_mandate.recorded", "SEPA mandate recorded", "info", organizationId=organization.id,
              mandateRef=mandate.mandate_ref, signatureRequestId=request.id, supersededMandates=ended)
    return mandate


def end_active_mandates(organization_id: str, *, reason: str) -> int:
    """End the organization's active mandate when its billing profile now names another account;
    returns how many were ended. A mandate names one account: the IBAN removed from the profile,
    or the mandate's own IBAN entered again, keeps it (the debtor's signature still covers it)."""
    with transaction():
        mandate = (SepaMandate.select().where(SepaMandate.organization_id == organization_id,
                                              SepaMandate.status == MandateStatus.ACTIVE).for_update().first())
        iban = (BillingProfile.select(BillingProfile.iban)
                .where(BillingProfile.organization == organization_id).scalar())
        if mandate is None or not iban or _compact(iban) == _compact(mandate.iban):
            return 0
        ended = _end(organization_id, reason=reason, now=clock.now())
    if ended:
        log_event("billing.sepa_mandate.ended", "SEPA mandate ended", "info", organizationId=organization_id,
                  reason=reason)
    return ended


def _compact(iban: str) -> str:
    return iban.replace(" ", "").upper()


def _end(organization_id: str, *, reason: str, now) -> int:
    return (SepaMandate.update(status=MandateStatus.ENDED, ended_at=now, end_reason=reason)
            .where(SepaMandate.organization_id == organization_id, SepaMandate.status == MandateStatus.ACTIVE)
            .execute())


def mandate_ref_for(organization_id: str, method: PaymentMethod) -> str | None:
    """Step 3: the active SEPA mandate's reference for `sepa_dd` (409 without one)."""
    if method is not PaymentMethod.SEPA_DD:
        return None
    mandate = active_mandate(organization_id)
    return require_mandate(method, mandate.mandate_ref if mandate else None)


def require_mandate(method: PaymentMethod, active_mandate_ref: str | None) -> str | None:
    """Step 3 on a mandate reference already read: the one `sepa_dd` needs (409 without one)."""
    if method is not PaymentMethod.SEPA_DD:
        return None
    if active_mandate_ref is None:
        raise Conflict("the organization has no active SEPA mandate", reason="sepa_mandate_missing")
    return active_mandate_ref
