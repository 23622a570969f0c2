"""SEPA mandates: recorded when an onboarding envelope holding a `sepa_mandate` document is signed,
ended when the organization's IBAN changes."""

from __future__ import annotations

from actors import billing as billing_actors
from backend import events
from backend.billing import sepa_mandates
from backend.billing.models import SepaMandate
from backend.identity.models import BillingProfile
from backend.onboarding.events import apply_status
from backend.onboarding.models import SignatureDocument, SignatureRequest
from backend.onboarding.status import ESignStatus
from backend.outbox import OutboxMessage
from tests.billing.helpers import approved_org


def _envelope(organization, *, documents=("framework_contract", "sepa_mandate")) -> SignatureRequest:
    request = SignatureRequest.create(organization=organization.id, status=ESignStatus.SIGNER_OPENED,
                                      identity_verification_policy="qualified",
                                      signature_level="qualified_electronic_signature",
                                      signer_on_registry_extract=True)
    for document_type in documents:
        SignatureDocument.create(signature_request=request.id, document_type=document_type,
                                 identity_verification_policy="qualified",
                                 signature_level="qualified_electronic_signature")
    return request


def _sign(request: SignatureRequest) -> None:
    apply_status(SignatureRequest.get_by_id(request.id), ESignStatus.SIGNED)


def test_signing_the_onboarding_envelope_records_the_active_mandate_once():
    organization = approved_org("industrial")
    request = _envelope(organization)
    _sign(request)
    rows = OutboxMessage.select().where(OutboxMessage.actor_name == "record_sepa_mandate")
    assert [row.args for row in rows] == [[request.id]]
    billing_actors.record_sepa_mandate.fn(request.id)
    billing_actors.record_sepa_mandate.fn(request.id)  # a second delivery changes nothing
    mandate = sepa_mandates.active_mandate(organization.id)
    assert mandate.iban == "FR7630006000011234567890189" and mandate.signature_request_id == request.id
    assert len(mandate.mandate_ref) <= 35
    # one RUM: the reference the signed document prints is the one recorded (and quoted in debits)
    from datetime import date

    from backend.identity.models import BillingProfile
    from backend.onboarding.documents import document_context
    from tests.billing.helpers import booted_config

    printed = document_context("sepa_mandate", request=request, organization=organization,
                               profile=BillingProfile.get(BillingProfile.organization == organization.id),
                               config=booted_config(), today=date(2026, 12, 1))["mandateReference"]
    assert mandate.mandate_ref == printed
    assert SepaMandate.select().where(SepaMandate.organization_id == organization.id).count() == 1


def test_a_new_signed_envelope_supersedes_the_previous_mandate():
    organization = approved_org("industrial")
    first = _envelope(organization)
    _sign(first)
    old = sepa_mandates.record_from_envelope(first.id)
    second = _envelope(organization)
    _sign(second)
    new = sepa_mandates.record_from_envelope(second.id)
    assert sepa_mandates.active_mandate(organization.id).id == new.id
    assert SepaMandate.get_by_id(old.id).status == "ended" and new.mandate_ref != old.mandate_ref


def test_no_mandate_without_iban_without_document_or_before_signature():
    without_iban = approved_org("industrial", iban=None)
    request = _envelope(without_iban)
    _sign(request)
    assert sepa_mandates.record_from_envelope(request.id) is None
    organization = approved_org("industrial")
    unsigned = _envelope(organization)
    assert sepa_mandates.record_from_envelope(unsigned.id) is None
    no_sepa = _envelope(approved_org("industrial"), documents=("framework_contract",))
    _sign(no_sepa)
    assert sepa_mandates.record_from_envelope(no_sepa.id) is None
    assert not SepaMandate.select().exists()


def test_an_iban_change_ends_the_active_mandate():
    organization = approved_org("industrial")
    request = _envelope(organization)
    _sign(request)
    sepa_mandates.record_from_envelope(request.id)
    BillingProfile.update(iban="FR7612345000019876543210987").where(
        BillingProfile.organization == organization.id).execute()
    events.publish(events.ORGANIZATION_IBAN_CHANGED, organization.id)
    (row,) = OutboxMessage.select().where(OutboxMessage.actor_name == "end_sepa_mandates")
    billing_actors.end_sepa_mandates.fn(*row.args)
    assert sepa_mandates.active_mandate(organization.id) is None
    assert SepaMandate.get(SepaMandate.organization_id == organization.id).end_reason == "iban_changed"
