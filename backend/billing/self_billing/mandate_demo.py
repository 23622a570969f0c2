"""The demo distributor's signed self-billing mandate (`vitrine seed-demo`), so a scheduler pass
in `vitrine dev` can self-bill its reservations.

`seed-demo` runs without the e-signature provider, so the mandate is recorded directly as
`signed`, with the real rendered `self_billing_mandate` PDF stored where a signed one would be
(`billing-self-billing-mandate`); its `esignRequestRef` is `demo-<id>` (no provider request).
Idempotent: once the demo distributor has a mandate (any status), nothing is added.
"""

from __future__ import annotations

from backend import clock
from backend.billing.models import SelfBillingMandate, SelfBillingMandateStatus
from backend.billing.self_billing.mandate import VERIFICATION
from backend.billing.self_billing.mandate_document import STORAGE_CONTEXT, render_mandate, storage_key
from backend.config import Config
from backend.documents.seeding import seed_default_versions
from backend.marketplace.demo import DISTRIBUTOR
from backend.model import new_id
from storage import Storage

DEMO_SIGNER = {"firstName": "Denis", "lastName": "Distributeur", "email": "distributeur@vitrine.example",
               "phone": None}


def seed_demo_self_billing_mandate(*, storage: Storage, config: Config) -> str:
    if SelfBillingMandate.select().where(SelfBillingMandate.organization_id == DISTRIBUTOR).exists():
        return "the demo distributor already has a self-billing mandate"
    seed_default_versions(storage)  # the templates' first versions, when `migrate` has not published them
    mandate_id = new_id()
    key = storage_key(DISTRIBUTOR, mandate_id)
    pdf = render_mandate(DISTRIBUTOR, signer=DEMO_SIGNER, storage=storage, config=config, today=clock.now().date())
    storage.put_bytes(STORAGE_CONTEXT, key, pdf, "application/pdf")  # the blob before the row
    now = clock.now()
    SelfBillingMandate.create(
        id=mandate_id, organization_id=DISTRIBUTOR, status=SelfBillingMandateStatus.SIGNED,
        signature_level=VERIFICATION.signature_level.value, esign_request_ref=f"demo-{mandate_id}",
        signer=DEMO_SIGNER, document_storage_key=key, requested_at=now, signed_at=now,
    )
    return "signed self-billing mandate of the demo distributor recorded with its PDF"
