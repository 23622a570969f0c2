"""A distributor's decision taken before its self-billed invoice's transmission exists (seconds
after the issue, through the API) is recorded, joins the transmission's lifecycle when the draft
is created, and is never recorded twice."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from backend.einvoicing import decision_reports
from backend.einvoicing.drafts import create_transmission_draft
from backend.einvoicing.models import DecisionReport, LifecycleEvent

MOMENT = datetime(2026, 12, 3, 9, 30, tzinfo=UTC)


def _draft(number: str):
    return create_transmission_draft(invoice_number=number, document_kind="invoice", flow_type="fr_domestic_b2b",
                                     document_pdf_key=None, amount_incl_tax_cents=12_000)


def _lifecycle(transmission) -> list[tuple[int, str | None]]:
    return [(event.code, event.reason) for event in
            LifecycleEvent.select().where(LifecycleEvent.transmission == transmission.id).order_by(LifecycleEvent.at)]


def test_a_contest_before_the_draft_is_recorded_and_joins_the_lifecycle_once_the_draft_exists():
    number = f"FAC-SUP-{uuid.uuid4().hex[:9]}-2026-000001"
    report = decision_reports.queue(number, code=207, at=MOMENT, reason_code="NON_CONFORME", reason="vitrine absente")
    assert report is not None and report.status == "pending"
    transmission, existed = _draft(number)
    assert not existed
    assert _lifecycle(transmission) == [(207, "NON_CONFORME vitrine absente")]
    _draft(number)  # the draft asked again: nothing replayed twice
    assert decision_reports.queue(number, code=207, at=MOMENT, reason_code="NON_CONFORME") is None
    assert _lifecycle(transmission) == [(207, "NON_CONFORME vitrine absente")]
    assert DecisionReport.select().where(DecisionReport.invoice_number == number).count() == 1


def test_a_decision_after_the_draft_shows_at_once():
    number = f"FAC-SUP-{uuid.uuid4().hex[:9]}-2026-000002"
    transmission, _ = _draft(number)
    decision_reports.queue(number, code=205, at=MOMENT)
    assert _lifecycle(transmission) == [(205, None)]
