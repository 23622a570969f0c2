"""Payment data (212) follow the seller's VAT: a sale whose seller opted to pay VAT on debits owed
its VAT at issue, so its settled payment gives no 212; one without the option gives one."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from backend.billing.bank import settlement as bank_settlement
from backend.billing.collection import collect
from backend.billing.models import Invoice, PaymentMethod, PaymentOrder
from backend.einvoicing import payment_reports
from backend.einvoicing.models import PaymentReport
from tests.billing.helpers import Market, approved_org, booted_config


@pytest.mark.parametrize(("on_debits", "reports"), [(False, 1), (True, 0)])
def test_a_sale_whose_seller_opted_for_vat_on_debits_gets_no_212(on_debits, reports):
    industrial, distributor = approved_org("industrial"), approved_org("distributor")
    reservation = Market().reservation(industrial, distributor, price_cents=100_000)
    answer = collect.collect(reservation_id=reservation.id, industrial_organization_id=industrial.id,
                             method=PaymentMethod.BANK_TRANSFER, key=f"k-{reservation.id}", user_id=None,
                             config=replace(booted_config(), platform_vat_on_debits=on_debits))
    invoice = Invoice.get(Invoice.number == answer.invoice_number)
    assert invoice.issuer["vatOnDebits"] is on_debits  # frozen on the invoice at issue
    [order] = PaymentOrder.select().where(PaymentOrder.invoice == invoice.id)
    bank_settlement.settle(order.id, booked_on=date(2026, 12, 3))
    payment_reports.sweep()
    assert PaymentReport.select().where(PaymentReport.invoice_number == invoice.number).count() == reports
