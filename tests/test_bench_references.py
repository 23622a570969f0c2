"""The bare reference app of `vitrine bench` (ops/bench/bare_app.py) answers what Vitrine answers:
a ratio against it measures Vitrine's overhead only if both do the same work."""

from __future__ import annotations

import hashlib
import hmac
import json
import time

import falcon.testing
import pytest


@pytest.fixture
def pools(config, monkeypatch):
    """The bare apps' pools, on the test database and Redis (they read them from the environment)."""
    from ops.bench import bare_app

    monkeypatch.setenv("DATABASE_URL", config.database_url)
    monkeypatch.setenv("REDIS_URL", config.redis_url)
    monkeypatch.setenv("ESIGN_WEBHOOK_SECRET", "whsec_reference_test")
    pools = bare_app._Pools()
    monkeypatch.setattr(bare_app, "pools", pools)
    yield pools
    if pools._pg is not None:
        pools._pg.closeall()


@pytest.fixture
def bare(pools):
    """The bare app of the health, session and webhook routes."""
    from ops.bench import bare_app

    return falcon.testing.TestClient(bare_app.create_app())


@pytest.fixture
def bare_billing(pools):
    """The bare collection app."""
    from ops.bench import _bare_billing

    return falcon.testing.TestClient(_bare_billing.create_app())


@pytest.mark.committed
@pytest.mark.parametrize("kyb_status", ["approved", "submitted"])
def test_the_bare_session_route_answers_what_vitrine_answers(client, bare, kyb_status):
    from backend.db import database
    from tests.factories import add_member, make_organization, make_user, signed_in

    with database.connection_context():
        user = make_user()
        add_member(user, make_organization(kyb_status=kyb_status), "manager")
        add_member(user, make_organization("printer"), "member")
        headers = signed_in(user)
    ours = client.simulate_get("/api/auth/session", headers=headers)
    reference = bare.simulate_get("/api/auth/session", headers=headers)
    assert ours.status_code == reference.status_code == 200
    assert reference.json == ours.json


@pytest.mark.committed
def test_the_bare_webhook_stores_each_event_once_with_its_outbox_row(bare):
    from backend.db import database
    from ops.bench.bare_app import REFERENCE_ACTOR

    body = json.dumps({"event_id": "evt-1", "event_name": "signer.notified",
                       "data": {"signature_request": {"id": "req-1"}}}).encode()
    headers = {"X-Esign-Signature-256": "sha256=" + hmac.new(b"whsec_reference_test", body, hashlib.sha256).hexdigest(),
               "X-Esign-Issued-At": str(int(time.time())), "Content-Type": "application/json"}
    answers = [bare.simulate_post("/api/webhooks/esign", body=body, headers=headers).json["data"] for _ in range(2)]
    assert answers == [{"received": True, "duplicate": False}, {"received": True, "duplicate": True}]
    with database.connection_context():
        assert database.execute_sql("SELECT count(*) FROM esign_webhook_event WHERE event_id = 'bare-evt-1'"
                                    ).fetchone()[0] == 1
        assert database.execute_sql("SELECT count(*) FROM outbox_message WHERE actor_name = %s",
                                    (REFERENCE_ACTOR,)).fetchone()[0] == 1


@pytest.mark.committed
def test_the_bare_collection_writes_what_vitrine_writes(client, bare_billing):
    """`ops/bench/_bare_billing.py` sends Vitrine's statements with Vitrine's values: the same answer,
    the same invoice (parties, lines, amounts), the same entries, and books that still verify."""
    from backend.billing.accounting.verify import verify
    from backend.db import database
    from ops.bench.billing import _plan, populate

    with database.connection_context():
        ids, token = populate(2)
        # Two reservations alike (the bench's prices and space names differ from one to the next).
        database.execute_sql(
            "UPDATE reservation r SET base_amount_cents = f.base_amount_cents, commission_amount_cents ="
            " f.commission_amount_cents, total_amount_cents = f.total_amount_cents FROM reservation f"
            " WHERE f.id = %s AND r.id = %s", (ids[0], ids[1]))
        database.execute_sql("UPDATE ad_space a SET name = 'E0' FROM reservation r"
                             " WHERE r.id = %s AND a.id = r.ad_space_id", (ids[1],))
    answers = []
    for app, request in zip((client, bare_billing), _plan(ids, token), strict=True):
        answer = app.simulate_post(request.path, body=request.body, headers=dict(request.headers))
        assert answer.status_code == 200, answer.text
        answers.append({k: v for k, v in answer.json["data"].items() if k not in ("reservationId", "paymentOrderId")})
    assert answers[0].pop("invoiceNumber") < answers[1].pop("invoiceNumber")
    assert answers[0] == answers[1]
    with database.connection_context():
        invoices = database.execute_sql(
            "SELECT kind, status, issuer, customer, lines, amount_excl_tax_cents, vat_rate_bps, due_at - issued_at,"
            " paid_at = issued_at, service_starts_at, service_ends_at FROM billing_invoice"
            " WHERE reservation_id = ANY(%s) ORDER BY number", (ids,)).fetchall()
        entries = database.execute_sql(
            "SELECT e.journal_code, e.event,"
            " array_agg((l.account, l.aux_account, l.label, l.debit_cents, l.credit_cents) ORDER BY l.line_no)"
            " FROM accounting_entry e JOIN accounting_line l ON l.entry_id = e.id"
            " WHERE e.reservation_id = ANY(%s) GROUP BY e.id ORDER BY e.reservation_id = %s, e.journal_code",
            (ids, ids[1])).fetchall()
        assert len(invoices) == 2 and invoices[0] == invoices[1]
        assert len(entries) == 2 and entries[0] == entries[1]
        assert verify() == []
