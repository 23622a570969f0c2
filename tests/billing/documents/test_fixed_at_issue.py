"""What an invoice says is fixed at issue: its payment wording, BT-23 and prepaid amount come from
its state when it was issued, never from when its PDF is rendered. A direct-debit sale is not
"réglée" before the debit reaches the bank, and says the same after the bank booked it."""

from __future__ import annotations

from backend.billing.bank import statements
from backend.billing.documents.cii import billing_framework
from backend.billing.documents.invoice_snapshot import snapshot_of_invoice
from backend.billing.documents.render import payment_terms, render_invoice_pdf
from backend.billing.models import Invoice, PaymentOrder
from tests.billing.bank.statements_data import collected, config, credit, statement


def test_a_debit_sale_says_the_same_before_and_after_its_settlement(storage, seeded):
    order = collected()
    invoice = Invoice.get_by_id(order.invoice_id)
    assert invoice.paid_at is not None  # recorded paid with the invoice, the debit not yet presented
    before = snapshot_of_invoice(invoice, config())
    first = render_invoice_pdf(before, storage=storage)

    statements.import_statement(statement(credit(order)), config=config(), user_id=None)
    assert PaymentOrder.get_by_id(order.id).settlement == "settled"
    after = snapshot_of_invoice(Invoice.get_by_id(invoice.id), config())
    again = render_invoice_pdf(after, storage=storage)

    assert after == before and again.content == first.content
    assert (after.paid_cents, after.due_cents, billing_framework(after)) == (0, after.amount_incl_tax_cents, "S1")
    assert "réglée" not in payment_terms(after) and payment_terms(after).startswith("Règlement par prélèvement SEPA")
