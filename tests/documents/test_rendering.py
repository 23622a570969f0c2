"""Each catalog template renders into a PDF holding its title, values, page numbers and signature
anchors, with the header hidden on the first page; typed formatting; missing variables."""

from __future__ import annotations

from datetime import date

import pytest

from backend.documents import formatting
from backend.documents.catalog import default_style, load_catalog
from backend.documents.rendering import Frame, render_html, render_pdf
from backend.documents.sandbox import ANCHOR as ANCHOR_PATTERN
from backend.errors import ValidationError
from tests.documents.conftest import HEADER_MARK, flat, pdf_pages

SIGNED = {"framework_contract", "cgu_acceptance", "sepa_mandate", "delegation_proof", "self_billing_mandate"}
SHIPPED = SIGNED | {"print_order_form", "invoice"}  # issue 5's seven; other areas add their own
CATALOG_KEYS = sorted(load_catalog())
ANCHOR = "{{signer|signature|180|60}}"


def sample_context(key: str) -> dict:
    context = load_catalog()[key].sample_context()
    context["headerLines"] = [HEADER_MARK]
    return context


def shown_values(variable) -> list[str]:
    """How the example of `variable` must read in the PDF (booleans only steer the content)."""
    if variable.type == "array":
        return [flat(value) for item in variable.example for value in item.values() if isinstance(value, str)]
    if variable.type == "boolean":
        return []
    return [flat(formatting.display(formatting.typed_value(variable.type, variable.example)))]


@pytest.fixture(scope="module")
def rendered() -> dict[str, list[str]]:
    """Every catalog template rendered once with its sample context (pages of text)."""
    return {
        key: pdf_pages(render_pdf(entry, entry.default_content(), default_style(), sample_context(key), None,
                                  version=None))
        for key, entry in load_catalog().items()
    }


def test_catalog_ships_the_seven_templates():
    assert set(load_catalog()) >= SHIPPED


@pytest.mark.parametrize("key", CATALOG_KEYS)
def test_template_renders_title_values_page_numbers_and_anchors(rendered, key):
    pages = rendered[key]
    text = " ".join(pages)
    entry = load_catalog()[key]
    assert entry.title in text
    for variable in entry.variables:
        for shown in shown_values(variable):
            assert shown in text, f"{variable.name}: {shown!r} missing"
    total = len(pages)
    for number, page in enumerate(pages, start=1):
        assert f"{number} / {total}" in page
        assert entry.title in page  # the footer repeats the document title on every page
    assert (ANCHOR in text) == (key in SIGNED)


@pytest.mark.parametrize("key", CATALOG_KEYS)
def test_first_page_has_no_header(rendered, key):
    pages = rendered[key]
    assert HEADER_MARK not in pages[0]
    assert all(HEADER_MARK in page for page in pages[1:])


def test_header_on_later_pages_and_configurable_footer(rendered):
    pages = rendered["framework_contract"]
    assert len(pages) >= 2, "the contract spans two pages with the default style"
    entry = load_catalog()["self_billing_mandate"]
    context = {**entry.sample_context(), "headerLines": [HEADER_MARK], "headerOnFirstPage": True,
               "footerTextLine1": "Pied de page ligne un", "footerTextLine2": "Pied de page ligne deux"}
    (page,) = pdf_pages(render_pdf(entry, entry.default_content(), default_style(), context, None, version=1))
    assert HEADER_MARK in page
    assert "Pied de page ligne un" in page and "Pied de page ligne deux" in page


def test_self_billing_mandate_carries_the_mentions_of_specification_c(rendered):
    text = " ".join(rendered["self_billing_mandate"])
    for mention in ("mandataire", "Fournisseur", "article 289", "30 jours", "acceptée tacitement",
                    "expressément", "durée indéterminée", "révocable à tout moment", "signé électroniquement",
                    "signataire légal"):
        assert mention.lower() in text.lower(), mention


def test_invoice_lines_are_formatted_as_french_euros(rendered):
    text = " ".join(rendered["invoice"])
    assert "1 000,00 €" in text and "1 440,00 €" in text and "TVA 20 %" in text


def test_french_formats():
    assert flat(formatting.format_euros(123456)) == "1 234,56 €"
    assert flat(formatting.format_euros(-5)) == "-0,05 €"
    assert formatting.format_date(date(2026, 11, 1)) == "1er novembre 2026"
    assert formatting.format_date(date(2026, 8, 22)) == "22 août 2026"
    assert flat(formatting.format_number(1234.5)) == "1 234,5"
    assert formatting.display(True) == "oui"


def test_missing_required_variables_are_named():
    entry = load_catalog()["sepa_mandate"]
    context = entry.sample_context()
    del context["debtorIban"], context["mandateReference"]
    del context["debtorBic"]  # optional: never reported
    with pytest.raises(ValidationError) as caught:
        render_html(entry, entry.default_content(), "", context)
    assert caught.value.details["missing"] == ["mandateReference", "debtorIban"]
    assert "debtorIban" in caught.value.message and "mandateReference" in caught.value.message


def test_values_of_the_wrong_type_are_refused():
    entry = load_catalog()["invoice"]
    context = {**entry.sample_context(), "amountExclTaxCents": "12,00", "issueDate": "demain"}
    with pytest.raises(ValidationError) as caught:
        render_html(entry, entry.default_content(), "", context)
    assert set(caught.value.details["fields"]) == {"amountExclTaxCents", "issueDate"}


def test_values_are_printed_literally_and_never_forge_an_anchor():
    entry = load_catalog()["cgu_acceptance"]
    context = {**entry.sample_context(),
               "organizationName": "<b>ACME</b> *gras* {{attacker|signature|10|10}} \ue0000\ue001"}
    html = render_html(entry, entry.default_content(), "", context)
    assert "&lt;b&gt;ACME&lt;/b&gt; *gras*" in html
    assert "{{attacker|signature" not in html
    assert [m.group(0) for m in ANCHOR_PATTERN.finditer(html)] == [ANCHOR]  # the template's own only


def test_frame_defaults_come_from_the_platform_identity(config):
    from dataclasses import replace

    frame = Frame.for_context("Titre", {}, replace(config, platform_legal_company_name="Plateforme SAS",
                                                     platform_legal_siret="73282932000074"))
    assert frame.header_lines == ("Plateforme SAS",)
    assert frame.footer_line1 == "Plateforme SAS · SIRET 73282932000074"
    with pytest.raises(ValidationError):
        Frame.for_context("Titre", {"headerLines": "pas une liste"}, config)
