"""Organizations, billing profiles, KYB submission and invitations: request and response shapes."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from backend import clock
from backend.identity.models import KybStatus
from backend.identity.permissions import MEMBERSHIP_ROLES
from schemas.common import JsonBoolean, LegalText, enum_of

SIREN = validate.Regexp(r"^\d{9}$", error="must be 9 digits")


class OrganizationCreateIn(Schema):
    actorType = fields.String(required=True, validate=validate.OneOf(["industrial", "distributor"]))
    siren = fields.String(required=True, validate=SIREN)
    legalName = LegalText(200, required=True)


class PrinterCreateIn(Schema):
    actorType = fields.String(required=True, validate=validate.OneOf(["printer"]))
    siren = fields.String(required=True, validate=SIREN)
    legalName = LegalText(200, required=True)


class AddressIn(Schema):
    street = LegalText(300, required=True)
    postalCode = LegalText(20, required=True)
    city = LegalText(120, required=True)
    country = fields.String(required=True, validate=validate.Regexp(r"^[A-Za-z]{2}$", error="ISO 3166 alpha-2"))


class SignerIn(Schema):
    firstName = LegalText(120, required=True)
    lastName = LegalText(120, required=True)
    email = fields.Email(required=True, validate=validate.Length(max=320))
    phone = fields.String(required=True, validate=validate.Length(min=1, max=40),
                          metadata={"description": "kept in E.164; a national number is read as French"})
    onRegistryExtract = JsonBoolean(
        load_default=None, allow_none=True,
        metadata={"description": "ignored: the company registry decides whether the signer is a listed "
                                 "representative (the answer's `onRegistryExtract` says what it decided)"})


class BillingProfileIn(Schema):
    legalName = LegalText(200, required=True)
    siret = fields.String(required=True, validate=validate.Regexp(r"^\d{14}$", error="must be 14 digits"),
                          metadata={"description": "Luhn key checked; starts with the organization's SIREN"})
    vatNumber = fields.String(load_default=None, allow_none=True, validate=validate.Length(max=20), metadata={
        "description": "French VAT number of the SIREN (key checked); with an address in another member state, a "
                       "VAT number of that state (check digits checked): its sales are then reverse charged"})
    address = fields.Nested(AddressIn, required=True)
    iban = fields.String(load_default=None, allow_none=True, validate=validate.Length(max=42))
    # The bank of the IBAN (API.md "Payouts and refunds only move money received, to accounts reviewed").
    bic = fields.String(load_default=None, allow_none=True, validate=validate.Length(max=14), metadata={
        "description": "BIC of the IBAN's bank (ISO 9362, 8 or 11 characters), optional; only with an IBAN. "
                       "Like the IBAN, only a manager changes it, and a change sends an approved KYB back to "
                       "review; the credit transfers pay the BIC approved with the IBAN", "example": "BNPAFRPP"})
    signer = fields.Nested(SignerIn, required=True)
    billingEmail = fields.Email(load_default=None, allow_none=True, validate=validate.Length(max=320), metadata={
        "description": "where the organization's invoices and credit notes are e-mailed; null: to its managers"})
    # The company mentions its invoices print (Code de commerce, art. R123-237): left out, the
    # stored value stays; null clears it.
    legalForm = fields.String(allow_none=True, validate=validate.Length(max=60), metadata={
        "description": "legal form printed on its invoices, e.g. SAS, SARL, entrepreneur individuel; left out "
                       "while none is stored, pre-filled from the company directory when it names one",
        "example": "SAS"})
    shareCapitalCents = fields.Integer(allow_none=True, strict=True, validate=validate.Range(min=1), metadata={
        "description": "share capital in cents, printed \"au capital de 50 000,00 EUR\"", "example": 5000000})
    registration = fields.String(allow_none=True, validate=validate.Length(max=200), metadata={
        "description": "register (RCS, or RM for a craftsman), city of its registry and the organization's SIREN; "
                       "answered in the normal form", "example": "RCS Annecy 443 061 841"})


class InvitationIn(Schema):
    email = fields.Email(required=True, validate=validate.Length(max=320))
    role = fields.String(required=True, validate=validate.OneOf(sorted(MEMBERSHIP_ROLES)))


def _address(profile) -> dict:
    return {"street": profile.street, "postalCode": profile.postal_code, "city": profile.city,
            "country": profile.country}


def _signer(profile) -> dict:
    return {"firstName": profile.signer_first_name, "lastName": profile.signer_last_name,
            "email": profile.signer_email, "phone": profile.signer_phone,
            "onRegistryExtract": profile.signer_on_registry_extract}


class BillingProfileOut(Schema):
    legalName = fields.String(attribute="legal_name", required=True)
    siret = fields.String(required=True)
    vatNumber = fields.String(attribute="vat_number", allow_none=True)
    address = fields.Function(_address, required=True)
    iban = fields.String(allow_none=True)
    bic = fields.String(allow_none=True)
    signer = fields.Function(_signer, required=True)
    billingEmail = fields.String(attribute="billing_email", allow_none=True)
    legalForm = fields.String(attribute="legal_form", allow_none=True)
    shareCapitalCents = fields.Integer(attribute="share_capital_cents", allow_none=True)
    registration = fields.String(allow_none=True)
    updatedAt = fields.Function(lambda p: clock.iso(p.updated_at))


class OrganizationOut(Schema):
    id = fields.String(required=True, metadata={"example": "industrial:552100554"})
    actorType = fields.String(attribute="actor_type", required=True)
    siren = fields.String(required=True)
    legalName = fields.String(attribute="legal_name", required=True)
    kybStatus = fields.String(
        attribute="kyb_status", allow_none=True,
        metadata={"description": "null until submitted", **enum_of(KybStatus)},
    )
    kybNote = fields.String(attribute="kyb_note", allow_none=True)
    createdAt = fields.Function(lambda o: clock.iso(o.created_at))


class OrganizationDetailOut(OrganizationOut):
    billingProfile = fields.Nested(BillingProfileOut, attribute="billing", allow_none=True)


class OrganizationData(Schema):
    organization = fields.Nested(OrganizationDetailOut, required=True)


class BillingProfileData(Schema):
    billingProfile = fields.Nested(BillingProfileOut, required=True)


class InvitationOut(Schema):
    id = fields.String(required=True)
    organizationId = fields.String(attribute="organization_id", required=True)
    email = fields.String(required=True)
    role = fields.String(required=True)
    createdAt = fields.Function(lambda i: clock.iso(i.created_at))
    expiresAt = fields.Function(lambda i: clock.iso(i.expires_at))


class InvitationData(Schema):
    invitation = fields.Nested(InvitationOut, required=True)
