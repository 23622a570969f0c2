"""A stored invoice or mandate PDF is served only when its bytes are the ones recorded (sha256); a
row cannot point the download at another document; a status never moves off its transition table."""

from __future__ import annotations

import hashlib

import pytest
from peewee import DatabaseError

from backend import clock
from backend.billing.documents.stored_pdf import STORAGE_CONTEXT as INVOICE_PDF_CONTEXT
from backend.billing.invoicing.invoices import InvoiceDraft, Line, issue_invoice
from backend.billing.models import AuditEntry, Invoice, InvoiceKind, SelfBillingMandate
from backend.billing.self_billing.mandate_document import STORAGE_CONTEXT as MANDATE_CONTEXT
from backend.billing.self_billing.mandate_document import storage_key as mandate_key
from backend.db import database, transaction
from backend.runtime import current_runtime
from tests.billing.helpers import approved_org, booted_config
from tests.factories import add_member, make_admin, make_user, signed_in

PDF = b"%PDF-1.7\n% the issued invoice\n%%EOF\n"
OTHER = b"%PDF-1.7\n% another customer's invoice\n%%EOF\n"


def _sale(customer) -> Invoice:
    return issue_invoice(InvoiceDraft(kind=InvoiceKind.PLATFORM_SALE, lines=(Line("Emplacement", 100_000),),
                                      issuer_organization_id=None, customer_organization_id=customer.id),
                         config=booted_config())


def _stored(invoice: Invoice, content: bytes = PDF) -> str:
    key = f"billing/invoices/{invoice.number}.pdf"
    current_runtime().storage.put_bytes(INVOICE_PDF_CONTEXT, key, content, "application/pdf")
    Invoice.update(pdf_storage_key=key, pdf_sha256=hashlib.sha256(content).hexdigest()).where(
        Invoice.id == invoice.id).execute()
    return key


def _refused(statement: str, *params) -> str:
    with pytest.raises(DatabaseError) as refusal, transaction():
        database.execute_sql(statement, params)
    return getattr(refusal.value.orig, "pgcode", "")


def test_an_invoice_pdf_replaced_in_storage_is_not_served_but_logged_and_audited(client, log_lines):
    invoice = _sale(approved_org("industrial"))
    key = _stored(invoice)
    admin = signed_in(make_admin())
    path = f"/api/billing/invoices/{invoice.number}/download"
    served = client.simulate_get(path, headers=admin)
    assert served.status_code == 200 and served.content == PDF
    assert served.headers["x-content-type-options"] == "nosniff"
    current_runtime().storage.put_bytes(INVOICE_PDF_CONTEXT, key, OTHER, "application/pdf")
    refused = client.simulate_get(path, headers=admin)
    assert refused.status_code == 409 and refused.json["error"]["code"] == "DOCUMENT_INTEGRITY_FAILED"
    assert OTHER not in refused.content
    [entry] = AuditEntry.select().where(AuditEntry.action == "billing.document.integrity_failed")
    assert entry.details["invoiceNumber"] == invoice.number
    assert entry.details["storedSha256"] == hashlib.sha256(OTHER).hexdigest()
    assert any(line.get("scope") == "billing.document.integrity_failed" for line in log_lines())


def test_a_row_cannot_point_the_download_at_another_customers_pdf():
    """The review's reproduction: repointing `pdf_storage_key` at another invoice's file."""
    victim, mine = _sale(approved_org("industrial")), _sale(approved_org("industrial"))
    _stored(victim)
    assert _refused("UPDATE billing_invoice SET pdf_storage_key = %s WHERE id = %s",
                    f"billing/invoices/{victim.number}.pdf", mine.id) == "23000"
    _stored(mine)  # its own key, once
    assert _refused("UPDATE billing_invoice SET pdf_storage_key = %s WHERE id = %s",
                    f"billing/invoices/{victim.number}.pdf", mine.id) == "23000"


@pytest.mark.parametrize("moves, refused", [
    (("paid", "issued"), "issued"),  # a paid invoice back to `issued`
    (("credited",), None),
    (("credited", "paid"), "paid"),
    (("cancelled",), "cancelled"),  # a correction is a credit note
    (("partially_paid", "paid", "credited"), None),
])
def test_an_invoice_status_moves_only_along_its_transitions(moves, refused):
    invoice = _sale(approved_org("industrial"))
    for status in moves:
        statement = "UPDATE billing_invoice SET status = %s WHERE id = %s"
        if status == refused:
            assert _refused(statement, status, invoice.id) == "23514"
            return
        database.execute_sql(statement, (status, invoice.id))
    assert refused is None and Invoice.get_by_id(invoice.id).status == moves[-1]


def _signed_mandate(content: bytes = PDF) -> tuple[SelfBillingMandate, dict]:
    distributor = approved_org("distributor")
    member = make_user()
    add_member(member, distributor)
    mandate = SelfBillingMandate.create(organization_id=distributor.id, status="pending_signature",
                                        esign_request_ref=f"req-{distributor.siren}", requested_at=clock.now())
    key = mandate_key(distributor.id, mandate.id)
    current_runtime().storage.put_bytes(MANDATE_CONTEXT, key, content, "application/pdf")
    SelfBillingMandate.update(status="signed", signed_at=clock.now(), document_storage_key=key,
                              document_sha256=hashlib.sha256(content).hexdigest()).where(
        SelfBillingMandate.id == mandate.id).execute()
    return SelfBillingMandate.get_by_id(mandate.id), signed_in(member, distributor)


def test_a_mandate_pdf_replaced_in_storage_is_not_served(client):
    mandate, headers = _signed_mandate()
    path = f"/api/billing/organizations/{mandate.organization_id}/self-billing-mandate/document"
    served = client.simulate_get(path, headers=headers)
    assert served.status_code == 200 and served.content == PDF
    assert served.headers["x-content-type-options"] == "nosniff"
    assert served.headers["cache-control"] == "private, no-store"
    current_runtime().storage.put_bytes(MANDATE_CONTEXT, mandate.document_storage_key, OTHER, "application/pdf")
    refused = client.simulate_get(path, headers=headers)
    assert refused.status_code == 409 and refused.json["error"]["code"] == "DOCUMENT_INTEGRITY_FAILED"


def test_a_signed_mandate_keeps_its_file_and_moves_only_along_its_transitions():
    mandate, _ = _signed_mandate()
    assert _refused("UPDATE billing_self_billing_mandate SET document_sha256 = %s WHERE id = %s",
                    hashlib.sha256(OTHER).hexdigest(), mandate.id) == "23000"
    assert _refused("UPDATE billing_self_billing_mandate SET document_storage_key = 'x.pdf' WHERE id = %s",
                    mandate.id) == "23000"
    assert _refused("UPDATE billing_self_billing_mandate SET status = 'pending_signature' WHERE id = %s",
                    mandate.id) == "23514"
