"""The bank simulator over real HTTP: it takes a pain.008, answers a camt.053 settling it, returns
a debit on demand, and books customers' transfers late, short, twice or from unknown payers; the
platform imports what it answers through its admin route."""

from __future__ import annotations

import requests

from backend.billing.bank.end_to_end import end_to_end_id
from backend.billing.models import FinancialRecord, PaymentMethod, PaymentOrder
from tests.billing.bank.statements_data import IBAN, books_breaches, collected, number_of
from tests.billing.self_billing.data import admin_headers

PAIN008 = "urn:iso:std:iso:20022:tech:xsd:pain.008.001.08"


def pain008(*orders: PaymentOrder) -> bytes:
    """A minimal pain.008 of `orders` (what the simulator reads of one)."""
    debits = "".join(
        f"<DrctDbtTxInf><PmtId><EndToEndId>{end_to_end_id(o.id)}</EndToEndId></PmtId>"
        f"<InstdAmt Ccy=\"EUR\">{o.amount_cents // 100}.{o.amount_cents % 100:02d}</InstdAmt>"
        f"<Dbtr><Nm>Fromagerie</Nm></Dbtr><DbtrAcct><Id><IBAN>FR7630001007941234567890185</IBAN></Id></DbtrAcct>"
        f"<RmtInf><Ustrd>{number_of(o)}</Ustrd></RmtInf></DrctDbtTxInf>" for o in orders)
    return (f"<?xml version=\"1.0\"?><Document xmlns=\"{PAIN008}\"><CstmrDrctDbtInitn><PmtInf>"
            f"<CdtrAcct><Id><IBAN>{IBAN}</IBAN></Id></CdtrAcct>{debits}</PmtInf></CstmrDrctDbtInitn></Document>"
            ).encode()


def _import(client, document: bytes):
    return client.simulate_post("/api/admin/billing/bank/statements", body=document,
                                headers={**admin_headers(), "Content-Type": "application/xml"})


def test_files_in_statements_out_with_a_return_and_late_short_twice_and_unknown_payments(bank, bank_client):
    kept, disputed = collected(), collected()
    transfer, short, late = (collected(PaymentMethod.BANK_TRANSFER) for _ in range(3))
    answer = requests.post(f"{bank.url}/files", data=pain008(kept, disputed), timeout=5)
    assert answer.status_code == 201 and answer.json() == {"kind": "pain.008", "transactions": 2}
    control = f"{bank.url}/_control"
    assert requests.post(f"{control}/returns", json={"endToEndId": end_to_end_id(disputed.id), "reason": "MD06"},
                         timeout=5).status_code == 200
    for order, extra in ((transfer, {"times": 2}), (short, {"amountCents": short.amount_cents - 500}),
                         (late, {"delayStatements": 1})):
        body = {"amountCents": order.amount_cents, "remittance": f"Règlement {number_of(order)}", **extra}
        assert requests.post(f"{control}/incoming", json=body, timeout=5).status_code == 201
    assert requests.post(f"{control}/incoming", json={"amountCents": 1234}, timeout=5).status_code == 201
    first = requests.post(f"{bank.url}/statements", timeout=5)
    assert first.status_code == 201 and first.headers["Content-Type"] == "application/xml"

    imported = _import(bank_client, first.content)
    assert imported.status_code == 201, imported.json
    # kept, disputed (credit then MD06), transfer twice, short, unknown: 7 lines
    assert imported.json["data"]["statement"] | {"id": None} == {
        "id": None, "lines": 7, "matched": 3, "returned": 1, "unmatched": 3}
    states = {o.id: PaymentOrder.get_by_id(o.id) for o in (kept, disputed, transfer, short, late)}
    assert [states[o.id].settlement for o in (kept, disputed, transfer, short, late)] == [
        "settled", "returned", "settled", "unsent", "unsent"]
    assert (states[disputed.id].status, states[disputed.id].failure_code) == ("failed", "MD06")
    assert FinancialRecord.get_by_id(disputed.reservation_id).financial_status == "reservation_total_due"
    again = _import(bank_client, requests.get(f"{bank.url}/statements/1", timeout=5).content)
    assert again.status_code == 200 and again.json["data"]["statement"] == imported.json["data"]["statement"]

    second = _import(bank_client, requests.post(f"{bank.url}/statements", timeout=5).content)
    assert second.json["data"]["statement"]["matched"] == 1  # the late transfer
    assert PaymentOrder.get_by_id(late.id).settlement == "settled"
    waiting = bank_client.simulate_get("/api/admin/billing/bank/unmatched", headers=admin_headers(),
                                       params={"pageSize": "100"}).json["data"]
    short_line = next(item for item in waiting["items"] if item["amountCents"] == short.amount_cents - 500)
    refused = bank_client.simulate_post(f"/api/admin/billing/bank/unmatched/{short_line['id']}/match",
                                        json={"paymentOrderId": short.id}, headers=admin_headers())
    assert refused.status_code == 409 and refused.json["error"]["details"]["reason"] == "line_mismatch"
    assert books_breaches() == []


def test_the_simulator_refuses_what_is_not_a_pain_file_and_bad_switches(bank):
    assert requests.post(f"{bank.url}/files", data=b"<x/>", timeout=5).status_code == 400
    assert requests.post(f"{bank.url}/_control/returns", json={"endToEndId": "x", "reason": "md06"},
                         timeout=5).status_code == 400
    assert requests.post(f"{bank.url}/_control/incoming", json={"amountCents": 0}, timeout=5).status_code == 400
    assert requests.get(f"{bank.url}/statements/9", timeout=5).status_code == 404
