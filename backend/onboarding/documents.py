"""The documents of an onboarding envelope: which ones, their rendering context, and the signed
files kept in private storage once the envelope is `signed`.

Documents (Specification A, point 2): the framework contract, the CGU acceptance and the SEPA
mandate, plus the delegation proof when the signer is not on the company registry extract.
Signer data come from the billing profile, platform data from `PLATFORM_LEGAL_*`.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

from backend import clock
from backend.config import Config
from backend.db import transaction
from backend.documents.catalog import catalog_entry
from backend.errors import NotFound
from backend.identity.models import BillingProfile, Organization
from backend.identity.organizations import organization_for
from backend.identity.principal import Principal
from backend.logs import get_logger
from backend.onboarding.models import SignatureDocument, SignatureRequest
from backend.onboarding.provider import SignatureProvider
from backend.onboarding.status import ESignStatus
from backend.onboarding.verification import DocumentType
from backend.sepa import mandate_reference
from storage import Storage

log = get_logger("onboarding")

SIGNED_CONTEXT = "onboarding-signed"
AUDIT_TRAIL = "audit_trail"
BASE_DOCUMENTS = (DocumentType.FRAMEWORK_CONTRACT, DocumentType.CGU_ACCEPTANCE, DocumentType.SEPA_MANDATE)
ACTOR_TYPE_LABELS = {"industrial": "annonceur industriel", "distributor": "distributeur", "printer": "imprimeur"}
NOT_PROVIDED = "non renseigné"


def document_types(*, signer_on_registry_extract: bool) -> tuple[DocumentType, ...]:
    if signer_on_registry_extract:
        return BASE_DOCUMENTS
    return (*BASE_DOCUMENTS, DocumentType.DELEGATION_PROOF)


def _platform(config: Config) -> dict:
    town = " ".join(p for p in (config.platform_legal_postal_code, config.platform_legal_city) if p)
    address = ", ".join(p for p in (config.platform_legal_street, town) if p)
    return {
        "name": config.platform_legal_company_name or config.platform_name,
        "siret": config.platform_legal_siret or NOT_PROVIDED,
        "address": address or NOT_PROVIDED,
    }


def document_context(document_type: str, *, request: SignatureRequest, organization: Organization,
                     profile: BillingProfile, config: Config, today: date) -> dict:
    """The template variables of one onboarding document."""
    platform = _platform(config)
    address = f"{profile.street}, {profile.postal_code} {profile.city}"
    signer = {"signerFirstName": profile.signer_first_name, "signerLastName": profile.signer_last_name}
    company = {"organizationName": profile.legal_name, "organizationSiren": organization.siren}
    if document_type == DocumentType.FRAMEWORK_CONTRACT:
        return {**company, **signer, "organizationAddress": address,
                "actorTypeLabel": ACTOR_TYPE_LABELS[organization.actor_type], "signerEmail": profile.signer_email,
                "platformName": platform["name"], "platformSiret": platform["siret"],
                "platformAddress": platform["address"],
                "commissionRatePercent": config.platform_commission_rate_bps / 100, "effectiveDate": today}
    if document_type == DocumentType.CGU_ACCEPTANCE:
        return {**company, **signer, "platformName": platform["name"],
                "cguVersion": catalog_entry(DocumentType.CGU_ACCEPTANCE).catalog_version, "acceptanceDate": today}
    if document_type == DocumentType.SEPA_MANDATE:
        return {**signer, "mandateReference": mandate_reference(request.id), "creditorName": platform["name"],
                "creditorIdentifier": config.platform_sepa_creditor_id or NOT_PROVIDED,
                "creditorAddress": platform["address"], "debtorName": profile.legal_name, "debtorAddress": address,
                "debtorIban": profile.iban, "debtorBic": None, "signatureCity": profile.city, "signatureDate": today}
    delegator = request.delegator or {}
    return {**company, "organizationAddress": address, "delegatorFirstName": delegator.get("firstName"),
            "delegatorLastName": delegator.get("lastName"), "delegatorRole": delegator.get("role"),
            "delegateFirstName": profile.signer_first_name, "delegateLastName": profile.signer_last_name,
            "delegateEmail": profile.signer_email, "platformName": platform["name"], "delegationDate": today}


def signed_file_key(request: SignatureRequest, name: str) -> str:
    """Where the signed file `name` (a document type, or `audit_trail`) of `request` is stored."""
    # Storage keys allow no colon: `industrial:552100554` becomes `industrial-552100554`.
    return f"{request.organization_id.replace(':', '-')}/{request.id}/{name}.pdf"


def store_signed_documents(request_id: str, *, provider: SignatureProvider, storage: Storage) -> int:
    """Download the signed PDFs and the audit trail of a `signed` envelope into private storage;
    returns how many files were stored. Files already stored are skipped (safe to run again)."""
    request = SignatureRequest.get_or_none(SignatureRequest.id == request_id)
    if request is None or request.status != ESignStatus.SIGNED:
        return 0
    pid = request.provider_signature_request_id
    stored = 0
    for document in SignatureDocument.select().where(SignatureDocument.signature_request == request.id,
                                                     SignatureDocument.signed_storage_key.is_null()):
        key = signed_file_key(request, document.document_type)
        storage.put_bytes(SIGNED_CONTEXT, key, provider.download_document(pid, document.provider_document_id),
                          "application/pdf")  # the blob before the row that points at it
        with transaction():
            SignatureDocument.update(signed_storage_key=key).where(SignatureDocument.id == document.id).execute()
        stored += 1
    if request.audit_trail_storage_key is None and request.provider_signer_id:
        key = signed_file_key(request, AUDIT_TRAIL)
        storage.put_bytes(SIGNED_CONTEXT, key, provider.download_audit_trail(pid, request.provider_signer_id),
                          "application/pdf")
        with transaction():
            SignatureRequest.update(audit_trail_storage_key=key, updated_at=clock.now()).where(
                SignatureRequest.id == request.id).execute()
        stored += 1
    if stored:
        log.info("signed onboarding documents stored", extra={"fields": {
            "signatureRequestId": request.id, "organizationId": request.organization_id, "files": stored}})
    return stored


def open_signed_file(*, principal: Principal, organization_id: str, name: str,
                     storage: Storage) -> tuple[str, Iterator[bytes]]:
    """A signed PDF (a document type, or `audit_trail`) of the organization's latest envelope, for a
    member or an admin: `(filename, chunks)`. NotFound until the file is stored."""
    organization = organization_for(principal, organization_id)
    envelope = (SignatureRequest.select().where(SignatureRequest.organization == organization.id)
                .order_by(SignatureRequest.created_at.desc(), SignatureRequest.id.desc()).first())
    key = None
    if envelope is not None and name == AUDIT_TRAIL:
        key = envelope.audit_trail_storage_key
    elif envelope is not None:
        document = SignatureDocument.get_or_none(SignatureDocument.signature_request == envelope.id,
                                                 SignatureDocument.document_type == name)
        key = document.signed_storage_key if document else None
    if key is None:
        raise NotFound("no signed file of this name is stored for the organization's onboarding envelope",
                       name=name)
    return f"{name}.pdf", storage.open(SIGNED_CONTEXT, key)
