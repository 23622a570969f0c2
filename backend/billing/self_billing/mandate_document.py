"""The self-billing mandate document (Specification C): the `self_billing_mandate` template's
context, its rendering, and the checks a signed file must pass before it is stored.

The context names both parties: the platform as agent (`PLATFORM_LEGAL_*`) and the distributor as
supplier (its billing profile, with the organization's legal name and SIREN as fallbacks); the
signer is the billing profile's signer, the distributor's legal signatory. A missing value is
written `non renseigné` (spec C: documents use readable fallback values), never invented.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

from backend.billing.invoicing.parties import NOT_PROVIDED, organization_party, platform_party
from backend.billing.self_billing.business_days import PARIS, add_business_days
from backend.config import Config
from backend.documents.rendering import render_document
from storage import Storage

TEMPLATE_KEY = "self_billing_mandate"
STORAGE_CONTEXT = "billing-self-billing-mandate"  # spec C: private context of the mandate PDFs
MAX_PDF_BYTES = 5 * 1024 * 1024  # spec C "Limits": mandate PDF 5 MB max, application/pdf only
CONTESTATION_DELAY_DAYS = 30  # spec C "Limits": per invoice
# What the mandate promises: each invoice paid by transfer at the latest this many French business
# days after its contestation delay ran out; that day is the invoice's due date.
PAYOUT_DELAY_BUSINESS_DAYS = 5
SIGNER_ROLE = "représentant légal"  # the billing profile records the legal signatory, not a title


def _address(party: dict) -> str:
    if NOT_PROVIDED in (party["street"], party["postalCode"], party["city"]):
        return NOT_PROVIDED
    return f"{party['street']}, {party['postalCode']} {party['city']}"


def self_billed_due_date(issue_date: date) -> date:
    """The due date of a self-billed invoice issued on `issue_date` (Paris): the end of the
    contestation delay, which runs from the invoice's issue (the mandate makes it available then),
    plus the payout delay, in business days, that the mandate states."""
    return add_business_days(issue_date + timedelta(days=CONTESTATION_DELAY_DAYS), PAYOUT_DELAY_BUSINESS_DAYS)


def self_billed_due_at(issued_at: datetime) -> datetime:
    """`self_billed_due_date` of the issue time, at the same Paris time of day."""
    local = issued_at.astimezone(PARIS)
    return datetime.combine(self_billed_due_date(local.date()), local.timetz().replace(tzinfo=None), PARIS)


def mandate_context(organization_id: str, *, signer: dict, config: Config, today: date) -> dict:
    """The template variables: both parties, the signer, the contestation and payout delays."""
    platform, supplier = platform_party(config), organization_party(organization_id)
    return {
        "platformName": platform["legalName"], "platformSiret": platform["siret"],
        "platformAddress": _address(platform), "platformVatNumber": platform["vatNumber"],
        "distributorName": supplier["legalName"], "distributorSiren": supplier["siren"],
        "distributorAddress": _address(supplier), "distributorVatNumber": supplier["vatNumber"],
        "signerFirstName": signer["firstName"], "signerLastName": signer["lastName"], "signerRole": SIGNER_ROLE,
        "contestationDelayDays": CONTESTATION_DELAY_DAYS, "payoutDelayBusinessDays": PAYOUT_DELAY_BUSINESS_DAYS,
        "effectiveDate": today,
    }


def render_mandate(organization_id: str, *, signer: dict, storage: Storage, config: Config, today: date) -> bytes:
    """The mandate PDF from the current published version of the template."""
    context = mandate_context(organization_id, signer=signer, config=config, today=today)
    return render_document(TEMPLATE_KEY, context, storage=storage, config=config)


def pdf_problem(content: bytes) -> str | None:
    """Why `content` cannot be stored as the mandate PDF (None when it can): PDF only, 5 MB max."""
    if len(content) > MAX_PDF_BYTES:
        return f"the signed file is {len(content)} bytes, over the {MAX_PDF_BYTES} bytes limit"
    if not content.startswith(b"%PDF-"):
        return "the signed file is not a PDF"
    return None


def storage_key(organization_id: str, mandate_id: str) -> str:
    # Storage keys allow no colon: `distributor:385347927` becomes `distributor-385347927`.
    return f"{organization_id.replace(':', '-')}/{mandate_id}.pdf"
