"""The demo distributor's signed onboarding envelope (`vitrine seed-demo`), as an organization
onboarded for real holds one.

The demo organizations are seeded with their KYB approved, but an approval needs the latest
envelope `signed` (`kyb_review.approval_blocker`): without one, the demo distributor could never be
approved again once its KYB went back to review (an IBAN change, docs/bank.md "Try it"). `seed-demo`
runs without the e-signature provider, so the envelope is recorded directly as `signed`, its
signer on the registry extract (as the identity seeder's profile says), with each document's real
rendered PDF stored where a signed one would be (`onboarding-signed`). No event is published: the
demo's mandates are their own seeders'. Idempotent: once the demo distributor has an envelope (any
status), nothing is added.
"""

from __future__ import annotations

from backend import clock
from backend.config import Config
from backend.documents.rendering import render_document
from backend.documents.seeding import seed_default_versions
from backend.identity.demo import DEMO_ORGANIZATIONS
from backend.identity.models import BillingProfile, Organization
from backend.model import new_id
from backend.onboarding.documents import SIGNED_CONTEXT, document_context, document_types, signed_file_key
from backend.onboarding.models import DeliveryMode, SignatureDocument, SignatureRequest
from backend.onboarding.status import ESignStatus
from backend.onboarding.verification import ONBOARDING_POLICY, verification_for
from storage import Storage

DEMO_DISTRIBUTOR = next(id_ for id_, actor_type, *_ in DEMO_ORGANIZATIONS if actor_type == "distributor")


def seed_demo_onboarding(*, storage: Storage, config: Config) -> str:
    if SignatureRequest.select().where(SignatureRequest.organization == DEMO_DISTRIBUTOR).exists():
        return "the demo distributor already has an onboarding envelope"
    seed_default_versions(storage)  # the templates' first versions, when `migrate` has not published them
    organization = Organization.get_by_id(DEMO_DISTRIBUTOR)
    profile = BillingProfile.get_by_id(DEMO_DISTRIBUTOR)
    verification = verification_for(ONBOARDING_POLICY)
    now = clock.now()
    request = SignatureRequest(
        id=new_id(), organization=organization.id, status=ESignStatus.SIGNED, delivery_mode=DeliveryMode.EMAIL,
        identity_verification_policy=verification.policy, signature_level=verification.signature_level,
        authentication_mode=verification.authentication_mode,
        signer_on_registry_extract=profile.signer_on_registry_extract, created_at=now, updated_at=now,
        status_changed_at=now)
    documents = []
    for document_type in document_types(signer_on_registry_extract=profile.signer_on_registry_extract):
        context = document_context(document_type, request=request, organization=organization, profile=profile,
                                   config=config, today=now.date())
        key = signed_file_key(request, document_type)
        storage.put_bytes(SIGNED_CONTEXT, key, render_document(document_type, context, storage=storage, config=config),
                          "application/pdf")  # the blob before the row that points at it
        documents.append({"document_type": document_type, "identity_verification_policy": verification.policy,
                          "signature_level": verification.signature_level,
                          "authentication_mode": verification.authentication_mode, "signed_storage_key": key})
    request.save(force_insert=True)
    SignatureDocument.insert_many([{"signature_request": request.id, **document} for document in documents]).execute()
    return f"signed onboarding envelope of the demo distributor recorded with its {len(documents)} PDFs"
