"""The onboarding envelope of an organization: start, creation at the provider, state.

`start_onboarding` records the envelope (`pending_creation`) and its documents and queues
`create_signature_envelope`, which talks to the provider: create the request (its id saved at
once: events cannot update a record that lacks it), render and upload each document, add the
signer, activate. Any failure leaves the envelope in `error` with its reason; a relaunch (or a new
start by the manager) opens a new envelope, which supersedes the failed one (`superseding.py`: it
becomes `canceled` and its provider request is cancelled before the new one is created). At most
one envelope per organization is pending: a partial unique index refuses the second (409
`CONFLICT`, `details.reason = onboarding_pending`). A start is refused too (409) once an envelope
is `signed` (`onboarding_signed`) or the KYB is approved (`kyb_approved`): only an admin reset
opens the journey again. Before any of that, the company registry decides whether the signer is
on the extract (`registry_check.py`): a SIREN it does not know or a ceased company is refused.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from peewee import IntegrityError

from backend import clock, outbox
from backend.config import Config
from backend.db import database, transaction
from backend.documents.rendering import render_document
from backend.errors import Conflict, ValidationError
from backend.identity.french_ids import to_e164
from backend.identity.models import ActorType, BillingProfile, KybStatus, Organization
from backend.identity.organizations import MANAGERS, billing_profile_of, organization_for
from backend.identity.principal import Principal
from backend.logs import get_logger
from backend.onboarding.documents import document_context, document_types
from backend.onboarding.events import apply_status
from backend.onboarding.models import DeliveryMode, SignatureDocument, SignatureRequest
from backend.onboarding.provider import (
    ProviderError,
    ProviderRejected,
    ProviderRequest,
    SignatureProvider,
    SignerInfo,
)
from backend.onboarding.reconciliation import reconcile_envelope
from backend.onboarding.registry import CompanyRegistry
from backend.onboarding.registry_check import RegistryDecision, Signer, check_signer, refuse_unregistrable
from backend.onboarding.status import PENDING, ESignStatus, from_provider_status, next_status
from backend.onboarding.superseding import cancel_due_requests, supersede_errored
from backend.onboarding.verification import ONBOARDING_POLICY, strongest, verification_for
from backend.onboarding.verification_overrides import overridden_policies
from storage import Storage

log = get_logger("onboarding")

CREATION_ACTOR = "create_signature_envelope"
# The provider sends the invitation itself to industrial and distributor signers (spec A).
EMAIL_DELIVERY = frozenset({ActorType.INDUSTRIAL, ActorType.DISTRIBUTOR})


def start_onboarding(*, principal: Principal, organization_id: str, delegator: dict | None,
                     registry: CompanyRegistry, cache_days: int) -> SignatureRequest:
    """Open the organization's onboarding envelope (a manager, or an admin), once the company
    registry has said whether the signer is a listed representative (`registry_check.py`)."""
    organization = organization_for(principal, organization_id, membership_roles=MANAGERS)
    profile = signable_profile(organization.id)
    decision = check_signer(organization.siren, Signer.of_profile(profile), registry=registry, cache_days=cache_days)
    refuse_unregistrable(decision)
    if not decision.on_extract and not delegator:
        raise ValidationError("the signer is not on the registry extract: name the delegating representative",
                              fields={"delegator": ["required when the signer is not on the registry extract"]})
    _refuse_a_finished_journey(organization)
    return open_envelope(organization, profile, decision, delegator=delegator, created_by_user_id=principal.user_id)


def _refuse_a_finished_journey(organization: Organization) -> None:
    """A signed envelope or an approved KYB ends the journey: a new start would send the workspace
    back to the signature page. An admin reset (every envelope invalidated, KYB cleared) reopens it."""
    if organization.kyb_status == KybStatus.APPROVED:
        raise Conflict("the organization is already approved", reason="kyb_approved")
    signed = SignatureRequest.select(SignatureRequest.id).where(
        SignatureRequest.organization == organization.id, SignatureRequest.status == ESignStatus.SIGNED).first()
    if signed is not None:
        raise Conflict("the onboarding documents are already signed", reason="onboarding_signed",
                       signatureRequestId=signed.id)


def signable_profile(organization_id: str) -> BillingProfile:
    """The billing profile an envelope is built from (Conflict when it cannot be)."""
    profile = billing_profile_of(organization_id)
    if profile is None:
        raise Conflict("the organization has no billing profile yet", reason="billing_profile_missing")
    if not profile.iban:
        raise Conflict("the SEPA mandate needs the billing profile's IBAN", reason="iban_missing")
    return profile


def open_envelope(organization: Organization, profile: BillingProfile, registry: RegistryDecision, *,
                  delegator: dict | None, created_by_user_id: str | None) -> SignatureRequest:
    """Record a `pending_creation` envelope with its documents and the registry's decision, and
    queue its creation.

    Each document asks for the `qualified` onboarding policy unless an admin overrode its type for
    the organization; the provider sets the level per signer, so the signer gets the strongest
    policy the documents ask for (recorded on the envelope and as each document's level)."""
    on_registry = registry.on_extract
    types = document_types(signer_on_registry_extract=on_registry)
    overrides = overridden_policies(organization.id)
    asked = {t: overrides.get(t, ONBOARDING_POLICY) for t in types}
    verification = verification_for(strongest(asked.values()))
    try:
        with transaction():
            superseded = supersede_errored(organization.id)
            request = SignatureRequest.create(
                organization=organization.id,
                status=ESignStatus.PENDING_CREATION,
                delivery_mode=DeliveryMode.EMAIL if organization.actor_type in EMAIL_DELIVERY else DeliveryMode.NONE,
                identity_verification_policy=verification.policy,
                signature_level=verification.signature_level,
                authentication_mode=verification.authentication_mode,
                signer_on_registry_extract=on_registry,
                registry_checked=registry.checked,
                registry_check=registry.check,
                delegator=None if on_registry else delegator,
                created_by_user_id=created_by_user_id,
            )
            SignatureDocument.insert_many([
                {"signature_request": request.id, "document_type": document_type,
                 "identity_verification_policy": policy,
                 "signature_level": verification.signature_level,
                 "authentication_mode": verification.authentication_mode}
                for document_type, policy in asked.items()
            ]).execute()
            outbox.enqueue(CREATION_ACTOR, request.id)
    except IntegrityError:  # the partial unique index on pending envelopes
        raise Conflict("an onboarding signature request is already pending", reason="onboarding_pending") from None
    log.info("onboarding envelope opened", extra={"fields": {
        "signatureRequestId": request.id, "organizationId": organization.id, "policy": verification.policy,
        "overriddenDocuments": sorted(t for t in asked if t in overrides), "superseded": superseded}})
    return request


class CreationInProgress(Exception):
    """Another delivery holds the envelope's creation lock: the actor retries later (and then
    finds the work done, or does it)."""


@contextmanager
def _creation_lock(request_id: str) -> Iterator[bool]:
    """A session advisory lock: two deliveries of the creation message never talk to the
    provider for the same envelope at once (and no transaction stays open during the calls)."""
    key = f"onboarding-envelope:{request_id}"
    acquired = database.execute_sql("SELECT pg_try_advisory_lock(hashtext(%s))", (key,)).fetchone()[0]
    try:
        yield acquired
    finally:
        if acquired:
            database.execute_sql("SELECT pg_advisory_unlock(hashtext(%s))", (key,))


def create_signature_envelope(request_id: str, *, provider: SignatureProvider, storage: Storage,
                              config: Config) -> str | None:
    """Create, fill and activate the envelope at the provider; returns its status, None when
    there was nothing to do. Resumes after a partial run: saved ids are not created again."""
    with _creation_lock(request_id) as acquired:
        if not acquired:
            raise CreationInProgress(request_id)
        request = SignatureRequest.get_or_none(SignatureRequest.id == request_id)
        if request is None or request.status != ESignStatus.PENDING_CREATION:
            return None
        cancel_due_requests(provider, organization_id=request.organization_id)  # failures: the pass retries
        try:
            _create_at_provider(request, provider, storage, config)
        except Exception as exc:  # any failure leaves a relaunchable envelope that says why
            log.error("onboarding envelope creation failed", exc_info=True, extra={"fields": {
                "signatureRequestId": request_id, "error": str(exc)}})
            with transaction():
                locked = _locked(request_id)
                if locked.status == ESignStatus.PENDING_CREATION:
                    apply_status(locked, ESignStatus.ERROR, reason=f"{type(exc).__name__}: {exc}"[:1000])
        return SignatureRequest.get_by_id(request_id).status


def _locked(request_id: str) -> SignatureRequest:
    return SignatureRequest.select().where(SignatureRequest.id == request_id).for_update().first()


def _save(request_id: str, **changes) -> None:
    SignatureRequest.update(**changes, updated_at=clock.now()).where(SignatureRequest.id == request_id).execute()


def _create_at_provider(request: SignatureRequest, provider: SignatureProvider, storage: Storage,
                        config: Config) -> None:
    organization = Organization.get_by_id(request.organization_id)
    profile = signable_profile(organization.id)
    pid = request.provider_signature_request_id
    if pid is None:
        pid = provider.create_request(name=f"Onboarding {profile.legal_name}", external_id=request.id,
                                      delivery_mode=request.delivery_mode, ordered_signers=True, locale="fr")
        _save(request.id, provider_signature_request_id=pid)
    today = clock.now().date()
    documents = list(SignatureDocument.select().where(SignatureDocument.signature_request == request.id)
                     .order_by(SignatureDocument.id))
    for document in documents:
        if document.provider_document_id is None:
            context = document_context(document.document_type, request=request, organization=organization,
                                       profile=profile, config=config, today=today)
            pdf = render_document(document.document_type, context, storage=storage, config=config)
            document.provider_document_id = provider.upload_document(
                pid, filename=f"{document.document_type}.pdf", content=pdf)
            SignatureDocument.update(provider_document_id=document.provider_document_id).where(
                SignatureDocument.id == document.id).execute()
    if request.provider_signer_id is None:
        signer = SignerInfo(profile.signer_first_name, profile.signer_last_name, profile.signer_email,
                            to_e164(profile.signer_phone))
        signer_id = provider.add_signer(pid, signer=signer, signature_level=request.signature_level,
                                        authentication_mode=request.authentication_mode,
                                        document_ids=[d.provider_document_id for d in documents])
        _save(request.id, provider_signer_id=signer_id)
    activated = _activate(provider, pid)
    with transaction():
        locked = _locked(request.id)
        _save(request.id, signature_link=activated.signature_link)
        moved = next_status(locked.status, from_provider_status(activated.status))
        if moved is not None:
            apply_status(locked, moved)
    log.info("onboarding envelope activated", extra={"fields": {
        "signatureRequestId": request.id, "providerSignatureRequestId": pid}})


def _activate(provider: SignatureProvider, pid: str) -> ProviderRequest:
    """Activate the request; when the provider refuses because a previous run (whose answer was
    lost) activated it already, its current state serves instead."""
    try:
        return provider.activate(pid)
    except ProviderRejected:
        remote = provider.get_request(pid)
        if remote.status == "draft":
            raise
        return remote


def onboarding_state(*, principal: Principal, organization_id: str, provider: SignatureProvider,
                     reconcile: bool = False) -> tuple[Organization, SignatureRequest | None, list[SignatureDocument]]:
    """The organization (member or admin), its latest envelope and that envelope's documents;
    `reconcile` asks the provider first (a provider failure is logged, the stored state answered)."""
    organization = organization_for(principal, organization_id)
    envelope = latest_envelope(organization.id)
    if envelope is not None and reconcile:
        try:
            reconcile_envelope(envelope.id, provider=provider)
        except ProviderError as exc:
            log.warning("on-demand reconciliation failed", extra={"fields": {
                "signatureRequestId": envelope.id, "error": str(exc)}})
        envelope = SignatureRequest.get_by_id(envelope.id)
    return organization, envelope, envelope_documents(envelope.id) if envelope else []


# Written out: the session route asks it on every call (see backend/identity/sessions.py).
PENDING_ENVELOPE_SQL = (
    "SELECT EXISTS (SELECT 1 FROM onboarding_signature_request WHERE organization_id = %s AND status = ANY(%s))"
)
_PENDING_STATUSES = sorted(status.value for status in PENDING)


def has_pending_envelope(organization_id: str) -> bool:
    """Whether workspace access must go to `/onboarding-signature-pending` (spec A, point 4)."""
    return database.execute_sql(PENDING_ENVELOPE_SQL, (organization_id, _PENDING_STATUSES)).fetchone()[0]


def latest_envelope(organization_id: str) -> SignatureRequest | None:
    return (SignatureRequest.select().where(SignatureRequest.organization == organization_id)
            .order_by(SignatureRequest.created_at.desc(), SignatureRequest.id.desc()).first())


def envelope_documents(request_id: str) -> list[SignatureDocument]:
    return list(SignatureDocument.select().where(SignatureDocument.signature_request == request_id)
                .order_by(SignatureDocument.id))
