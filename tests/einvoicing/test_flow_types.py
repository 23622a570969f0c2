"""Buyer country to flow type (spec C, EinvoiceFlowType)."""

from __future__ import annotations

import pytest

from backend.einvoicing.flow_types import (
    EU_MEMBER_STATES,
    UnsupportedIssuer,
    document_kind_for,
    flow_type_for,
    processing_rule_for,
    resolve_buyer_country,
)


@pytest.mark.parametrize(
    ("country", "flow_type"),
    [("FR", "fr_domestic_b2b"), ("fr", "fr_domestic_b2b"), (" FR ", "fr_domestic_b2b"), ("DE", "eu_intra_b2b"),
     ("BE", "eu_intra_b2b"), ("EL", "eu_intra_b2b"), ("GR", "eu_intra_b2b"), ("CH", "export_b2b"),
     ("GB", "export_b2b"), ("US", "export_b2b"), ("NO", "export_b2b"), ("MC", "export_b2b")],
)
def test_flow_type_from_the_buyer_country(country, flow_type):
    assert flow_type_for(country) == flow_type


def test_the_member_states_are_the_27():
    assert len(EU_MEMBER_STATES) == 27 and "FR" in EU_MEMBER_STATES and "GB" not in EU_MEMBER_STATES


@pytest.mark.parametrize("country", ["", "FRA", "1A", None])
def test_a_malformed_country_is_refused(country):
    with pytest.raises(ValueError):
        flow_type_for(country)


def test_only_a_french_issuer_is_supported():
    with pytest.raises(UnsupportedIssuer):
        flow_type_for("FR", issuer_country="BE")


def test_buyer_country_from_billing_address_then_legal_address_then_the_default():
    assert resolve_buyer_country("de", "IT", default="FR") == "DE"
    assert resolve_buyer_country(None, "it", default="FR") == "IT"
    assert resolve_buyer_country("", " ", default="fr") == "FR"


def test_the_domestic_flow_is_b2b_and_the_others_are_e_reporting_b2bint():
    assert processing_rule_for("fr_domestic_b2b") == "B2B"
    assert processing_rule_for("eu_intra_b2b") == "B2BInt" and processing_rule_for("export_b2b") == "B2BInt"


@pytest.mark.parametrize(
    ("invoice_kind", "document_kind"),
    [("platform_sale", "invoice"), ("supplier_self_billed", "invoice"), ("platform_credit_note", "credit_note"),
     ("supplier_credit_note", "credit_note"), ("store_deposit", None), ("platform_commission", None)],
)
def test_document_kind_of_each_invoice_kind(invoice_kind, document_kind):
    assert document_kind_for(invoice_kind) == document_kind
