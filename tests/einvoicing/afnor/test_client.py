"""The AFNOR Flow Service client against the platform simulator over HTTP: every request and
answer validated against our description of XP Z12-013 annexes A and B (conftest's `contract`)."""

from __future__ import annotations

import hashlib
import json
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openapi_core.exceptions import OpenAPIError

from backend import context
from backend.einvoicing import afnor_client as afnor_module
from backend.einvoicing import cdar, lifecycle, reform_statuses
from backend.einvoicing.operator_client import (
    OperatorClient,
    OperatorCredentialsInvalid,
    OperatorNotConfigured,
    OperatorUnavailable,
)
from ops.simulators.esign_store import minimal_pdf
from tests.einvoicing.afnor.conftest import CLIENT_SECRET
from tests.einvoicing.test_cdar import message

BEGINNING = "2020-01-01T00:00:00.000Z"


def tracking() -> str:
    return f"FAC-RES-2026-{uuid.uuid4().hex[:6]}"


def submit(client, tracking_id: str | None = None):
    tracking_id = tracking_id or tracking()
    return client.submit_flow(tracking_id=tracking_id, name=f"{tracking_id}.pdf", content=minimal_pdf(tracking_id))


def test_the_client_is_an_operator_client_and_posts_the_standard_s_flow_info(platform, afnor_client, contract):
    assert isinstance(afnor_client, OperatorClient)
    tracking_id = tracking()
    flow = submit(afnor_client, tracking_id)
    assert (flow.status, flow.tracking_id) == ("Pending", tracking_id)
    stored = platform.flows(tracking_id)
    assert len(stored) == 1 and (stored[0]["flowSyntax"], stored[0]["flowProfile"], stored[0]["processingRule"]) == (
        "Factur-X", "Basic", "B2B")
    assert flow.answer["sha256"] == hashlib.sha256(minimal_pdf(tracking_id)).hexdigest()
    assert afnor_client.get_flow(flow.flow_id).status == "Pending"
    platform.act(flow.flow_id, "ok")
    assert afnor_client.find_by_tracking_id(tracking_id).status == "Ok"
    assert afnor_client.find_by_tracking_id(tracking()) is None
    assert afnor_client.get_flow("afnor-unknown") is None
    assert {("POST", "/v1/flows", 202), ("POST", "/v1/flows/search", 200)} <= contract.operations()


def test_an_error_acknowledgement_is_a_213_with_an_admitted_reason_and_keeps_the_standard_s(platform, afnor_client):
    flow = submit(afnor_client)
    platform.act(flow.flow_id, "error", "BT-48 absent", code="InvalidSchema")
    found = afnor_client.get_flow(flow.flow_id)
    assert (found.status, found.error_message) == ("Error", "BT-48 absent")
    rejection = lifecycle.rejection_of(found)
    # IRR_SYNTAX is the flow's admissibility, which a 213 does not admit (BR-FR-CDV-CL-09)
    assert rejection.code == 213 and rejection.reason == "REJ_SEMAN BT-48 absent"
    assert [(e["code"], e["reasonCode"]) for e in found.answer["errors"]] == [("IRR_SYNTAX", "InvalidSchema")]


def test_a_reason_outside_the_standard_s_list_stays_a_semantic_rejection(platform, afnor_client):
    flow = submit(afnor_client)
    platform.act(flow.flow_id, "error", "refused", code="PA-SPECIFIC-42")
    assert lifecycle.rejection_of(afnor_client.get_flow(flow.flow_id)).reason == "REJ_SEMAN refused"


def test_a_flow_refused_as_already_existing_stands_for_the_original(platform, afnor_client):
    platform.settings(reject_duplicates=True)
    tracking_id = tracking()
    first = submit(afnor_client, tracking_id)
    second = submit(afnor_client, tracking_id)  # e.g. another process that did not search first
    platform.act(first.flow_id, "ok")
    stored = {flow["flowId"]: flow for flow in platform.flows(tracking_id)}
    assert stored[second.flow_id]["acknowledgement"]["details"][0]["reasonCode"] == "AlreadyExistingFlow"
    assert afnor_client.get_flow(second.flow_id).status == "Ok"  # not a rejection: the PA holds the invoice
    assert afnor_client.find_by_tracking_id(tracking_id).flow_id == first.flow_id


def test_a_wrong_checksum_is_acknowledged_error(platform, afnor_client, contract):
    session = afnor_client.session
    token = afnor_client.tokens.get()
    info = {"trackingId": tracking(), "flowSyntax": "Factur-X", "sha256": "0" * 64}
    answer = session.post(platform.simulator.flow_url + "/v1/flows", headers={"Authorization": f"Bearer {token}"},
                          files={"flowInfo": (None, json.dumps(info), "application/json"),
                                 "file": ("x.pdf", minimal_pdf("x"), "application/pdf")}, timeout=5)
    flow = afnor_client.get_flow(answer.json()["flowId"])
    assert flow.status == "Error" and flow.answer["errors"][0]["reasonCode"] == "ChecksumMismatch"


def test_the_contract_refuses_a_flow_info_field_the_standard_does_not_define(platform, afnor_client, contract):
    """The spec operator's `flowType` and `entityId` are not in the standard's `FlowInfo`: a client
    sending them fails the contract (and the simulator refuses them too)."""
    session = afnor_client.session
    token = afnor_client.tokens.get()
    pdf = minimal_pdf("x")
    info = {"trackingId": tracking(), "flowSyntax": "Factur-X", "flowType": "CustomerInvoice",
            "sha256": hashlib.sha256(pdf).hexdigest()}
    with pytest.raises(OpenAPIError):
        session.post(platform.simulator.flow_url + "/v1/flows", headers={"Authorization": f"Bearer {token}"},
                     files={"flowInfo": (None, json.dumps(info), "application/json"),
                            "file": ("x.pdf", pdf, "application/pdf")}, timeout=5)


def test_a_status_message_goes_through_the_same_client_as_cdar(platform, afnor_client):
    content = cdar.build(message())
    flow = afnor_client.submit_flow(tracking_id="FAC-RES-2026-000001:212", name="s.xml", content=content,
                                    flow_syntax="CDAR", content_type="application/xml", flow_type="CustomerInvoiceLC")
    stored = platform.flows("FAC-RES-2026-000001:212")
    assert flow.status == "Pending" and stored[0]["flowType"] == "CustomerInvoiceLC"
    assert "flowProfile" not in stored[0]


def test_429_and_503_are_retried_with_retry_after(platform, afnor_client, waits):
    platform.settings(retry_after_seconds=2)
    platform.faults(rate_limited_calls=1, unavailable_calls=1)
    assert submit(afnor_client).status == "Pending"
    assert waits[0] == 2.0 and len(waits) == 2
    platform.faults(unavailable_calls=3)
    with pytest.raises(OperatorUnavailable):
        afnor_client.find_by_tracking_id(tracking())


def test_a_lost_answer_is_searched_and_never_posted_twice(platform, afnor_client):
    tracking_id = tracking()
    platform.faults(lost_answers=1)
    flow = submit(afnor_client, tracking_id)
    assert [f["flowId"] for f in platform.flows(tracking_id)] == [flow.flow_id]


def test_a_result_of_another_tracking_id_is_never_adopted(platform, afnor_client):
    submit(afnor_client)
    platform.faults(search_ignores_filters=True)
    assert afnor_client.find_by_tracking_id(tracking()) is None


def test_credentials_and_identity(platform, make_afnor_client):
    with pytest.raises(OperatorCredentialsInvalid):
        make_afnor_client(client_secret="not-the-secret").find_by_tracking_id("x")
    client = make_afnor_client()
    platform.faults(unauthorized=True)
    with pytest.raises(OperatorCredentialsInvalid):
        submit(client)
    calls = platform.calls()
    with pytest.raises(OperatorNotConfigured, match="AFNOR_CLIENT_SECRET"):
        make_afnor_client(client_secret=None).get_flow("x")
    assert platform.calls() == calls
    assert CLIENT_SECRET not in repr(client)


def test_x_request_id_carries_the_request_s_id_when_it_is_a_uuid(platform, afnor_client, contract):
    request_id = str(uuid.uuid4())
    token = context.bind_request_id(request_id)
    try:
        afnor_client.find_by_tracking_id("x")
    finally:
        context.reset_request_id(token)
    afnor_client.find_by_tracking_id("y")
    sent = [headers["X-Request-Id"] for *_, headers in contract.calls]
    assert sent[0] == request_id and sent[1] != request_id and uuid.UUID(sent[1])


def test_the_directory_line_decides_whether_the_recipient_is_registered(platform, afnor_client, contract):
    assert afnor_client.recipient_registered("552100554")
    platform.control("directory", {"siren": "552100554", "registered": False})
    assert not afnor_client.recipient_registered("552100554")
    assert {("GET", "/v1/directory-line", 200), ("GET", "/v1/directory-line", 404)} <= contract.operations()


def test_an_incoming_lifecycle_flow_is_a_status_of_the_invoice_s_flow(platform, afnor_client):
    tracking_id = tracking()
    flow = submit(afnor_client, tracking_id)
    platform.act(flow.flow_id, "ok")
    platform.lifecycle(flow.flow_id, 210, reason="Commande inconnue", reason_code="CMD_ERR")
    changed = [f for page in afnor_client.changed_pages(updated_after=BEGINNING) for f in page]
    assert [f.flow_id for f in changed] == [flow.flow_id]
    (status,) = changed[0].lifecycle
    assert changed[0].status == "Ok" and status.code == 210 and status.reason == "CMD_ERR Commande inconnue"
    other = submit(afnor_client)
    platform.lifecycle(other.flow_id, 204)
    # A resync reads the flow with the statuses received for it since, its own only.
    assert [s.code for s in afnor_client.get_flow(flow.flow_id).lifecycle] == [210]
    assert [s.code for s in afnor_client.get_flow(other.flow_id).lifecycle] == [204]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.tuples(st.sampled_from(["submit", "ok", "error"]), st.integers(0, 20)), min_size=1,
                      max_size=12), page_size=st.integers(1, 4))
def test_paging_by_updated_after_sees_every_change_once_whatever_the_page_size(
        platform, afnor_client, monkeypatch, steps, page_size):
    """Without offsets, pages follow `updatedAfter`: every flow changed after the start is seen,
    the last state of each is the one reported, and no flow is reported twice for one change."""
    platform.control("reset")
    monkeypatch.setattr(afnor_module, "SEARCH_PAGE_SIZE", page_size)
    client = afnor_client.__class__(flow_url=afnor_client.base_url, directory_url=afnor_client.directory_url,
                                    token_url=afnor_client.token_url, client_id=afnor_client.client_id,
                                    client_secret=CLIENT_SECRET, scope=afnor_client.scope,
                                    session=afnor_client.session, sleep=lambda _: None)
    flows: list[str] = []
    for action, index in steps:
        if action == "submit" or not flows:
            flows.append(submit(client).flow_id)
        else:
            platform.act(flows[index % len(flows)], action)
    seen = [f for page in client.changed_pages(updated_after=BEGINNING) for f in page]
    assert sorted(f.flow_id for f in seen) == sorted(flows)
    expected = {f["flowId"]: f["acknowledgement"]["status"] for f in platform.flows()}
    assert {f.flow_id: f.status for f in seen} == expected


def test_a_status_that_needs_a_reason_is_a_valid_message_when_the_platform_names_none(platform, afnor_client):
    """The simulator gives it a reason code the reform admits for it (a 210 admits no `AUTRE`)."""
    flow = submit(afnor_client)
    platform.act(flow.flow_id, "ok")
    for code in sorted(reform_statuses.REASON_REQUIRED):
        platform.lifecycle(flow.flow_id, code, "motif")
    read = afnor_client.get_flow(flow.flow_id)
    assert sorted(status.code for status in read.lifecycle) == sorted(reform_statuses.REASON_REQUIRED)
    assert {status.reason.split()[0] for status in read.lifecycle if status.code == 210} == {"NON_CONFORME"}
