"""Point 6: the admin collect route, the retry pass of auto-collection, the reserved
`auto-collect-` keys."""

from __future__ import annotations

from datetime import timedelta

from backend import clock
from backend.billing.collection import auto
from backend.billing.models import FinancialRecord
from backend.identity.models import Organization
from tests.billing.helpers import Market, booted_config
from tests.billing.self_billing.data import Party, admin_headers


def _collect(client, path, headers, key):
    return client.simulate_post(path, json={"paymentMethod": "bank_transfer"},
                                headers={**headers, "Idempotency-Key": key})


def test_the_admin_collects_on_the_industrials_behalf_and_auto_collect_keys_are_reserved(client):
    industrial, distributor = Party("industrial"), Party("distributor")
    reservation = Market().reservation(industrial.organization, distributor.organization)
    own = f"/api/billing/reservations/{reservation.id}/collect"
    path = f"/api/admin/billing/reservations/{reservation.id}/collect"
    for where, headers in ((own, industrial.headers), (path, admin_headers())):
        reserved = _collect(client, where, headers, f"auto-collect-{reservation.id}")
        assert reserved.status_code == 400 and "Idempotency-Key" in reserved.json["error"]["details"]["fields"]
    assert _collect(client, path, industrial.headers, "a-1").status_code == 403
    first = _collect(client, path, admin_headers(), "a-1")
    assert first.status_code == 200, first.json
    data = first.json["data"]
    assert (data["financialStatus"], data["idempotent"]) == ("reservation_total_paid", False)
    replay = _collect(client, path, admin_headers(), "a-1")
    assert replay.json["data"] == {**first.json["data"], "idempotent": True}
    again = _collect(client, own, industrial.headers, "a-1")  # another scope: the flow runs, nothing is due
    assert again.status_code == 409 and again.json["error"]["details"]["reason"] == "not_due"


def test_the_retry_pass_collects_what_auto_collection_left_due(log_lines):
    industrial, distributor = Party("industrial"), Party("distributor")
    market = Market()
    reservation = market.reservation(industrial.organization, distributor.organization)  # no worker: not collected
    blocked = market.reservation(industrial.organization, distributor.organization)
    config = booted_config()
    assert auto.retry_due_collections(config=config)["due"] == 0  # approved just now
    later = clock.now() + timedelta(minutes=config.auto_collection_retry_minutes, seconds=1)
    Organization.update(kyb_status="submitted").where(Organization.id == industrial.organization.id).execute()
    with clock.frozen_at(later):
        assert auto.retry_due_collections(config=config) == {"due": 2, "collected": 0, "failed": 2}
        assert auto.retry_due_collections(config=config)["due"] == 0  # tried: waits the interval
    assert FinancialRecord.get_by_id(blocked.id).financial_status == "reservation_total_due"
    failed = [x for x in log_lines() if x["scope"] == "billing.reservation.collect.auto_failed"]
    assert {x["reservationId"] for x in failed} == {reservation.id, blocked.id}
    Organization.update(kyb_status="approved").where(Organization.id == industrial.organization.id).execute()
    with clock.frozen_at(later + timedelta(minutes=config.auto_collection_retry_minutes, seconds=1)):
        assert auto.retry_due_collections(config=config) == {"due": 2, "collected": 2, "failed": 0}
    assert FinancialRecord.get_by_id(blocked.id).financial_status == "reservation_total_paid"
