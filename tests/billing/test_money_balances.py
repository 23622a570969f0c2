"""Money that always balances (issue 28, API.md "Money that always balances"), through the HTTP API:
credit-note VAT by cumulative difference at the frozen rate, the credited sale's customer credit and
its repayment, settlement of the store share of what is left, supplier credit notes and the
distributor's debt, a self-billed invoice credited in full billed again."""

from __future__ import annotations

import pytest

from backend import clock
from backend.billing.accounting import ledger
from backend.billing.accounting.chart import Account
from backend.billing.models import Invoice, SupplierDebt
from backend.billing.self_billing import scheduler
from tests.billing.helpers import Market, booted_config, customer_paid
from tests.billing.self_billing.data import AFTER, Party, admin_headers, sign_mandate


class Money:
    """An industrial, a distributor with a signed self-billing mandate, an admin, over HTTP."""

    def __init__(self, client) -> None:
        self.client = client
        self.industrial, self.distributor = Party("industrial"), Party("distributor")
        sign_mandate(self.distributor.organization)
        self.market = Market()

    def collected(self, price_cents: int = 100_000, day: int = 0) -> tuple[str, str]:
        """A reservation collected over HTTP: `(reservation id, sale number)`."""
        reservation = self.market.reservation(self.industrial.organization, self.distributor.organization,
                                              price_cents=price_cents, day=day)
        key = {"Idempotency-Key": f"c-{reservation.id}"}
        answer = self.client.simulate_post(f"/api/billing/reservations/{reservation.id}/collect",
                                           json={"paymentMethod": "bank_transfer"},
                                           headers={**self.industrial.headers, **key})
        assert answer.status_code == 200, answer.json
        return reservation.id, answer.json["data"]["invoiceNumber"]

    def refund(self, number: str, amount: int, key: str, client=None):
        return (client or self.client).simulate_post(
            f"/api/billing/invoices/{number}/refund", headers={**admin_headers(), "Idempotency-Key": key},
            json={"amountCents": amount, "reason": "Geste commercial", "paymentMethod": "bank_transfer"})

    def credit(self, number: str):
        return self.client.simulate_post(f"/api/billing/invoices/{number}/credit-note", headers=admin_headers(),
                                         json={"reason": "Prestation annulée"})

    def self_bill(self, reservation_id: str):
        return self.client.simulate_post(f"/api/billing/reservations/{reservation_id}/supplier-self-billing",
                                         headers=admin_headers())

    def pay(self, reservation_id: str, key: str):
        customer_paid(reservation_id)  # the statement booked the customer's transfer
        return self.client.simulate_post(f"/api/admin/billing/reservations/{reservation_id}/payout",
                                         headers={**admin_headers(), "Idempotency-Key": key},
                                         json={"reason": "paid before the distributor's acceptance"})

    def summary(self, reservation_id: str, headers=None) -> dict:
        answer = self.client.simulate_get(f"/api/billing/reservations/{reservation_id}/summary",
                                          headers=headers or admin_headers())
        assert answer.status_code == 200, answer.json
        return answer.json["data"]

    def invoice(self, number: str) -> dict:
        answer = self.client.simulate_get("/api/billing/invoices", headers=admin_headers(), params={"limit": 200})
        return next(item for item in answer.json["data"]["items"] if item["invoiceNumber"] == number)


@pytest.fixture
def money(client):
    return Money(client)


def ok(answer, status: int = 200) -> dict:
    assert answer.status_code == status, answer.json
    return answer.json["data"]


def test_partial_refunds_return_exactly_what_was_paid(money):
    """Point 1: 100,002 HT paid 120,002; refunds of 99,999 then 3 return 119,999 + 3 (not + 4)."""
    reservation_id, number = money.collected(price_cents=83_335)  # + 20 % commission: 100,002 HT
    sale = money.invoice(number)
    assert (sale["amountExclTaxCents"], sale["amountInclTaxCents"]) == (100_002, 120_002)
    first = ok(money.refund(number, 99_999, "r-1"))
    second = ok(money.refund(number, 3, "r-2"))
    assert (first["amountInclTaxCents"], second["amountInclTaxCents"]) == (119_999, 3)
    notes = [money.invoice(first["creditNoteNumber"]), money.invoice(second["creditNoteNumber"])]
    assert [(n["vatAmountCents"], n["amountInclTaxCents"]) for n in notes] == [(20_000, 119_999), (0, 3)]
    summary = money.summary(reservation_id)
    refunds = [o["amountCents"] for o in summary["paymentOrders"] if o["kind"] == "refund"]
    assert sum(refunds) == 120_002 and summary["financialStatus"] == "fully_refunded"


def test_a_credit_note_takes_the_rate_frozen_on_the_invoice(money, make_app):
    """Point 2: after `PLATFORM_VAT_RATE_PERCENT` changes, a refund returns at the sale's rate."""
    import falcon.testing

    _, number = money.collected()
    later = falcon.testing.TestClient(make_app(platform_vat_rate_percent=10))
    refunded = ok(money.refund(number, 10_000, "r-rate", client=later))
    assert refunded["amountInclTaxCents"] == 12_000
    note = money.invoice(refunded["creditNoteNumber"])
    assert (note["vatRatePercent"], note["vatAmountCents"]) == (20.0, 2_000)


def test_a_credited_sale_is_never_self_billed_and_its_credit_is_repaid(money):
    """Point 3: the credit note moves no money (the customer is in credit, the status `cancelled`),
    nothing is self-billed nor paid out, and the refund route repays the credit."""
    reservation_id, number = money.collected()  # 120,000 HT, 144,000 TTC
    note = ok(money.credit(number), 201)
    summary = money.summary(reservation_id, money.industrial.headers)
    assert (summary["financialStatus"], summary["customerCreditCents"]) == ("cancelled", 144_000)
    refused = money.self_bill(reservation_id)
    assert refused.status_code == 409 and refused.json["error"]["details"]["reason"] == "not_settleable"
    with clock.frozen_at(AFTER):
        assert scheduler.self_bill_due_reservations(config=booted_config())["issued"] == 0
    assert money.pay(reservation_id, "p-1").status_code == 409
    first = ok(money.refund(number, 50_000, "repay-1"))
    assert (first["creditNoteNumber"], first["amountInclTaxCents"], first["remainingCents"]) == (
        note["creditNoteNumber"], 60_000, 70_000)
    assert money.summary(reservation_id)["customerCreditCents"] == 84_000
    second = ok(money.refund(number, 70_000, "repay-2"))
    assert second["amountInclTaxCents"] == 84_000
    summary = money.summary(reservation_id)
    assert (summary["customerCreditCents"], summary["refundedCents"]) == (0, 120_000)
    assert sum(o["amountCents"] for o in summary["paymentOrders"] if o["kind"] == "refund") == 144_000
    over = money.refund(number, 1, "repay-3")
    assert over.status_code == 409 and over.json["error"]["details"]["remainingCents"] == 0
    assert Invoice.select().where(Invoice.reservation_id == reservation_id).count() == 2  # the sale, its note


def test_the_customer_credit_of_a_cancelled_sale_stays_right_through_odd_repayments(money):
    """Point 4 (MONEY28B): a refund, then a credit note of the rest, then repayments whose VAT
    rounds: the summary's `customerCreditCents` is at each step the notes' totals less what was
    repaid, and the money returned ends exactly at what was paid."""
    reservation_id, number = money.collected(price_cents=83_336)  # + 20 % commission: 100,003 HT
    sale = money.invoice(number)
    assert (sale["amountExclTaxCents"], sale["amountInclTaxCents"]) == (100_003, 120_004)
    ok(money.refund(number, 1, "r-1"))  # 1 HT, no VAT yet (vat(1) = 0): 1 returned
    ok(money.credit(number), 201)  # the rest, 100,002 HT + 20,001 VAT (vat(100,003) - vat(1))
    summary = money.summary(reservation_id)
    assert (summary["financialStatus"], summary["customerCreditCents"]) == ("cancelled", 120_003)
    assert money.summary(reservation_id, money.distributor.headers)["customerCreditCents"] == 0  # not its credit
    first = ok(money.refund(number, 33_333, "repay-1"))
    assert first["amountInclTaxCents"] == 40_000  # 33,333 + 20,001 x 33,333 / 100,002 = 6,666.67 -> 6,667
    assert money.summary(reservation_id)["customerCreditCents"] == 80_003
    second = ok(money.refund(number, 66_669, "repay-2"))
    assert second["amountInclTaxCents"] == 80_003
    summary = money.summary(reservation_id)
    assert (summary["financialStatus"], summary["customerCreditCents"], summary["refundedCents"]) == (
        "cancelled", 0, 100_003)
    assert sum(o["amountCents"] for o in summary["paymentOrders"] if o["kind"] == "refund") == 120_004


def test_settlement_follows_the_sale_and_the_debt_is_kept_back(money):
    """Point 4: a partly refunded sale is self-billed for the store share left; a refund after
    self-billing credits the self-billed invoice; after the payout it is the distributor's debt,
    kept back from its next payout."""
    reservation_id, number = money.collected()  # store base 100,000 + commission 20,000
    ok(money.refund(number, 30_000, "r-1"))  # store share 25,000
    billed = ok(money.self_bill(reservation_id), 201)
    assert (billed["financialStatus"], billed["invoice"]["amountExclTaxCents"]) == (
        "supplier_settlement_pending", 75_000)
    ok(money.refund(number, 12_000, "r-2"))  # store share 10,000: a supplier credit note
    summary = money.summary(reservation_id)
    assert summary["financialStatus"] == "supplier_settlement_pending" and summary["refundedCents"] == 42_000
    notes = [i for i in summary["invoices"] if i["kind"] == "supplier_credit_note"]
    assert [(n["amountExclTaxCents"], n["amountInclTaxCents"]) for n in notes] == [(10_000, 12_000)]
    paid = ok(money.pay(reservation_id, "p-1"))
    assert (paid["amountExclTaxCents"], paid["amountCents"], paid["deductedCents"]) == (65_000, 78_000, 0)
    ok(money.refund(number, 6_000, "r-3"))  # after the payout: store share 5,000 owed back
    assert money.summary(reservation_id)["financialStatus"] == "supplier_settlement_paid"
    debt = SupplierDebt.get(SupplierDebt.organization_id == money.distributor.organization.id)
    assert (debt.kind, debt.amount_excl_tax_cents, debt.amount_cents) == ("debt", 5_000, 6_000)
    siren = money.distributor.organization.siren  # the distributor's 401, including VAT: it owes 6,000 back
    assert ledger.balance(Account.SUPPLIERS, siren) == 6_000

    other, _ = money.collected()
    ok(money.self_bill(other), 201)
    kept = ok(money.pay(other, "p-2"))
    assert (kept["amountCents"], kept["deductedCents"], kept["amountExclTaxCents"]) == (114_000, 6_000, 95_000)
    assert ledger.balance(Account.SUPPLIERS, siren) == 0  # both invoices settled, the debt deducted


def test_a_credit_note_of_a_paid_out_sale_leaves_no_payable_in_debit(money):
    """Point 3's reproduction: 120,000 sold, 100,000 self-billed and paid out, then the sale
    credited: the self-billed invoice is credited, the distributor owes it back."""
    reservation_id, number = money.collected()
    ok(money.self_bill(reservation_id), 201)
    assert ok(money.pay(reservation_id, "p-1"))["amountCents"] == 120_000
    ok(money.credit(number), 201)
    summary = money.summary(reservation_id)
    assert summary["financialStatus"] == "cancelled"
    assert [i["status"] for i in summary["invoices"] if i["kind"] == "supplier_self_billed"] == ["credited"]
    # the distributor's 401 (including VAT) in debit: it owes back the 120,000 paid out, nothing is payable
    assert ledger.balance(Account.SUPPLIERS, money.distributor.organization.siren) == 120_000
    assert money.self_bill(reservation_id).status_code == 409  # nothing left of the sale


def test_a_self_billed_invoice_credited_in_full_is_billed_again(money):
    """Point 5: the reservation becomes settleable again; the next catch-up issues a new invoice
    with the next number; paid out before, the new payout keeps back what was owed."""
    reservation_id, _ = money.collected()
    first = ok(money.self_bill(reservation_id), 201)["invoice"]
    ok(money.pay(reservation_id, "p-1"))
    ok(money.credit(first["invoiceNumber"]), 201)
    assert money.summary(reservation_id)["financialStatus"] == "reservation_total_paid"
    second = ok(money.self_bill(reservation_id), 201)["invoice"]
    assert second["amountExclTaxCents"] == 100_000
    assert int(second["invoiceNumber"][-6:]) == int(first["invoiceNumber"][-6:]) + 1
    paid = ok(money.pay(reservation_id, "p-2"))
    assert (paid["amountCents"], paid["deductedCents"], paid["paymentOrderId"]) == (0, 120_000, None)
    assert money.summary(reservation_id)["financialStatus"] == "supplier_settlement_paid"

    unpaid, _ = money.collected()
    invoice = ok(money.self_bill(unpaid), 201)["invoice"]
    ok(money.credit(invoice["invoiceNumber"]), 201)
    with clock.frozen_at(AFTER):
        assert scheduler.self_bill_due_reservations(config=booted_config())["issued"] == 1
    assert ok(money.pay(unpaid, "p-3"))["amountCents"] == 120_000


def test_billing_manage_all_alone_opens_refunds_and_admin_keys_follow_the_invoice(money):
    """Point 8: the permission without the admin role opens the refund route; an admin's key is
    scoped to the route and the invoice, whatever its active organization."""
    from tests.factories import add_member, make_admin, make_user, signed_in

    _, number = money.collected()
    manager = make_user(permissions=["billing.manage.all"])
    body = {"amountCents": 1_000, "reason": "Geste", "paymentMethod": "bank_transfer"}
    path = f"/api/billing/invoices/{number}/refund"
    first = ok(money.client.simulate_post(path, json=body, headers={**signed_in(manager), "Idempotency-Key": "k-1"}))
    admin = make_admin()
    add_member(admin, money.industrial.organization, "manager")
    again = ok(money.client.simulate_post(path, json=body, headers={
        **signed_in(admin, money.industrial.organization), "Idempotency-Key": "k-1"}))
    assert again == {**first, "idempotent": True}
    _, other = money.collected()
    fresh = ok(money.client.simulate_post(f"/api/billing/invoices/{other}/refund", json=body,
                                          headers={**signed_in(manager), "Idempotency-Key": "k-1"}))
    assert fresh["idempotent"] is False


def test_the_self_billed_invoice_takes_the_sales_frozen_rate(money, make_app):
    """Found by the money model: a sale collected at 10 %, self-billed after the rate went back to
    20 %, paid the distributor 120,000 for a store share the customer paid 110,000."""
    import falcon.testing

    money.client = falcon.testing.TestClient(make_app(platform_vat_rate_percent=10))
    reservation_id, _ = money.collected()
    money.client = falcon.testing.TestClient(make_app(platform_vat_rate_percent=20))
    invoice = ok(money.self_bill(reservation_id), 201)["invoice"]
    assert (invoice["vatRatePercent"], invoice["amountInclTaxCents"]) == (10.0, 110_000)
    assert ok(money.pay(reservation_id, "p-1"))["amountCents"] == 110_000
