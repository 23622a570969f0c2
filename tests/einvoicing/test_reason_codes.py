"""The closed list of status reasons and each status's own list (BR-FR-CDV-CL-09 and its
per-status rules `_MDT-113_<status>`): what a distributor's decision may carry, what an operator
error becomes, and a disputed or refused status with a reason its status does not admit refused by
the operator simulator over HTTP."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from backend.einvoicing import cdar, decision_reports, lifecycle, reason_codes
from backend.einvoicing.operator_client import Flow, OperatorRejected

MOMENT = datetime(2026, 12, 3, 9, 30, tzinfo=UTC)


def test_each_status_list_is_part_of_the_closed_list_and_the_platform_s_own_codes_are_admitted():
    assert all(code in reason_codes.LABELS for codes in reason_codes.ALLOWED.values() for code in codes)
    assert len(reason_codes.ALLOWED[210]) == 13 and "AUTRE" not in reason_codes.ALLOWED[210]  # no "other" refusal
    assert reason_codes.admitted(reason_codes.DEFAULT_CONTEST, 207)
    assert reason_codes.admitted(reason_codes.DEFAULT_CONTEST, 210)
    assert reason_codes.admitted(reason_codes.DEFAULT_REJECTION, 213)
    assert not reason_codes.admitted(None, 207) and not reason_codes.admitted("FAUTE", 209)


@pytest.mark.parametrize(("code", "reason_code"), [(210, "AUTRE"), (207, "REJ_SEMAN"), (210, None)])
def test_a_decision_with_a_reason_its_status_does_not_admit_is_refused(code, reason_code):
    with pytest.raises(ValueError, match="admits"):
        decision_reports.queue("FAC-SUP-000000000-2026-000001", code=code, at=MOMENT, reason_code=reason_code)


def test_an_operator_error_keeps_its_code_only_when_a_213_admits_it():
    def rejection(code: str) -> str:
        flow = Flow(flow_id="f-1", tracking_id="FAC-RES-2026-000001", status="Error", error_message="refusé",
                    answer={"errors": [{"code": code}], "updatedAt": "2026-12-03T09:30:00Z"})
        return lifecycle.rejection_of(flow).reason

    assert rejection("DOUBLON") == "DOUBLON refusé"
    assert rejection("QTE_ERR") == "REJ_SEMAN refusé"  # a dispute's reason: not a platform's rejection


def test_the_simulator_refuses_a_refusal_whose_reason_its_status_does_not_admit(operator, operator_client):
    seller = cdar.Party(siren="901234567", name="Distributeur SAS", role="SE")
    refusal = cdar.StatusMessage(
        message_id="FAC-SUP-901234567-2026-000001:210", invoice_number="FAC-SUP-901234567-2026-000001",
        invoice_type_code="389", invoice_issued_on=date(2026, 12, 1), invoice_issuer_siren="901234567", code=210,
        at=MOMENT, created_at=MOMENT, issuer=seller, recipients=(cdar.Party("732829320", "Vitrine", "BY"),
                                                                 cdar.PUBLIC_PORTAL),
        reason_code="AUTRE", reason="Deux jours de fermeture")
    with pytest.raises(OperatorRejected) as refused:
        operator_client.submit_flow(tracking_id=refusal.message_id, name="s.xml", content=cdar.build(refusal),
                                    flow_syntax="CDAR", content_type="application/xml", flow_type="CustomerInvoiceLC")
    assert refused.value.status == 400 and "BR-FR-CDV-CL-09_MDT-113_210" in refused.value.message
    assert operator.flows(flow_type="CustomerInvoiceLC") == []
