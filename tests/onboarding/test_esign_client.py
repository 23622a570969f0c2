"""The provider API v3 client against the simulator: creation flow, upload fallbacks, retries,
credentials, phone numbers in E.164, and no API key in any log line."""

from __future__ import annotations

import pytest
import requests

from backend.errors import ValidationError
from backend.identity.french_ids import to_e164
from backend.onboarding.provider import ProviderCredentialsInvalid, ProviderError, ProviderRejected, SignerInfo
from ops.simulators.esign_store import minimal_pdf
from tests.onboarding.conftest import API_KEY, fast_client

PDF = minimal_pdf("Mandat SEPA")
SIGNER = SignerInfo(first_name="Ada", last_name="Martin", email="ada@example.com", phone="+33612345678")


def _faults(simulator, **values) -> None:
    requests.post(f"{simulator.url}/_control/faults", json=values, timeout=5).raise_for_status()


def _draft(provider) -> str:
    return provider.create_request(name="Onboarding", external_id="industrial:552100554", delivery_mode="email",
                                   ordered_signers=True, locale="fr")


def test_full_creation_flow_activates_an_envelope_with_a_signature_link(provider, simulator):
    request_id = _draft(provider)
    document_id = provider.upload_document(request_id, filename="contract.pdf", content=PDF)
    signer_id = provider.add_signer(request_id, signer=SIGNER, signature_level="qualified_electronic_signature",
                                    authentication_mode=None, document_ids=[document_id])
    activated = provider.activate(request_id)
    assert activated.status == "ongoing"
    assert activated.signature_link == f"{simulator.url}/sign/{request_id}"
    assert activated.signers[0].id == signer_id and activated.document_ids == (document_id,)
    stored = simulator.store.requests[request_id]
    assert stored["info"] == {"locale": "fr"} and stored["ordered_signers"] is True
    assert stored["documents"][0]["parse_anchors"] is True
    assert provider.get_request(request_id).status == "ongoing"


def test_upload_retries_without_anchor_parsing_after_a_400(provider, simulator, log_lines):
    request_id = _draft(provider)
    anchored = provider.upload_document(request_id, filename="contract.pdf", content=PDF)
    _faults(simulator, reject_parse_anchors=True)
    explicit = provider.upload_document(request_id, filename="sepa.pdf", content=PDF)
    assert [d["parse_anchors"] for d in simulator.store.requests[request_id]["documents"]] == [True, False]
    provider.add_signer(request_id, signer=SIGNER, signature_level="qualified_electronic_signature",
                        authentication_mode=None, document_ids=[anchored, explicit])
    fields = simulator.store.requests[request_id]["signers"][0]["fields"]
    # Every field carries the explicit page-1 position; the provider's anchors replace it where parsed.
    assert [(f["document_id"], f["page"], f["x"], f["y"], f["placement"]) for f in fields] == [
        (anchored, 1, 77, 600, "anchor"), (explicit, 1, 77, 600, "explicit")]
    fallbacks = [line for line in log_lines() if line["message"].startswith("document upload refused")]
    assert [line["encoding"] for line in fallbacks] == ["multipart"]


def test_upload_falls_back_to_a_json_base64_body_when_multipart_is_refused(provider, simulator):
    request_id = _draft(provider)
    _faults(simulator, reject_parse_anchors=True, reject_multipart=True)
    document_id = provider.upload_document(request_id, filename="contract.pdf", content=PDF)
    assert simulator.store.requests[request_id]["documents"][0]["content"] == PDF
    assert provider.download_document(request_id, document_id) == PDF


def test_upload_gives_up_with_the_last_refusal_when_every_encoding_fails(provider, simulator):
    request_id = _draft(provider)
    with pytest.raises(ProviderRejected) as refused:
        provider.upload_document(request_id, filename="notes.txt", content=b"not a pdf")
    assert refused.value.status == 400


def test_rate_limits_and_unavailability_are_retried(provider, simulator):
    _faults(simulator, rate_limited_calls=2, unavailable_calls=1)
    assert _draft(provider)


def test_retries_are_bounded(simulator):
    client = fast_client(simulator.api_url)
    _faults(simulator, unavailable_calls=10)
    with pytest.raises(ProviderError, match="unavailable") as failed:
        _draft(client)
    assert failed.value.status == 503
    assert simulator.store.faults.unavailable_calls == 10 - client.attempts


def test_an_unreachable_provider_is_retried_then_reported(free_port, log_lines):
    client = fast_client(f"http://127.0.0.1:{free_port()}/v3")  # nothing listens there
    with pytest.raises(ProviderError, match="unavailable") as failed:
        _draft(client)
    assert failed.value.status is None
    unreachable = [line for line in log_lines() if line["message"] == "e-signature provider unreachable"]
    assert [line["error"] for line in unreachable] == ["ConnectionError"] * client.attempts


@pytest.mark.parametrize("api_key", ["wrong-key-0000", None])
def test_invalid_credentials_say_so(simulator, api_key):
    with pytest.raises(ProviderCredentialsInvalid, match="provider credentials are invalid"):
        _draft(fast_client(simulator.api_url, api_key=api_key))


def test_the_api_key_never_reaches_a_log_line(simulator, log_lines):
    client = fast_client(simulator.api_url)
    _faults(simulator, rate_limited_calls=1)
    request_id = _draft(client)
    with pytest.raises(ProviderRejected):
        client.get_request(request_id + "-missing")
    _faults(simulator, unauthorized=True)
    with pytest.raises(ProviderCredentialsInvalid):
        client.get_request(request_id)
    text = log_lines.raw()
    assert "e-signature provider call" in text
    assert API_KEY not in text and API_KEY not in repr(client)


@pytest.mark.parametrize(("raw", "expected"), [
    ("06 12 34 56 78", "+33612345678"),
    ("0612345678", "+33612345678"),
    ("01.23.45.67.89", "+33123456789"),
    ("+33 6 12 34 56 78", "+33612345678"),
    ("0033612345678", "+33612345678"),
    ("+32 470 12 34 56", "+32470123456"),
])
def test_phone_numbers_are_normalized_to_e164(raw, expected):
    assert to_e164(raw) == expected


@pytest.mark.parametrize("raw", ["123", "06 12", "not a phone"])
def test_impossible_phone_numbers_are_refused(raw):
    with pytest.raises(ValidationError):
        to_e164(raw)


def test_an_otp_sms_signer_is_accepted_with_a_normalized_french_number(provider):
    request_id = _draft(provider)
    document_id = provider.upload_document(request_id, filename="sepa.pdf", content=PDF)
    signer = SignerInfo("Ada", "Martin", "ada@example.com", to_e164("06 12 34 56 78"))
    assert provider.add_signer(request_id, signer=signer, signature_level="advanced_electronic_signature",
                               authentication_mode="otp_sms", document_ids=[document_id])


def test_cancel_and_audit_trail_download(provider, simulator):
    request_id = _draft(provider)
    document_id = provider.upload_document(request_id, filename="contract.pdf", content=PDF)
    signer_id = provider.add_signer(request_id, signer=SIGNER, signature_level="qualified_electronic_signature",
                                    authentication_mode=None, document_ids=[document_id])
    provider.activate(request_id)
    requests.post(f"{simulator.url}/_control/signature_requests/{request_id}/sign", timeout=5).raise_for_status()
    assert provider.download_audit_trail(request_id, signer_id).startswith(b"%PDF")
    assert provider.download_document(request_id, document_id) != PDF  # the signed version
    with pytest.raises(ProviderRejected):
        provider.cancel(request_id)  # a done request cannot be canceled
