"""Turn a PDF/A-3 rendering into a Factur-X PDF: the CII XML attached, the XMP completed.

weasyprint's `pdf/a-3b` variant already gives what PDF/A-3 asks of the rendering (embedded
fonts, the sRGB output intent, the `pdfaid` part and conformance in the XMP). `embed_facturx`
adds what Factur-X 1.0 asks on top, with pikepdf:

- `factur-x.xml` as an embedded file (`/Subtype /text#2Fxml`, its size, MD5 checksum and date in
  `/Params`) in a file specification with `/AFRelationship /Alternative` (the XML is an
  alternative representation of the human-readable invoice),
- listed in the catalog's `/Names /EmbeddedFiles` and `/AF` (associated files),
- the XMP metadata with the Factur-X PDF/A extension schema description and the `fx:`
  properties (`DocumentType` INVOICE, `DocumentFileName`, `Version` 1.0, `ConformanceLevel`
  BASIC), dates in the XMP and the document information dictionary.

Nothing reads the clock or draws randomness: dates come from the caller (the invoice's issue
time) and the trailer `/ID` is computed from the content, so the same input gives the same bytes.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io

import pikepdf
from lxml import etree

FILENAME = "factur-x.xml"
FX_NAMESPACE = "urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#"
CONFORMANCE_LEVEL = "BASIC"
FACTURX_VERSION = "1.0"

_NS = {
    "x": "adobe:ns:meta/",
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "pdfaid": "http://www.aiim.org/pdfa/ns/id/",
    "xmp": "http://ns.adobe.com/xap/1.0/",
    "pdfaExtension": "http://www.aiim.org/pdfa/ns/extension/",
    "pdfaSchema": "http://www.aiim.org/pdfa/ns/schema#",
    "pdfaProperty": "http://www.aiim.org/pdfa/ns/property#",
    "fx": FX_NAMESPACE,
}
_FX_PROPERTIES = (
    ("DocumentFileName", "The name of the embedded XML document"),
    ("DocumentType", "The type of the hybrid document in capital letters, e.g. INVOICE or ORDER"),
    ("Version", "The actual version of the standard applying to the embedded XML document"),
    ("ConformanceLevel", "The conformance level of the embedded XML document"),
)


def embed_facturx(pdf: bytes, xml: bytes, *, moment: dt.datetime) -> bytes:
    """`pdf` with `xml` attached as its Factur-X BASIC invoice, dated `moment` (timezone-aware)."""
    if moment.tzinfo is None:
        raise ValueError("moment must be timezone-aware")
    moment = moment.astimezone(dt.UTC).replace(microsecond=0)
    with pikepdf.open(io.BytesIO(pdf)) as document:
        filespec = _attach(document, xml, moment)
        root = document.Root
        names = root.get("/Names")
        if names is None:
            names = root.Names = document.make_indirect(pikepdf.Dictionary())
        names.EmbeddedFiles = pikepdf.Dictionary(Names=pikepdf.Array([pikepdf.String(FILENAME), filespec]))
        root.AF = document.make_indirect(pikepdf.Array([filespec]))
        _write_xmp(document, moment)
        info = document.trailer.get("/Info")
        if info is None:
            info = document.trailer.Info = document.make_indirect(pikepdf.Dictionary())
        info.CreationDate = info.ModDate = pikepdf.String(_pdf_date(moment))
        out = io.BytesIO()
        document.save(out, deterministic_id=True, fix_metadata_version=False)
        return out.getvalue()


def _attach(document: pikepdf.Pdf, xml: bytes, moment: dt.datetime) -> pikepdf.Object:
    stream = pikepdf.Stream(document, xml)
    stream.Type = pikepdf.Name.EmbeddedFile
    stream.Subtype = pikepdf.Name("/text/xml")
    stream.Params = pikepdf.Dictionary(
        Size=len(xml), ModDate=pikepdf.String(_pdf_date(moment)),
        CheckSum=pikepdf.String(hashlib.md5(xml).digest()),  # noqa: S324 (the checksum PDF defines)
    )
    return document.make_indirect(pikepdf.Dictionary(
        Type=pikepdf.Name.Filespec,
        F=pikepdf.String(FILENAME),
        UF=pikepdf.String(FILENAME),
        Desc=pikepdf.String("Factur-X invoice (CII XML)"),
        AFRelationship=pikepdf.Name.Alternative,
        EF=pikepdf.Dictionary(F=stream, UF=stream),
    ))


def _write_xmp(document: pikepdf.Pdf, moment: dt.datetime) -> None:
    """weasyprint's XMP packet (PDF/A identification, producer, title) plus the Factur-X parts."""
    existing = document.Root.get("/Metadata")
    rdf = None
    if existing is not None:
        packet = etree.fromstring(existing.read_bytes(), etree.XMLParser(remove_blank_text=True))
        rdf = packet.find(f"{{{_NS['rdf']}}}RDF") if packet.tag == f"{{{_NS['x']}}}xmpmeta" else None
    if rdf is None:
        packet = etree.Element(f"{{{_NS['x']}}}xmpmeta", nsmap={"x": _NS["x"]})
        rdf = etree.SubElement(packet, f"{{{_NS['rdf']}}}RDF", nsmap={"rdf": _NS["rdf"]})
    if not rdf.xpath("rdf:Description/@pdfaid:part", namespaces=_NS):
        identification = _description(rdf)
        identification.set(f"{{{_NS['pdfaid']}}}part", "3")
        identification.set(f"{{{_NS['pdfaid']}}}conformance", "B")
    timestamp = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    dates = _description(rdf)
    for name in ("CreateDate", "ModifyDate", "MetadataDate"):
        _text(dates, "xmp", name, timestamp)
    _extension_schema(_description(rdf))
    facturx = _description(rdf)
    _text(facturx, "fx", "DocumentType", "INVOICE")
    _text(facturx, "fx", "DocumentFileName", FILENAME)
    _text(facturx, "fx", "Version", FACTURX_VERSION)
    _text(facturx, "fx", "ConformanceLevel", CONFORMANCE_LEVEL)
    etree.cleanup_namespaces(packet, top_nsmap={k: v for k, v in _NS.items() if k != "x"})
    body = etree.tostring(packet, encoding="UTF-8")
    xmp = b'<?xpacket begin="\xef\xbb\xbf" id="W5M0MpCehiHzreSzNTczkc9d"?>\n' + body + b'\n<?xpacket end="w"?>'
    stream = pikepdf.Stream(document, xmp)
    stream.Type = pikepdf.Name.Metadata
    stream.Subtype = pikepdf.Name.XML
    document.Root.Metadata = document.make_indirect(stream)


def _extension_schema(description: etree._Element) -> None:
    """The PDF/A extension schema description PDF/A-3 requires for the non-standard `fx:` namespace."""
    resource = {f"{{{_NS['rdf']}}}parseType": "Resource"}
    schemas = _element(description, "pdfaExtension", "schemas")
    schema = _element(_element(schemas, "rdf", "Bag"), "rdf", "li", resource)
    _text(schema, "pdfaSchema", "schema", "Factur-X PDFA Extension Schema")
    _text(schema, "pdfaSchema", "namespaceURI", FX_NAMESPACE)
    _text(schema, "pdfaSchema", "prefix", "fx")
    properties = _element(_element(schema, "pdfaSchema", "property"), "rdf", "Seq")
    for name, text in _FX_PROPERTIES:
        item = _element(properties, "rdf", "li", resource)
        _text(item, "pdfaProperty", "name", name)
        _text(item, "pdfaProperty", "valueType", "Text")
        _text(item, "pdfaProperty", "category", "external")
        _text(item, "pdfaProperty", "description", text)


def _description(rdf: etree._Element) -> etree._Element:
    return _element(rdf, "rdf", "Description", {f"{{{_NS['rdf']}}}about": ""})


def _element(parent: etree._Element, prefix: str, name: str, attrib: dict | None = None) -> etree._Element:
    return etree.SubElement(parent, f"{{{_NS[prefix]}}}{name}", attrib or {}, nsmap={prefix: _NS[prefix]})


def _text(parent: etree._Element, prefix: str, name: str, value: str) -> None:
    _element(parent, prefix, name).text = value


def _pdf_date(moment: dt.datetime) -> str:
    return moment.strftime("D:%Y%m%d%H%M%SZ")
