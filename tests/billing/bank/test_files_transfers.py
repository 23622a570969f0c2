"""The credit transfer file (pain.001.001.09): supplier payouts to the distributor's billing-profile
IBAN and refunds to the industrial's, read back and validated against the ISO 20022 schema; an
IBAN failing its check stops the file."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import time_machine

from backend import clock
from backend.billing import payouts
from backend.billing.bank import files
from backend.billing.bank.end_to_end import end_to_end_id
from backend.billing.models import BankFile, BankFileKind, Invoice, PaymentOrder
from backend.billing.self_billing import scheduler
from backend.errors import Conflict
from backend.identity.models import BillingProfile
from backend.runtime import current_runtime
from tests.billing.bank.data import PLATFORM_BIC, PLATFORM_IBAN, bank_config, read_transfers, refund
from tests.billing.helpers import Market, approved_org, customer_paid
from tests.billing.self_billing.data import AFTER, collected, sign_mandate

DISTRIBUTOR_IBAN = "FR1420041010050500013M02606"
INDUSTRIAL_IBAN = "FR7630001007941234567890185"
# Good Friday 26 March 2027, 10:00 in Paris: TARGET2 is closed until Tuesday 30 March (Easter Monday).
GOOD_FRIDAY = datetime(2027, 3, 26, 9, 0, tzinfo=UTC)


def make(**overrides):
    storage = current_runtime().storage
    file = files.make_file(BankFileKind.CREDIT_TRANSFER, storage=storage, config=bank_config(**overrides),
                           user_id=None).file
    return file, storage.read_bytes(files.STORAGE_CONTEXT, file.storage_key)


@pytest.fixture
def paid_out(config):
    """A reservation paid out to its distributor, and refunded in part to its industrial before."""
    industrial, distributor = approved_org("industrial", iban=INDUSTRIAL_IBAN), approved_org(
        "distributor", iban=DISTRIBUTOR_IBAN)
    sign_mandate(distributor)
    reservation = collected(Market(), industrial, distributor)
    customer_paid(reservation.id)
    sale = Invoice.get(Invoice.reservation_id == reservation.id, Invoice.kind == "platform_sale")
    refunded = refund(sale.number, 10_000)
    with clock.frozen_at(AFTER):
        assert scheduler.self_bill_due_reservations(config=config)["issued"] == 1
    payout = payouts.pay_out(reservation_id=reservation.id, key="payout-1", user_id=None,
                             reason="paid before the distributor's acceptance")
    return refunded, payout


def test_payouts_and_refunds_go_to_the_billing_profile_ibans_in_one_valid_file(paid_out):
    refunded, payout = paid_out
    with time_machine.travel(GOOD_FRIDAY, tick=False):
        file, xml = make()
    header, transactions = read_transfers(xml)
    orders = {order.kind: order for order in PaymentOrder.select().where(
        PaymentOrder.id.in_([refunded.payment_order_id, payout.payment_order_id]))}
    assert header == {"messageId": file.message_id, "count": 2,
                      "controlSumCents": orders["refund"].amount_cents + orders["supplier_payout"].amount_cents,
                      "debtorIban": PLATFORM_IBAN, "debtorBic": PLATFORM_BIC}
    found = sorted((t.end_to_end_id, t.amount_cents, t.remittance, t.iban, t.requested_on) for t in transactions)
    assert found == sorted([
        (end_to_end_id(refunded.payment_order_id), 12_000, refunded.credit_note_number, INDUSTRIAL_IBAN,
         "2027-03-30"),
        (end_to_end_id(payout.payment_order_id), payout.amount_cents, payout.invoice_number, DISTRIBUTOR_IBAN,
         "2027-03-30")])
    assert (file.kind, file.count, str(file.requested_on)) == ("credit_transfer", 2, "2027-03-30")
    assert {PaymentOrder.get_by_id(order.id).settlement for order in orders.values()} == {"in_file"}
    with pytest.raises(Conflict) as again:
        make()
    assert again.value.details["reason"] == "nothing_due"


def test_the_file_pays_the_accounts_the_orders_recorded_not_the_live_profiles(paid_out):
    refunded, payout = paid_out
    distributor = PaymentOrder.get_by_id(payout.payment_order_id).organization_id
    BillingProfile.update(iban="DE89370400440532013000").where(BillingProfile.organization == distributor).execute()
    industrial = PaymentOrder.get_by_id(refunded.payment_order_id).organization_id
    BillingProfile.update(iban=None).where(BillingProfile.organization == industrial).execute()
    file, xml = make()
    assert sorted(t.iban for t in read_transfers(xml)[1]) == sorted([DISTRIBUTOR_IBAN, INDUSTRIAL_IBAN])
    assert file.count == 2


def test_an_order_with_a_missing_or_wrong_account_is_held_and_the_others_filed(paid_out):
    refunded, payout = paid_out
    PaymentOrder.update(creditor_iban="FR1420041010050500013M02607").where(  # one check digit off
        PaymentOrder.id == payout.payment_order_id).execute()
    PaymentOrder.update(creditor_iban=None).where(PaymentOrder.id == refunded.payment_order_id).execute()
    with pytest.raises(Conflict) as caught:
        make()
    assert caught.value.details["reason"] == "nothing_due"
    assert sorted(caught.value.details["held"], key=lambda h: h["reason"]) == [
        {"paymentOrderId": payout.payment_order_id, "reason": "bank_details_invalid", "field": "creditorIban",
         "problem": "The number's checksum or check digit is invalid."},
        {"paymentOrderId": refunded.payment_order_id, "reason": "creditor_account_missing"}]
    assert BankFile.select().count() == 0
    assert {PaymentOrder.get_by_id(o).settlement for o in (payout.payment_order_id, refunded.payment_order_id)} == {
        "unsent"}


def test_no_transfer_file_without_the_platform_iban(paid_out):
    with pytest.raises(Conflict) as caught:
        make(platform_legal_iban=None)
    assert caught.value.details == {"reason": "bank_not_configured", "settings": {"PLATFORM_LEGAL_IBAN": "missing"}}
