"""Shape of a supplier payout (spec C)."""

from __future__ import annotations

from marshmallow import fields

from schemas.billing.invoices import MoneyMovedOut


class PayoutOut(MoneyMovedOut):
    """`backend.billing.payouts.PaidOut`."""

    reservationId = fields.String(attribute="reservation_id", required=True)
    invoiceNumber = fields.String(attribute="invoice_number", required=True,
                                  metadata={"description": "the self-billed invoice paid"})
    amountExclTaxCents = fields.Integer(attribute="amount_excl_tax_cents", required=True)
    amountCents = fields.Integer(attribute="amount_cents", required=True,
                                 metadata={"description": "the payment order, including VAT"})
    organizationId = fields.String(attribute="organization_id", required=True,
                                   metadata={"description": "the distributor paid"})
