"""The account a payout or a refund pays, recorded on its payment order when it is made (API.md
"Payouts and refunds only move money received, to accounts reviewed").

It is the creditor's account as last approved at KYB (`identity.bank_details`: IBAN, BIC when
given, holder name), never the live billing profile: an IBAN typed since then waits for the next
approval. A customer who paid the sale by direct debit and whose approved profile has no IBAN is
refunded to the account of the mandate it signed for that debit (it holds that account; no BIC:
the mandate names none), never to one signed before its approved account was voided (the
organization was given back after squatting: that mandate is the squatter's). Without either, the
order records no IBAN and the credit transfer runs hold it back (`bank.orders`) until an admin
refreshes it.
"""

from __future__ import annotations

from backend.billing.models import PaymentMethod, PaymentOrder, SepaMandate
from backend.identity import bank_details
from backend.identity.models import Organization


def creditor_account(organization_id: str, *, paid_invoice_id: str | None = None) -> dict:
    """The `creditor_*` fields of a payment order to `organization_id`; `paid_invoice_id`: the
    invoice whose payment a refund gives back (its direct debit's mandate is the fallback)."""
    approved = bank_details.approved_account(organization_id)
    iban = approved.iban if approved else None
    if iban is None and paid_invoice_id is not None:
        mandates = (SepaMandate.select(SepaMandate.iban)
                    .join(PaymentOrder, on=PaymentOrder.mandate_ref == SepaMandate.mandate_ref)
                    .where(PaymentOrder.invoice == paid_invoice_id, PaymentOrder.method == PaymentMethod.SEPA_DD))
        if voided := bank_details.voided_at({organization_id}).get(organization_id):
            mandates = mandates.where(SepaMandate.signed_at > voided)  # not the squatter's account
        iban = mandates.order_by(PaymentOrder.created_at.desc()).scalar()
    name = approved.holder_name if approved else (
        Organization.select(Organization.legal_name).where(Organization.id == organization_id).scalar())
    from_approved = approved is not None and approved.iban is not None
    return {"creditor_iban": iban, "creditor_bic": approved.bic if from_approved else None, "creditor_name": name,
            "creditor_approved_at": approved.approved_at if approved and iban else None}
