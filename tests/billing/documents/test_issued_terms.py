"""What issued documents say, from the database: a self-billed invoice's due date follows its
mandate (the contestation delay, then the payout delay in French business days: month ends,
weekends and public holidays), the company mentions of a billing profile are frozen on the
invoices issued to and by it, and a refund's credit note names the customer's account (BT-84)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from backend import clock
from backend.billing import corrections
from backend.billing.documents.invoice_snapshot import snapshot_of_invoice
from backend.billing.documents.snapshot import PaymentMethod as MeansMethod
from backend.billing.models import Invoice, PaymentMethod
from backend.billing.self_billing import scheduler
from backend.billing.self_billing.business_days import PARIS, is_business_day
from backend.billing.self_billing.mandate_document import (
    CONTESTATION_DELAY_DAYS,
    PAYOUT_DELAY_BUSINESS_DAYS,
    mandate_context,
    self_billed_due_at,
    self_billed_due_date,
)
from backend.identity.models import BillingProfile
from tests.billing.helpers import Market, approved_org, booted_config
from tests.billing.self_billing.data import AFTER, collected, sign_mandate

CUSTOMER_IBAN = "FR1420041010050500013M02606"


def test_a_self_billed_due_date_across_month_ends_weekends_and_holidays():
    assert (CONTESTATION_DELAY_DAYS, PAYOUT_DELAY_BUSINESS_DAYS) == (30, 5)
    cases = {
        date(2026, 1, 31): date(2026, 3, 9),    # 2 March (a Monday), then 3-6 and 9 March
        date(2026, 4, 1): date(2026, 5, 11),    # 1 May (Friday, holiday), 8 May (holiday) skipped
        date(2026, 4, 20): date(2026, 5, 28),   # 20 May; Whit Monday 25 May skipped
        date(2026, 11, 22): date(2026, 12, 30),  # 22 December; Christmas skipped
        date(2026, 12, 1): date(2027, 1, 8),    # 31 December; 1 January and the weekend skipped
        date(2027, 7, 1): date(2027, 8, 6),     # 31 July (a Saturday), then 2-6 August
    }
    assert {issued: self_billed_due_date(issued) for issued in cases} == cases


@given(st.dates(min_value=date(2026, 1, 1), max_value=date(2035, 12, 31)))
def test_a_self_billed_invoice_is_due_the_fifth_business_day_after_its_contestation_delay(issued):
    due = self_billed_due_date(issued)
    end_of_contest = issued + timedelta(days=CONTESTATION_DELAY_DAYS)
    between = [end_of_contest + timedelta(days=n) for n in range(1, (due - end_of_contest).days + 1)]
    assert is_business_day(due)
    assert sum(is_business_day(day) for day in between) == PAYOUT_DELAY_BUSINESS_DAYS


def test_the_due_time_keeps_the_paris_day_across_a_change_of_time():
    late_evening = datetime(2026, 3, 1, 22, 30, tzinfo=UTC)  # 23:30 in Paris (winter), 1 March
    due = self_billed_due_at(late_evening)
    assert due.astimezone(PARIS).date() == self_billed_due_date(date(2026, 3, 1))  # due in April (summer time)
    assert (due.astimezone(PARIS).hour, due.astimezone(PARIS).minute) == (23, 30)


def test_an_issued_self_billed_invoice_is_due_as_its_mandate_says_and_carries_the_sellers_mentions():
    industrial, distributor = approved_org("industrial"), approved_org("distributor")
    BillingProfile.update(legal_form="SARL", share_capital_cents=800_000,
                          registration=f"RCS Annecy {distributor.siren[:3]} {distributor.siren[3:6]} "
                                       f"{distributor.siren[6:]}").where(
        BillingProfile.organization == distributor.id).execute()
    sign_mandate(distributor)
    reservation = collected(Market(), industrial, distributor)
    with clock.frozen_at(AFTER):
        scheduler.self_bill_due_reservations(config=booted_config())
    invoice = Invoice.get(Invoice.reservation_id == reservation.id, Invoice.kind == "supplier_self_billed")
    # Issued on 21 December 2026: contestable until 20 January 2027, paid 5 business days later.
    assert invoice.due_at.astimezone(PARIS).date() == date(2027, 1, 27)
    snapshot = snapshot_of_invoice(invoice, booted_config())
    assert snapshot.due_date == date(2027, 1, 27)
    assert snapshot.seller.company_mentions == f"SARL au capital de 8\u202f000,00 EUR, RCS Annecy " \
        f"{distributor.siren[:3]} {distributor.siren[3:6]} {distributor.siren[6:]}"
    # The payee of a self-billed invoice is the distributor, paid by transfer into its account.
    assert snapshot.payment_means.method == MeansMethod.CREDIT_TRANSFER
    assert snapshot.payment_means.creditor_iban == BillingProfile.get_by_id(distributor.id).iban


def test_a_refunds_credit_note_names_the_customers_account_and_a_credit_none():
    industrial = approved_org("industrial", iban=CUSTOMER_IBAN)
    distributor = approved_org("distributor")
    sale = Invoice.get(Invoice.reservation_id == collected(Market(), industrial, distributor).id)
    refunded = corrections.refund(invoice_number=sale.number, amount_cents=20_000, reason="geste", user_id=None,
                                  method=PaymentMethod.BANK_TRANSFER, config=booted_config())
    note = Invoice.get(Invoice.number == refunded.credit_note_number)
    means = snapshot_of_invoice(note, booted_config()).payment_means
    assert (means.method, means.creditor_iban) == (MeansMethod.CREDIT_TRANSFER, CUSTOMER_IBAN)
    credited = corrections.credit_in_full(invoice_number=sale.number, reason="annulation", user_id=None,
                                          config=booted_config())
    whole = Invoice.get(Invoice.number == credited.credit_note_number)
    assert snapshot_of_invoice(whole, booted_config()).payment_means is None  # a credit to deduct


def test_the_mandate_states_its_payout_delay():
    distributor = approved_org("distributor")
    context = mandate_context(distributor.id, signer={"firstName": "Alice", "lastName": "Martin"},
                              config=booted_config(), today=date(2026, 12, 1))
    assert (context["contestationDelayDays"], context["payoutDelayBusinessDays"]) == (30, 5)
