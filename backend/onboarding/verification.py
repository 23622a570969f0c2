"""Verification levels of Specification A: policy -> signature level and authentication mode.

Onboarding envelopes use the policy `qualified` (API.md); the per-document defaults serve other
signature requests (the self-billing mandate of Specification C). An admin override per
organization and document type (`verification_overrides.py`) replaces either.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from backend.errors import ValidationError


class DocumentType(StrEnum):
    FRAMEWORK_CONTRACT = "framework_contract"
    CGU_ACCEPTANCE = "cgu_acceptance"
    SEPA_MANDATE = "sepa_mandate"
    DELEGATION_PROOF = "delegation_proof"


class VerificationPolicy(StrEnum):
    NONE = "none"
    REQUIRED = "required"
    QUALIFIED = "qualified"


class SignatureLevel(StrEnum):
    ELECTRONIC = "electronic_signature"
    ADVANCED = "advanced_electronic_signature"
    QUALIFIED = "qualified_electronic_signature"


class AuthenticationMode(StrEnum):
    NO_OTP = "no_otp"
    OTP_EMAIL = "otp_email"
    OTP_SMS = "otp_sms"


ONBOARDING_POLICY = VerificationPolicy.QUALIFIED
LEVEL_BY_POLICY = {
    VerificationPolicy.NONE: SignatureLevel.ELECTRONIC,
    VerificationPolicy.REQUIRED: SignatureLevel.ADVANCED,
    VerificationPolicy.QUALIFIED: SignatureLevel.QUALIFIED,
}


# From the weakest to the strongest: a signer signs every document of a request at one level.
_STRENGTH = (VerificationPolicy.NONE, VerificationPolicy.REQUIRED, VerificationPolicy.QUALIFIED)


def strongest(policies) -> VerificationPolicy:
    """The strongest of `policies`: the provider sets the level per signer, so the signer of several
    documents signs them all at the level the most demanding one asks for."""
    return max((VerificationPolicy(p) for p in policies), key=_STRENGTH.index)


@dataclass(frozen=True)
class Verification:
    policy: VerificationPolicy
    signature_level: SignatureLevel
    authentication_mode: AuthenticationMode | None  # None: identification happens at the provider


def default_policy(document_type: str, *, amount_cents: int | None = None, threshold_cents: int) -> VerificationPolicy:
    """Default policy per document type: SEPA mandate and delegation proof `required`, a contract
    above the amount threshold `required`, anything else (CGU included) `none`."""
    if document_type in (DocumentType.SEPA_MANDATE, DocumentType.DELEGATION_PROOF):
        return VerificationPolicy.REQUIRED
    if document_type == DocumentType.FRAMEWORK_CONTRACT and amount_cents is not None and amount_cents > threshold_cents:
        return VerificationPolicy.REQUIRED
    return VerificationPolicy.NONE


def verification_for(policy: str, requested_mode: str | None = None) -> Verification:
    """Level and mode of `policy`. `none` takes the requested mode (default `otp_email`);
    `required` allows only `otp_sms`; `qualified` has no OTP mode (reinforced identification)."""
    policy = VerificationPolicy(policy)
    level = LEVEL_BY_POLICY[policy]
    if policy == VerificationPolicy.QUALIFIED:
        if requested_mode is not None:
            raise ValidationError("the qualified level uses reinforced identification, not an OTP mode",
                                  fields={"authenticationMode": ["must be null for the qualified policy"]})
        return Verification(policy, level, None)
    if policy == VerificationPolicy.REQUIRED:
        if requested_mode not in (None, AuthenticationMode.OTP_SMS):
            raise ValidationError("the required policy needs otp_sms",
                                  fields={"authenticationMode": ["must be otp_sms for the required policy"]})
        return Verification(policy, level, AuthenticationMode.OTP_SMS)
    return Verification(policy, level, AuthenticationMode(requested_mode or AuthenticationMode.OTP_EMAIL))
