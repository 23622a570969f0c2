"""Floods: the deprecated webhook is rate-limited and its warning sampled; an IPv6 client's
budget is its /64 network's; change-password is limited per address and per account; the money
routes outside `/api/admin` have their budget."""

from __future__ import annotations

import uuid

from api.einvoicing.webhook import Sample
from api.ratelimit import MONEY, bucket_for, client_key
from tests.factories import make_user, signed_in

WEBHOOK, SIGN_IN = "/api/webhooks/odp", "/api/auth/sign-in"
CHANGE_PASSWORD = "/api/auth/change-password"


def _ipv6_network() -> str:
    return f"2001:db8:{uuid.uuid4().int % 0xFFFF:x}:{uuid.uuid4().int % 0xFFFF:x}"


def test_a_webhook_flood_is_refused_and_logs_a_line_or_two(client, log_lines):
    ip = f"10.77.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250 + 1}"
    answers = [client.simulate_post(WEBHOOK, body=b"{}", remote_addr=ip).status_code for _ in range(60)]
    assert answers == [410] * 30 + [429] * 30
    lines = [line for line in log_lines() if line["scope"] in ("einvoicing.webhook.deprecated", "api-rate-limit")]
    assert len(lines) == 2  # one sampled warning, one for the first refusal
    other = client.simulate_post(WEBHOOK, body=b"{}", remote_addr="10.78.0.1")
    assert other.status_code == 410  # another client keeps its own budget


def test_the_sample_counts_what_it_skipped():
    now = [0.0]
    sample = Sample(seconds=60, monotonic=lambda: now[0])
    assert [sample.take() for _ in range(4)] == [1, 0, 0, 0]
    now[0] = 60.0
    assert sample.take() == 4  # itself and the three skipped


def test_rotating_ipv6_addresses_inside_a_64_shares_one_sign_in_budget(client):
    network = _ipv6_network()
    statuses = [client.simulate_post(SIGN_IN, json={}, remote_addr=f"{network}::{n:x}").status_code
                for n in range(1, 12)]
    assert statuses[:10].count(429) == 0 and statuses[10] == 429
    assert client.simulate_post(SIGN_IN, json={}, remote_addr=f"{_ipv6_network()}::1").status_code != 429


def test_client_keys():
    assert client_key("2001:db8:1:2:aaaa::1") == client_key("2001:db8:1:2:ffff::9") == "2001:db8:1:2::/64"
    assert client_key("::ffff:192.0.2.7") == "192.0.2.7" and client_key("192.0.2.7") == "192.0.2.7"
    assert client_key("unknown") == "unknown"


def _ip() -> str:
    return f"10.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250 + 1}"


def test_wrong_current_passwords_are_limited_per_address_and_per_account(client):
    body = {"currentPassword": "not-the-password", "newPassword": "a-new-long-passphrase-42"}
    ip = _ip()
    from_one_address = [client.simulate_post(CHANGE_PASSWORD, json=body, remote_addr=ip,
                                             headers=signed_in(make_user())).status_code for _ in range(6)]
    assert 429 not in from_one_address[:5] and from_one_address[5] == 429
    user = make_user()
    headers = signed_in(user)
    rotating = [client.simulate_post(CHANGE_PASSWORD, json=body, remote_addr=_ip(), headers=headers).status_code
                for _ in range(6)]
    assert 429 not in rotating[:5] and rotating[5] == 429  # many addresses do not multiply the guesses
    assert client.simulate_post(CHANGE_PASSWORD, json=body, remote_addr=_ip(),
                                headers=signed_in(make_user())).status_code != 429  # another account's own


def test_the_money_routes_outside_admin_are_limited():
    assert bucket_for("/api/billing/invoices/{invoice_id}/refund") is MONEY
    assert bucket_for("/api/billing/invoices/{invoice_id}/credit-note") is MONEY
    assert bucket_for("/api/billing/reservations/{reservation_id}/supplier-self-billing") is MONEY


def test_a_refund_flood_is_refused(client):
    ip = _ip()
    statuses = [client.simulate_post("/api/billing/invoices/FAC-RES-2026-000001/refund", json={},
                                     remote_addr=ip).status_code for _ in range(MONEY.per_minute + 1)]
    assert 429 not in statuses[:-1] and statuses[-1] == 429
