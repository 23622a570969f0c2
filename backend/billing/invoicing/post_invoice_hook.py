"""The post-invoice hook (Specification C): what follows an issued invoice, asynchronously.

Subscribed to `invoice.issued` (backend/events.py), so it runs once the invoice is committed, out
of the flow that issued it (collection, credit note, refund, self-billing), and never makes that
flow fail: `run_post_invoice_hook` catches everything, logs it and returns.

1. Generate the Factur-X PDF, store it (`billing-invoice-pdf`, `billing/invoices/<number>.pdf`),
   persist `pdfStorageKey`. An invoice whose PDF is already stored is not rendered again.
2. Map the kind to the document the operator receives (`invoice` or `credit_note`).
3. Resolve the buyer's country (billing-profile address, else `PLATFORM_COUNTRY_CODE`; the
   platform's own `PLATFORM_LEGAL_COUNTRY` when it is the buyer) and the flow type; the amount
   including tax is the PDF's (`backend.billing.vat`).
4. Only once the PDF is stored, create the transmission draft (`pending_dispatch`,
   `documentPdfKey` set) through the e-invoicing area, which transmits only `fr_domestic_b2b`
   flows. No PDF, no draft: reconciliation reports the invoice as `missing_transmission`.
   Self-billed kinds get a draft only when `EINVOICING_SELF_BILLING_ENABLED` is true and the
   distributor has a signed self-billing mandate; otherwise the draft is skipped with telemetry.
   Legacy kinds get a PDF and no transmission.
   A document that is no electronic invoice (self-billing kept out of e-invoicing, no signed
   mandate, a buyer abroad whose flow is e-reporting data) is the invoice itself: once its PDF is
   stored it is queued to be e-mailed (`mail_invoice_document`, `documents/mailing.py`: once per
   document, retried on failure). An electronic invoice (a `B2B` transmission) is e-mailed as a
   copy of the electronic invoice once the operator accepted its deposit (`einvoice.acknowledged`,
   published by the e-invoicing area), never for a rejected one.
5. A second invocation finds the stored PDF and the existing transmission (`idempotent: true`):
   the transmission's idempotency key `<invoiceNumber>:<documentKind>:<flowType>` and its unique
   index make concurrent hooks end with one transmission.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from backend import outbox
from backend.billing.documents.invoice_snapshot import snapshot_of_invoice
from backend.billing.documents.mailing import MAILED_KINDS
from backend.billing.documents.render import FAILURE_SCOPE
from backend.billing.documents.stored_pdf import ensure_invoice_pdf
from backend.billing.models import DocumentMailing, Invoice, SelfBillingMandate, SelfBillingMandateStatus
from backend.config import Config
from backend.db import transaction
from backend.einvoicing.drafts import create_transmission_draft
from backend.einvoicing.flow_types import SELF_BILLED_KINDS, document_kind_for, flow_type_for, resolve_buyer_country
from backend.identity.models import BillingProfile
from backend.logs import log_event
from storage import Storage

DRAFT_SCOPE = "billing.einvoicing.transmission_draft"
HOOK_SCOPE = "billing.invoice.post_issue"

MandateCheck = Callable[[str], bool]


@dataclass(frozen=True)
class HookOutcome:
    invoice_number: str
    pdf_storage_key: str | None
    transmission_id: str | None = None
    idempotent: bool = False
    skipped: str | None = None  # why no transmission draft was made


def run_post_invoice_hook(invoice_id: str, *, storage: Storage, config: Config,
                          mandate_signed: MandateCheck | None = None) -> HookOutcome | None:
    """Steps 1-5 for one invoice; never raises (a failure is logged and None returned). The
    caller (the worker's actor) passes the storage and settings it booted with."""
    try:
        return _run(invoice_id, storage, config, mandate_signed or signed_self_billing_mandate)
    except Exception as exc:  # the hook never re-raises into the flow that issued the invoice
        log_event(HOOK_SCOPE, "post-invoice hook failed", "error", invoiceId=invoice_id,
                  error=f"{type(exc).__name__}: {exc}")
        return None


def _run(invoice_id: str, storage: Storage, config: Config, mandate_signed: MandateCheck) -> HookOutcome | None:
    invoice = Invoice.get_or_none(Invoice.id == invoice_id)
    if invoice is None:
        log_event(HOOK_SCOPE, "post-invoice hook for an unknown invoice", "warn", invoiceId=invoice_id)
        return None
    number, kind = invoice.number, str(invoice.kind)
    try:
        snapshot = snapshot_of_invoice(invoice, config)
        key = ensure_invoice_pdf(invoice, storage=storage, config=config, snapshot=snapshot)
    except Exception as exc:
        log_event(FAILURE_SCOPE, "invoice PDF not generated or not stored", "error", invoiceNumber=number,
                  kind=kind, error=f"{type(exc).__name__}: {exc}")
        return _skipped(number, None, "pdf_failed", kind)
    document_kind = document_kind_for(kind)
    if document_kind is None:  # legacy kinds: a PDF, no transmission
        return _skipped(number, key, "legacy_kind", kind)
    if kind in SELF_BILLED_KINDS:
        if not config.einvoicing_self_billing_enabled:
            _queue_mail(invoice)
            return _skipped(number, key, "self_billing_disabled", kind)
        if not mandate_signed(invoice.issuer_organization_id):
            _queue_mail(invoice)
            return _skipped(number, key, "no_signed_mandate", kind, organizationId=invoice.issuer_organization_id)

    try:
        flow = flow_type_for(buyer_country(invoice, config))
        transmission, existed = create_transmission_draft(
            invoice_number=number, document_kind=document_kind.value, flow_type=flow.value,
            document_pdf_key=key, amount_incl_tax_cents=snapshot.amount_incl_tax_cents, invoice_kind=kind,
        )
    except Exception as exc:
        log_event(f"{DRAFT_SCOPE}_failed", "e-invoicing transmission draft failed", "error", invoiceNumber=number,
                  kind=kind, error=f"{type(exc).__name__}: {exc}")
        return HookOutcome(number, key, skipped="einvoicing_failed")
    if transmission is None:  # an e-reporting flow: the e-invoicing area logged the skip
        _queue_mail(invoice)
        return HookOutcome(number, key, skipped="e_reporting_flow")
    if transmission.processing_rule != "B2B":  # e-reporting data: the PDF is the invoice itself
        _queue_mail(invoice)
    if kind in SELF_BILLED_KINDS and not existed:  # spec C "self-billing gating" scope
        log_event("billing.supplier.self_billing.transmission_created", "self-billed invoice's transmission draft",
                  "info", invoiceNumber=number, kind=kind, organizationId=invoice.issuer_organization_id,
                  transmissionId=str(transmission.id))
    return HookOutcome(number, key, transmission_id=str(transmission.id), idempotent=existed)


def buyer_country(invoice: Invoice, config: Config) -> str:
    """Spec C: the billing profile's billing-address country, else `PLATFORM_COUNTRY_CODE`
    (organizations hold no other legal address); the platform buying (self-billed kinds) is in
    `PLATFORM_LEGAL_COUNTRY`."""
    if invoice.customer_organization_id is None:
        return resolve_buyer_country(config.platform_legal_country, default=config.platform_country_code)
    profile = (BillingProfile.select(BillingProfile.country)
               .where(BillingProfile.organization == invoice.customer_organization_id).first())
    return resolve_buyer_country(profile.country if profile else None, default=config.platform_country_code)


def signed_self_billing_mandate(organization_id: str | None) -> bool:
    """Whether the distributor has a `signed` self-billing mandate (spec C)."""
    if organization_id is None:
        return False
    return (SelfBillingMandate.select(SelfBillingMandate.id)
            .where(SelfBillingMandate.organization_id == organization_id,
                   SelfBillingMandate.status == SelfBillingMandateStatus.SIGNED)
            .exists())


def _queue_mail(invoice: Invoice) -> None:
    """A document that goes to no operator is the invoice itself: it is queued to be e-mailed now,
    once (a second hook finds it claimed). One the operator receives is e-mailed as a copy of the
    electronic invoice once the deposit is accepted (`einvoice.acknowledged`), never before."""
    if invoice.kind in MAILED_KINDS and \
            not DocumentMailing.select().where(DocumentMailing.invoice_id == invoice.id).exists():
        with transaction():
            outbox.enqueue("mail_invoice_document", invoice.id)


def _skipped(number: str, key: str | None, reason: str, kind: str, **fields: object) -> HookOutcome:
    log_event(f"{DRAFT_SCOPE}_skipped", "no transmission draft", "info", invoiceNumber=number, kind=kind,
              reason=reason, **fields)
    return HookOutcome(number, key, skipped=reason)
