"""Property: for random store prices, commission rates and VAT rates, the cart breakdown, the
invoice amounts, the VAT, the payment order and the ledger entries of a collection all agree."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backend.billing.collection import collect
from backend.billing.invoicing.invoices import amounts
from backend.billing.models import Invoice, PaymentMethod, PaymentOrder
from backend.billing.vat import vat_rate_bps
from backend.db import transaction
from backend.money import round_half_up_div
from tests.billing.accounting.books import book_totals
from tests.billing.helpers import Market, approved_org

VAT_PERCENTS = st.sampled_from([0, 2.1, 5.5, 10, 20])


class _Rollback(Exception):
    pass


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(price=st.integers(min_value=0, max_value=50_000_000), rate_bps=st.integers(min_value=0, max_value=10_000),
       vat_percent=VAT_PERCENTS)
def test_breakdown_invoice_vat_and_ledger_agree(config, price, rate_bps, vat_percent):
    try:
        with transaction():
            _check(replace(config, platform_vat_rate_percent=vat_percent), price, rate_bps)
            raise _Rollback
    except _Rollback:
        pass


def _check(config, price: int, rate_bps: int) -> None:
    industrial, distributor = approved_org("industrial"), approved_org("distributor")
    market = Market()
    seen: list = []
    reservation = market.reservation(industrial, distributor, price_cents=price, rate_bps=rate_bps, cart_seen=seen)
    (line,) = seen[0].lines
    shown = line.pricing.as_api()  # the breakdown the industrial saw in the cart
    assert seen[0].totals.as_api()["totalIndustrialPayableCents"] == shown["industrialTotalPayableCents"]
    assert (reservation.base_amount_cents, reservation.commission_amount_cents, reservation.total_amount_cents) == (
        shown["netDistributorAmountCents"], shown["platformCommissionAmountCents"],
        shown["industrialTotalPayableCents"])
    answer = collect.collect(reservation_id=reservation.id, industrial_organization_id=industrial.id,
                                method=PaymentMethod.BANK_TRANSFER, key="p", user_id=None, config=config)
    invoice = Invoice.get(Invoice.number == answer.invoice_number)
    shown_amounts = amounts(invoice)
    rate = vat_rate_bps(config.platform_vat_rate_percent)
    assert invoice.amount_excl_tax_cents == shown["industrialTotalPayableCents"]
    assert sum(line["totalCents"] for line in invoice.lines) == invoice.amount_excl_tax_cents
    assert invoice.vat_rate_bps == rate
    assert shown_amounts.vat_amount_cents == round_half_up_div(invoice.amount_excl_tax_cents * rate, 10_000)
    assert shown_amounts.amount_incl_tax_cents == invoice.amount_excl_tax_cents + shown_amounts.vat_amount_cents
    assert PaymentOrder.get_by_id(answer.payment_order_id).amount_cents == shown_amounts.amount_incl_tax_cents
    incl = shown_amounts.amount_incl_tax_cents
    booked = {("411", "debit"): incl, ("706", "credit"): shown["industrialTotalPayableCents"],
              ("44574", "credit"): shown_amounts.vat_amount_cents}  # payment and VAT due: at the bank
    assert book_totals(invoice_id=invoice.id) == {key: cents for key, cents in booked.items() if cents}  # no zero line
