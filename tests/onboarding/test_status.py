"""Status rules: provider normalization, event mapping, moves that never go backwards, and the
verification levels of Specification A."""

from __future__ import annotations

import pytest

from backend.errors import ValidationError
from backend.onboarding.status import (
    EVENT_TARGETS,
    PENDING,
    TERMINAL,
    ESignStatus,
    asks_for_terminal,
    from_provider_status,
    next_status,
)
from backend.onboarding.verification import default_policy, verification_for

S = ESignStatus


@pytest.mark.parametrize(("provider", "internal"), [
    ("draft", S.DRAFT), ("approval", S.PENDING_SIGNATURE), ("ongoing", S.PENDING_SIGNATURE), ("done", S.SIGNED),
    ("declined", S.DECLINED), ("expired", S.EXPIRED), ("canceled", S.CANCELED), ("rejected", S.CANCELED),
    ("something_new", None), (None, None),
])
def test_provider_statuses_are_normalized_as_specified(provider, internal):
    assert from_provider_status(provider) == internal


def test_every_subscribed_event_of_specification_a_is_mapped():
    assert set(EVENT_TARGETS) == {
        "signature_request.activated", "signature_request.done", "signature_request.declined",
        "signature_request.expired", "signature_request.canceled", "signer.notified", "signer.link_opened",
        "signer.done", "signer.declined", "signer.error", "signer.notification_delivery_failed",
    }
    assert {name for name in EVENT_TARGETS if asks_for_terminal(name)} == {
        "signature_request.done", "signature_request.declined", "signature_request.expired",
        "signature_request.canceled", "signer.declined",
    }


@pytest.mark.parametrize("terminal", sorted(TERMINAL))
@pytest.mark.parametrize("target", list(S))
def test_a_terminal_status_never_moves(terminal, target):
    assert next_status(terminal, target) is None


def test_live_statuses_only_move_forward():
    assert next_status(S.PENDING_SIGNATURE, S.SIGNER_OPENED) == S.SIGNER_OPENED
    assert next_status(S.SIGNER_OPENED, S.SIGNER_NOTIFIED) is None
    assert next_status(S.SIGNER_NOTIFIED, S.PENDING_SIGNATURE) is None
    assert next_status(S.SIGNER_OPENED, S.SIGNED) == S.SIGNED
    assert next_status(S.SIGNER_OPENED, None) is None


def test_an_older_event_moves_nothing_but_a_confirmed_terminal_status():
    assert next_status(S.PENDING_SIGNATURE, S.SIGNER_OPENED, newer=False) is None
    assert next_status(S.SIGNER_OPENED, S.DECLINED, newer=False) == S.DECLINED


def test_error_is_reached_from_a_live_status_and_left_by_a_newer_event():
    assert next_status(S.SIGNER_NOTIFIED, S.ERROR) == S.ERROR
    assert next_status(S.ERROR, S.SIGNER_OPENED) == S.SIGNER_OPENED
    assert next_status(S.ERROR, S.SIGNER_OPENED, newer=False) is None
    assert S.ERROR not in PENDING and S.ERROR not in TERMINAL


@pytest.mark.parametrize(("document", "amount", "policy"), [
    ("sepa_mandate", None, "required"),
    ("delegation_proof", None, "required"),
    ("framework_contract", 1_000_001, "required"),
    ("framework_contract", 1_000_000, "none"),
    ("framework_contract", None, "none"),
    ("cgu_acceptance", None, "none"),
])
def test_default_policy_per_document_type(document, amount, policy):
    assert default_policy(document, amount_cents=amount, threshold_cents=1_000_000) == policy


def test_verification_levels():
    qualified = verification_for("qualified")
    assert (qualified.signature_level, qualified.authentication_mode) == ("qualified_electronic_signature", None)
    required = verification_for("required")
    assert (required.signature_level, required.authentication_mode) == ("advanced_electronic_signature", "otp_sms")
    assert verification_for("none").authentication_mode == "otp_email"
    assert verification_for("none", "no_otp").authentication_mode == "no_otp"
    with pytest.raises(ValidationError):
        verification_for("required", "otp_email")
    with pytest.raises(ValidationError):
        verification_for("qualified", "otp_sms")
