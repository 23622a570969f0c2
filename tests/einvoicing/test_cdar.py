"""Lifecycle statuses as CDAR messages: what `cdar.build` writes, `cdar_validation.check` reads back
(any status, reason and amounts: a hypothesis test); a broken message is refused by the check, so
by the client before sending, and by the operator simulator over HTTP with its reason."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from backend.einvoicing import cdar, reason_codes, reform_statuses
from backend.einvoicing.cdar_validation import CdarInvalid, check
from backend.einvoicing.operator_client import OperatorRejected

SELLER = cdar.Party(siren="901234567", name="Vitrine Démo SAS", role="SE")
BUYER = cdar.Party(siren="412345674", name="Industriel SA", role="BY")
MOMENT = datetime(2026, 12, 3, 9, 30, tzinfo=UTC)


def message(**changes) -> cdar.StatusMessage:
    values = {"message_id": "FAC-RES-2026-000001:212:po-1", "invoice_number": "FAC-RES-2026-000001",
              "invoice_type_code": "380", "invoice_issued_on": date(2026, 12, 1), "invoice_issuer_siren": "901234567",
              "code": 212, "at": MOMENT, "created_at": MOMENT, "issuer": SELLER,
              "recipients": (BUYER, cdar.PUBLIC_PORTAL), "received": (cdar.Received(144_000, 2_000),)}
    return cdar.StatusMessage(**{**values, **changes})


def test_a_212_reads_back_with_its_amounts_per_rate_and_the_profile_s_context():
    content = cdar.build(message(received=(cdar.Received(144_000, 2_000), cdar.Received(-1_050, 550))))
    summary = check(content)
    assert (summary["invoiceNumber"], summary["code"], summary["label"], summary["invoiceTypeCode"]) == (
        "FAC-RES-2026-000001", 212, "Encaissée", "380")
    assert summary["amounts"] == [{"amountCents": 144_000, "vatRateBps": 2_000},
                                  {"amountCents": -1_050, "vatRateBps": 550}]
    assert (summary["issuerSiren"], summary["issuerRole"]) == ("901234567", "SE")
    assert summary["at"] == "2026-12-03T10:30:00+01:00"  # Paris time
    root = etree.fromstring(content)
    assert root.findtext(f".//{{{cdar.RAM}}}GuidelineSpecifiedDocumentContextParameter/{{{cdar.RAM}}}ID") \
        == "urn.cpro.gouv.fr:1p0:CDV:invoice"
    assert [e.text for e in root.iter(f"{{{cdar.RAM}}}RoleCode")] == ["WK", "SE", "BY", "DFH"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(code=st.sampled_from(sorted(reform_statuses.LABELS)), pick=st.integers(0, len(reason_codes.LABELS)),
       amounts=st.lists(st.tuples(st.integers(-10**9, 10**9).filter(bool), st.sampled_from([0, 210, 550, 1000, 2000])),
                        min_size=1, max_size=3),
       text=st.text(st.characters(blacklist_categories=("Cs", "Cc", "Cn")), min_size=1, max_size=40)
       .filter(str.strip))
def test_any_status_the_platform_may_send_reads_back_as_built(code, pick, amounts, text):
    needs_reason = code in reform_statuses.REASON_REQUIRED
    admitted = sorted(reason_codes.ALLOWED.get(code, reason_codes.LABELS))  # the status's own list
    reason = admitted[pick % len(admitted)]
    built = message(code=code, reason_code=reason if needs_reason else None, reason=text.strip(),
                    received=tuple(cdar.Received(a, r) for a, r in amounts) if code == 212 else ())
    summary = check(cdar.build(built))
    assert (summary["code"], summary["label"]) == (code, reform_statuses.LABELS[code])
    assert summary["reasonCode"] == (reason if needs_reason else None)
    assert summary["reason"] == (text.strip() if needs_reason else None)
    expected = [{"amountCents": a, "vatRateBps": r} for a, r in amounts] if code == 212 else []
    assert summary["amounts"] == expected


def test_a_reason_with_characters_xml_cannot_carry_still_builds():
    summary = check(cdar.build(message(code=207, reason_code="NON_CONFORME", reason="fermé\x0b deux\ufffe jours",
                                       received=())))
    assert summary["reason"] == "fermé deux jours"


def _broken(content: bytes, old: bytes, new: bytes) -> bytes:
    assert old in content
    return content.replace(old, new, 1)


REFUSED = [
    ("a 210 without its reason code", lambda: cdar.build(message(code=210, received=())), "carries a reason code"),
    ("a reason outside the closed list", lambda: cdar.build(message(code=210, reason_code="FAUTE", received=())),
     "BR-FR-CDV-CL-09"),
    ("a reason of the list a 210 does not admit",
     lambda: cdar.build(message(code=210, reason_code="AUTRE", received=())), "BR-FR-CDV-CL-09_MDT-113_210"),
    ("a 213 with a dispute's reason",
     lambda: cdar.build(message(code=213, reason_code="QTE_ERR", received=())), "not admitted for a 213"),
    ("a status outside the reform's list",
     lambda: _broken(cdar.build(message()), b"ProcessConditionCode>212<", b"ProcessConditionCode>299<"),
     "status code '299'"),
    ("a 212 without an amount received", lambda: cdar.build(message(received=())), "amount received"),
    ("an issuer without its identifier", lambda: cdar.build(message(issuer=cdar.Party(None, "X", "SE"))),
     "issuer (MDT-38)"),
    ("elements out of order", lambda: _broken(
        _broken(cdar.build(message()), b"<ram:Name>FAC-RES-2026-000001-CDV-212</ram:Name>", b""),
        b"<ram:ID>FAC-RES-2026-000001:212:po-1</ram:ID>",
        b"<ram:Name>n</ram:Name><ram:ID>FAC-RES-2026-000001:212:po-1</ram:ID>"), "out of order"),
    ("another profile", lambda: _broken(cdar.build(message()), b"urn.cpro.gouv.fr:1p0:CDV:invoice", b"urn:other"),
     "guideline"),
    ("a date that is not format 204",
     lambda: _broken(cdar.build(message()), b'format="204">2026', b'format="102">2026'), "format 204"),
    ("a SIREN of eight digits", lambda: cdar.build(message(issuer=cdar.Party("90123456", "X", "SE"))), "nine digits"),
    ("an entity", lambda: b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY e "x">]><r>&e;</r>', "DOCTYPE"),
    ("not XML", lambda: b"{\"code\": 212}", "well-formed"),
]


@pytest.mark.parametrize(("case", "make", "problem"), REFUSED, ids=[case for case, _, _ in REFUSED])
def test_a_broken_message_is_refused_with_its_problem(case, make, problem):
    with pytest.raises(CdarInvalid) as refused:
        check(make())
    assert problem in str(refused.value)


def test_the_simulator_refuses_a_broken_message_over_http_and_takes_a_valid_one(operator, operator_client):
    broken = cdar.build(message(code=210, received=()))
    with pytest.raises(OperatorRejected) as refused:
        operator_client.submit_flow(tracking_id="FAC-RES-2026-000001:210", name="s.xml", content=broken,
                                    flow_syntax="CDAR", content_type="application/xml", flow_type="CustomerInvoiceLC")
    assert refused.value.status == 400 and "carries a reason code" in refused.value.message
    with pytest.raises(OperatorRejected) as as_json:
        operator_client.submit_flow(tracking_id="FAC-RES-2026-000001:212", name="s.json", content=b'{"code":212}',
                                    flow_syntax="CDAR", content_type="application/json",
                                    flow_type="CustomerInvoiceLC")
    assert as_json.value.status == 400 and "CDAR" in as_json.value.message
    operator_client.submit_flow(tracking_id="FAC-RES-2026-000001:212", name="s.xml", content=cdar.build(message()),
                                flow_syntax="CDAR", content_type="application/xml", flow_type="CustomerInvoiceLC")
    [flow] = operator.flows(flow_type="CustomerInvoiceLC")
    assert (flow["statusReport"]["code"], flow["statusReport"]["label"]) == (212, "Encaissée")
