"""Onboarding tables (migration `040_onboarding_esign`): signature requests (envelopes), their
documents, the provider's webhook events as received, the KYB delegation documents, the
admin's verification-policy overrides per organization and document type, and the company
registry cache (migration `115_registry_cache`)."""

from __future__ import annotations

from enum import StrEnum

from peewee import BigAutoField, BooleanField, CharField, DateField, ForeignKeyField, IntegerField, TextField
from playhouse.postgres_ext import BinaryJSONField, DateTimeTZField

from backend.identity.models import Organization
from backend.model import BaseModel, created_at_field, id_field, status_field
from backend.onboarding.registry import CompanyState
from backend.onboarding.status import ESignStatus
from backend.onboarding.verification import AuthenticationMode, DocumentType, SignatureLevel, VerificationPolicy


class DeliveryMode(StrEnum):
    EMAIL = "email"
    NONE = "none"


class ProcessingStatus(StrEnum):
    RECEIVED = "received"  # committed, processing not yet run
    PROCESSED = "processed"  # applied to an onboarding envelope (or found to change nothing)
    UNKNOWN_REQUEST = "unknown_request"  # no onboarding envelope has this provider id
    IGNORED = "ignored"  # not a subscribed event, or no provider request id in the body


class KybDocumentType(StrEnum):
    """The three delegation documents of Specification A (point 5)."""

    DELEGATION_LETTER = "delegation_letter"
    DELEGATOR_ID_DOCUMENT = "delegator_id_document"
    DELEGATE_ID_DOCUMENT = "delegate_id_document"


class SignatureRequest(BaseModel):
    id = id_field()
    organization = ForeignKeyField(Organization, backref="signature_requests", on_delete="CASCADE")
    status = status_field(ESignStatus, default=ESignStatus.PENDING_CREATION)
    # Set as soon as the provider returns it: events cannot update a record that lacks it.
    provider_signature_request_id = CharField(max_length=120, null=True)
    provider_signer_id = CharField(max_length=120, null=True)
    signature_link = TextField(null=True)
    delivery_mode = status_field(DeliveryMode, default=DeliveryMode.EMAIL)
    identity_verification_policy = status_field(VerificationPolicy)
    signature_level = status_field(SignatureLevel)
    authentication_mode = status_field(AuthenticationMode, null=True)
    signer_on_registry_extract = BooleanField()
    # The registry-listed representative delegating to the signer (delegation proof), else None.
    delegator = BinaryJSONField(null=True)
    # Whether the company registry could be asked when the envelope was opened, and what it said
    # (`backend/onboarding/registry_check.py`); without it the delegation documents are required.
    registry_checked = BooleanField(default=False)
    registry_check = BinaryJSONField(null=True)
    audit_trail_storage_key = TextField(null=True)
    error_reason = TextField(null=True)
    last_event_at = DateTimeTZField(null=True)  # event_time of the last event applied
    # Superseded by a newer envelope while its provider request may still be live: the cancel at
    # the provider is still owed (made by the next creation or reconciliation pass).
    provider_cancel_due = BooleanField(default=False)
    reconciled_at = DateTimeTZField(null=True)  # when the reconciliation pass last asked the provider
    created_by_user_id = CharField(max_length=36, null=True)
    created_at = created_at_field()
    updated_at = created_at_field()
    status_changed_at = created_at_field()

    class Meta:
        table_name = "onboarding_signature_request"


class SignatureDocument(BaseModel):
    id = BigAutoField()
    signature_request = ForeignKeyField(SignatureRequest, backref="documents", on_delete="CASCADE")
    document_type = status_field(DocumentType)
    identity_verification_policy = status_field(VerificationPolicy)
    signature_level = status_field(SignatureLevel)
    authentication_mode = status_field(AuthenticationMode, null=True)
    provider_document_id = CharField(max_length=120, null=True)
    signed_storage_key = TextField(null=True)

    class Meta:
        table_name = "onboarding_signature_document"


class SignatureEvent(BaseModel):
    id = BigAutoField()
    event_id = CharField(max_length=200, unique=True)
    event_name = CharField(max_length=80)
    provider_signature_request_id = CharField(max_length=120, null=True)
    payload = BinaryJSONField()
    retry_attempt = IntegerField(null=True)  # X-Esign-Retry of the delivery that was stored
    processing_status = status_field(ProcessingStatus, default=ProcessingStatus.RECEIVED)
    processing_note = TextField(null=True)
    received_at = created_at_field()
    processed_at = DateTimeTZField(null=True)

    class Meta:
        table_name = "esign_webhook_event"


class KybDocument(BaseModel):
    """The current file of one delegation document type of an organization (a new upload replaces it)."""

    id = BigAutoField()
    organization = ForeignKeyField(Organization, backref="kyb_documents", on_delete="CASCADE")
    document_type = status_field(KybDocumentType)
    storage_key = TextField()
    content_type = CharField(max_length=80)
    size_bytes = IntegerField()
    uploaded_by_user_id = CharField(max_length=36, null=True)
    uploaded_at = created_at_field()

    class Meta:
        table_name = "kyb_document"


class VerificationOverride(BaseModel):
    """An admin's verification policy for one document type of one organization (Specification A:
    "a manual admin override is allowed and must be traced"); it replaces the default policy."""

    id = BigAutoField()
    organization = ForeignKeyField(Organization, backref="verification_overrides", on_delete="CASCADE")
    document_type = status_field(DocumentType)
    policy = status_field(VerificationPolicy)
    note = TextField()
    set_by_user_id = CharField(max_length=36, null=True)
    set_at = created_at_field()

    class Meta:
        table_name = "esign_verification_override"


class RegistryCompany(BaseModel):
    """The registry's last answer about one SIREN, with when it was fetched (the registry cache)."""

    siren = CharField(primary_key=True, max_length=9)
    state = status_field(CompanyState)
    legal_name = TextField(null=True)
    naf_code = CharField(max_length=10, null=True)
    street = TextField(null=True)
    postal_code = CharField(max_length=20, null=True)
    city = TextField(null=True)
    representatives = BinaryJSONField(default=list)  # [{first_names, last_name, role}]
    registry_updated_on = DateField(null=True)
    legal_category = CharField(max_length=4, null=True)  # INSEE's catégorie juridique (`nature_juridique`)
    fetched_at = DateTimeTZField()

    class Meta:
        table_name = "registry_company"
