"""Issue 34, point 4: collection is left to the debtor, but no client can block the collection of
a reservation that is not its own: not by trying its route, not by taking the retry pass's key,
not by sharing a key with it (keys are scoped to the organization and the route, API.md)."""

from __future__ import annotations

from datetime import timedelta

from backend import clock
from backend.billing.collection import auto
from backend.billing.models import FinancialRecord
from tests.billing.helpers import Market, booted_config
from tests.billing.self_billing.data import Party


def _collect(client, reservation_id, headers, key):
    return client.simulate_post(f"/api/billing/reservations/{reservation_id}/collect",
                                json={"paymentMethod": "bank_transfer"}, headers={**headers, "Idempotency-Key": key})


def test_another_client_cannot_block_a_reservations_collection(client):
    owner, other, distributor = Party("industrial"), Party("industrial"), Party("distributor")
    market = Market()
    target = market.reservation(owner.organization, distributor.organization)
    decoy = market.reservation(other.organization, distributor.organization)

    # The other client tries the target's route with every kind of key: nothing is held for it.
    assert _collect(client, target.id, other.headers, "shared-key").status_code == 404
    reserved = _collect(client, target.id, other.headers, f"auto-collect-{target.id}")
    assert reserved.status_code == 400 and "Idempotency-Key" in reserved.json["error"]["details"]["fields"]
    # The same key on its own reservation is its own, in its own scope.
    assert _collect(client, decoy.id, other.headers, "shared-key").status_code == 200
    assert FinancialRecord.get_or_none(FinancialRecord.reservation_id == target.id) is None  # nothing written

    # The owner collects with the very key the other used, and the retry pass is not blocked either.
    config = booted_config()
    with clock.frozen_at(clock.now() + timedelta(minutes=config.auto_collection_retry_minutes, seconds=1)):
        assert auto.retry_due_collections(config=config) == {"due": 1, "collected": 1, "failed": 0}
    assert FinancialRecord.get_by_id(target.id).financial_status == "reservation_total_paid"
    replay = _collect(client, target.id, owner.headers, "shared-key")
    assert replay.status_code == 409 and replay.json["error"]["details"]["reason"] == "not_due"
