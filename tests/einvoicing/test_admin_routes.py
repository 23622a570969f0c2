"""E-invoicing admin routes and the deprecated operator webhook, through the app; the app's
operator client is pointed at the simulator by the configuration (as `vitrine dev` does)."""

from __future__ import annotations

import pytest

from backend.einvoicing import lifecycle
from backend.einvoicing.models import Transmission
from tests.einvoicing.conftest import CLIENT_ID, CLIENT_SECRET, ENTITY_ID
from tests.factories import make_admin, make_organization, make_user, signed_in

BASE = "/api/admin/einvoicing"


@pytest.fixture
def api(make_app, operator):
    import falcon.testing

    app = make_app(odp_base_url=operator.url, odp_token_url=operator.token_url, odp_client_id=CLIENT_ID,
                   odp_client_secret=CLIENT_SECRET, odp_entity_id=ENTITY_ID)
    return falcon.testing.TestClient(app)


@pytest.fixture
def admin_headers():
    return signed_in(make_admin())


def test_admin_routes_need_the_admin_role(api, issue):
    draft = issue()
    user = make_user()
    headers = signed_in(user, make_organization())
    for method, path in (("GET", f"{BASE}/transmissions"), ("GET", f"{BASE}/reconciliation"),
                         ("POST", f"{BASE}/transmissions/{draft.id}/retry"),
                         ("POST", f"{BASE}/transmissions/{draft.id}/resync")):
        assert api.simulate_request(method, path).status_code == 401
        answer = api.simulate_request(method, path, headers=headers)
        assert (answer.status_code, answer.json["error"]["code"]) == (403, "FORBIDDEN")
    assert Transmission.get_by_id(draft.id).status == "pending_dispatch"


def test_list_filters_search_and_pagination(api, admin_headers, issue, storage, operator_client):
    credit = issue(document_kind="credit_note", invoice_kind="platform_credit_note")
    sent = issue()
    lifecycle.dispatch(sent.id, client=operator_client, storage=storage)
    pending = issue()

    def ids(**params):
        answer = api.simulate_get(f"{BASE}/transmissions", params=params, headers=admin_headers)
        assert answer.status_code == 200, answer.json
        return [item["id"] for item in answer.json["data"]["items"]], answer.json["data"]

    assert ids(status="sent")[0] == [sent.id]
    assert set(ids(status=["pending_dispatch"])[0]) >= {credit.id, pending.id}
    assert ids(documentKind="credit_note", search=credit.invoice_number)[0] == [credit.id]
    assert ids(search=pending.invoice_number[-8:])[0] == [pending.id]
    found, page = ids(search="FAC-RES-2026-", pageSize=1, page=2, sortBy="createdAt", sortDir="asc")
    assert page["pageSize"] == 1 and page["page"] == 2 and page["total"] >= 3 and len(found) == 1
    item = api.simulate_get(f"{BASE}/transmissions", params={"status": "sent"}, headers=admin_headers) \
        .json["data"]["items"][0]
    assert item["providerStatus"] == "processing" and item["providerFlowId"] and item["flowType"] == "fr_domestic_b2b"
    assert item["idempotencyKey"] == f"{sent.invoice_number}:invoice:fr_domestic_b2b"


@pytest.mark.parametrize("params", [{"status": "lost"}, {"sortBy": "secret"}, {"pageSize": "500"},
                                    {"flowType": "b2c"}])
def test_list_refuses_bad_queries(api, admin_headers, params):
    answer = api.simulate_get(f"{BASE}/transmissions", params=params, headers=admin_headers)
    assert (answer.status_code, answer.json["error"]["code"]) == (400, "VALIDATION_ERROR")


def test_one_transmission_with_its_history(api, admin_headers, issue):
    draft = issue()
    answer = api.simulate_get(f"{BASE}/transmissions/{draft.id}", headers=admin_headers)
    assert answer.status_code == 200
    assert [e["toStatus"] for e in answer.json["data"]["history"]] == ["pending_dispatch"]
    assert api.simulate_get(f"{BASE}/transmissions/nope", headers=admin_headers).status_code == 404


def test_retry_and_resync_walk_a_transmission_to_acknowledged(api, admin_headers, issue, operator):
    draft = issue()
    retried = api.simulate_post(f"{BASE}/transmissions/{draft.id}/retry", headers=admin_headers)
    assert retried.status_code == 200 and retried.json["data"]["status"] == "sent"
    operator.act(retried.json["data"]["providerFlowId"], "ok")
    resynced = api.simulate_post(f"{BASE}/transmissions/{draft.id}/resync", headers=admin_headers)
    assert resynced.json["data"]["status"] == "acknowledged"
    history = api.simulate_get(f"{BASE}/transmissions/{draft.id}", headers=admin_headers).json["data"]["history"]
    assert [(e["toStatus"], e["trigger"]) for e in history] == [
        ("pending_dispatch", "draft_created"), ("dispatching", "admin_retry"), ("sent", "admin_retry"),
        ("acknowledged", "admin_resync")]
    assert history[-1]["actorUserId"] is not None
    again = api.simulate_post(f"{BASE}/transmissions/{draft.id}/retry", headers=admin_headers)
    assert (again.status_code, again.json["error"]["code"]) == (409, "CONFLICT")
    # Acknowledged, it keeps following its flow: a resync brings the lifecycle statuses since.
    operator.control(f"flows/{retried.json['data']['providerFlowId']}/lifecycle", {"code": 205})
    approved = api.simulate_post(f"{BASE}/transmissions/{draft.id}/resync", headers=admin_headers)
    assert approved.status_code == 200 and [item["code"] for item in approved.json["data"]["lifecycle"]] == [205]


@pytest.mark.owner  # fakes the credited invoice with a temporary table: only the owner may create one
def test_a_refusal_reaches_the_attention_list_until_the_invoice_is_credited(api, admin_headers, issue, operator,
                                                                            operator_client, storage):
    from backend.db import database
    from backend.einvoicing import lifecycle, polling

    refused, approved = issue(), issue()
    for draft in (refused, approved):
        flow_id = lifecycle.dispatch(draft.id, client=operator_client, storage=storage).provider_flow_id
        operator.act(flow_id, "ok")
        operator.control(f"flows/{flow_id}/lifecycle", {"code": 200})
        operator.control(f"flows/{flow_id}/lifecycle", {"code": 210 if draft is refused else 205,
                                                        "reason": "Montant contesté" if draft is refused else None})
    for _ in range(2):  # the second pass finds the same statuses again: stored once
        polling.run_pass(polling.start_pass_if_due(1), client=operator_client, storage=storage)
    listed = api.simulate_get(f"{BASE}/transmissions", params={"attention": "true"}, headers=admin_headers)
    assert [item["invoiceNumber"] for item in listed.json["data"]["items"]] == [refused.invoice_number]
    [item] = listed.json["data"]["items"]
    assert [(entry["code"], entry["label"], entry["reason"]) for entry in item["lifecycle"]] == [
        (200, "Déposée", None), (210, "Refusée", "Montant contesté")]
    assert item["status"] == "acknowledged"
    by_code = api.simulate_get(f"{BASE}/transmissions", params={"lifecycleCode": "205"}, headers=admin_headers)
    assert [i["invoiceNumber"] for i in by_code.json["data"]["items"]] == [approved.invoice_number]
    # The invoice credited in full (the credit note it calls for): out of the attention list.
    database.execute_sql("CREATE TEMP TABLE billing_invoice (id varchar(36), number varchar(80), kind varchar(40), "
                         "issued_at timestamptz, status varchar(40), customer jsonb) ON COMMIT DROP")
    database.execute_sql("INSERT INTO billing_invoice VALUES ('i-1', %s, 'platform_sale', now(), 'credited', NULL)",
                         (refused.invoice_number,))
    listed = api.simulate_get(f"{BASE}/transmissions", params={"attention": "true"}, headers=admin_headers)
    assert listed.json["data"]["items"] == []


def test_retry_answers_502_on_401_and_409_without_pdf(api, admin_headers, issue, operator):
    draft = issue()
    operator.faults(unauthorized=True)
    answer = api.simulate_post(f"{BASE}/transmissions/{draft.id}/retry", headers=admin_headers)
    assert (answer.status_code, answer.json["error"]["code"]) == (502, "EINVOICE_PROVIDER_FAILED")
    stored = Transmission.get_by_id(draft.id)
    assert stored.status == "failed" and "401" in stored.last_error_message
    no_pdf = issue(with_pdf=False)
    answer = api.simulate_post(f"{BASE}/transmissions/{no_pdf.id}/retry", headers=admin_headers)
    assert (answer.status_code, answer.json["error"]["code"]) == (409, "EINVOICE_MISSING_PDF")


def test_retry_after_429_then_recovery(api, admin_headers, issue, operator, storage, operator_client):
    draft = issue()
    operator.faults(rate_limited_calls=3)
    assert lifecycle.dispatch(draft.id, client=operator_client, storage=storage).status == "failed"
    answer = api.simulate_post(f"{BASE}/transmissions/{draft.id}/retry", headers=admin_headers)
    assert answer.json["data"]["status"] == "sent" and answer.json["data"]["dispatchAttempts"] == 2


def test_the_operator_webhook_is_gone_and_its_caller_logged(api, log_lines):
    answer = api.simulate_post("/api/webhooks/odp", body=b'{"flowId": "x"}',
                               headers={"Content-Type": "application/json", "User-Agent": "odp-notifier/2"})
    assert answer.status_code == 410
    assert answer.json["ok"] is False and answer.json["error"]["code"] == "WEBHOOK_DEPRECATED"
    assert answer.headers.get("x-request-id")
    [line] = [line for line in log_lines() if line["scope"] == "einvoicing.webhook.deprecated"]
    assert line["userAgent"] == "odp-notifier/2" and line["clientIp"] and line["level"] == "warn"
