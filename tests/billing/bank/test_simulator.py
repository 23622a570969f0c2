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


def test_the_walk_two_debits_and_a_refund_in_files_one_returned_md06_collected_again_and_settled(bank, make_app):
    """Issue 30's "done when": the platform's own files (schema-valid) to the simulator over HTTP,
    its statement back through the admin route, one debit settled and one returned (MD06), the
    reservation due again, collected again, and settled; the customer's 411 and the bank's 512
    after each step."""
    import falcon.testing

    from backend.billing.accounting.chart import Account
    from backend.billing.accounting.ledger import balance
    from backend.identity.models import Organization
    from tests.billing.bank.data import bank_config, refund, sign_sepa_mandate, valid_against_schema
    from tests.billing.helpers import Market, approved_org

    settings = bank_config()
    client = falcon.testing.TestClient(make_app(**{name: getattr(settings, name) for name in (
        "platform_sepa_creditor_id", "platform_legal_iban", "platform_legal_bic", "platform_legal_company_name")}))
    admin = admin_headers()
    industrial = approved_org("industrial")
    sign_sepa_mandate(industrial)
    market = Market()
    kept, disputed = (collected(market=market, industrial=industrial) for _ in range(2))
    refunded = refund(number_of(kept), 10_000)
    siren = Organization.get_by_id(industrial.id).siren
    owed, bank_before = balance(Account.CUSTOMERS, siren), balance(Account.BANK)

    def to_the_bank(route: str, schema: str) -> None:
        made = client.simulate_post(f"/api/admin/billing/bank/{route}", headers=admin)
        assert made.status_code == 201, made.json
        xml = client.simulate_get(f"/api/admin/billing/bank/files/{made.json['data']['file']['id']}",
                                  headers=admin).content
        valid_against_schema(xml, schema)
        assert requests.post(f"{bank.url}/files", data=xml, timeout=5).status_code == 201

    def statement_in() -> dict:
        document = requests.post(f"{bank.url}/statements", timeout=5).content
        answer = _import(client, document)
        assert answer.status_code == 201, answer.json
        return answer.json["data"]["statement"]

    to_the_bank("direct-debits", "pain.008.001.08")
    to_the_bank("transfers", "pain.001.001.09")
    requests.post(f"{bank.url}/_control/returns", json={"endToEndId": end_to_end_id(disputed.id), "reason": "MD06"},
                  timeout=5)
    assert statement_in() | {"id": None} == {"id": None, "lines": 4, "matched": 3, "returned": 1, "unmatched": 0}
    assert [PaymentOrder.get_by_id(o).settlement for o in (kept.id, disputed.id, refunded.payment_order_id)] == [
        "settled", "returned", "settled"]
    assert FinancialRecord.get_by_id(disputed.reservation_id).financial_status == "reservation_total_due"
    repaid = PaymentOrder.get_by_id(refunded.payment_order_id).amount_cents
    # the books follow the bank: the kept debit received, the disputed one owed again, the refund paid
    assert balance(Account.CUSTOMERS, siren) == owed - kept.amount_cents
    assert balance(Account.BANK) == bank_before + kept.amount_cents - repaid
    assert balance(Account.RECEIPTS_IN_TRANSIT) == balance(Account.PAYMENTS_IN_TRANSIT) == 0
    assert books_breaches() == []

    again = client.simulate_post(f"/api/admin/billing/reservations/{disputed.reservation_id}/collect",
                                 json={"paymentMethod": "sepa_dd"}, headers={**admin, "Idempotency-Key": "again"})
    assert again.status_code == 200 and again.json["data"]["financialStatus"] == "reservation_total_paid"
    to_the_bank("direct-debits", "pain.008.001.08")
    assert statement_in()["matched"] == 1
    assert PaymentOrder.get_by_id(again.json["data"]["paymentOrderId"]).settlement == "settled"
    assert balance(Account.CUSTOMERS, siren) == owed - kept.amount_cents - disputed.amount_cents
    assert balance(Account.BANK) == bank_before + kept.amount_cents + disputed.amount_cents - repaid
    assert books_breaches() == []
