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
        document.save(out, deterministic_id=True, fix_metadata_version=False,
                      stream_decode_level=pikepdf.StreamDecodeLevel.none)  # pass weasyprint's streams through
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
    """weasyprint's XMP packet (PDF/A identification, producer, title) with the Factur-X
    descriptions added before its closing `</rdf:RDF>`; a packet of our own when there is none."""
    existing = document.Root.get("/Metadata")
    packet = existing.read_bytes() if existing is not None else b""
    if b"pdfaid:part" not in packet or _RDF_END not in packet:
        packet = _PACKET_START + _PDFA_IDENTIFICATION + _RDF_END + _PACKET_END
    dates = _DATES.format(timestamp=moment.strftime("%Y-%m-%dT%H:%M:%SZ")).encode("ascii")
    head, _, tail = packet.rpartition(_RDF_END)
    stream = pikepdf.Stream(document, head + dates + _FACTURX_DESCRIPTIONS + _RDF_END + tail)
    stream.Type = pikepdf.Name.Metadata
    stream.Subtype = pikepdf.Name.XML
    document.Root.Metadata = document.make_indirect(stream)


def _facturx_descriptions() -> bytes:
    """The PDF/A extension schema description PDF/A-3 requires for the non-standard `fx:`
    namespace, then the `fx:` properties themselves (built once, at import)."""
    rdf = etree.Element(f"{{{_NS['rdf']}}}RDF", nsmap=_NS)
    resource = {f"{{{_NS['rdf']}}}parseType": "Resource"}
    schemas = _element(_description(rdf), "pdfaExtension", "schemas")
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
    facturx = _description(rdf)
    _text(facturx, "fx", "DocumentType", "INVOICE")
    _text(facturx, "fx", "DocumentFileName", FILENAME)
    _text(facturx, "fx", "Version", FACTURX_VERSION)
    _text(facturx, "fx", "ConformanceLevel", CONFORMANCE_LEVEL)
    # Each description declares the namespaces it uses, so it reads the same inside any packet.
    return b"".join(_standalone(description) for description in rdf)


def _standalone(element: etree._Element) -> bytes:
    used = {_NS_PREFIX[etree.QName(node).namespace] for node in element.iter()}
    used |= {_NS_PREFIX[etree.QName(name).namespace] for node in element.iter() for name in node.attrib}
    copy = etree.Element(element.tag, element.attrib, nsmap={prefix: _NS[prefix] for prefix in sorted(used)})
    copy.extend(child for child in list(element))
    return etree.tostring(copy, encoding="UTF-8").split(b"?>", 1)[-1].strip()


def _description(rdf: etree._Element) -> etree._Element:
    return _element(rdf, "rdf", "Description", {f"{{{_NS['rdf']}}}about": ""})


def _element(parent: etree._Element, prefix: str, name: str, attrib: dict | None = None) -> etree._Element:
    return etree.SubElement(parent, f"{{{_NS[prefix]}}}{name}", attrib or {})


def _text(parent: etree._Element, prefix: str, name: str, value: str) -> None:
    _element(parent, prefix, name).text = value


_NS_PREFIX = {uri: prefix for prefix, uri in _NS.items()}
_RDF_END = b"</rdf:RDF>"
_PACKET_START = (b'<?xpacket begin="\xef\xbb\xbf" id="W5M0MpCehiHzreSzNTczkc9d"?>\n'
                 b'<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">')
_PACKET_END = b'</x:xmpmeta>\n<?xpacket end="w"?>'
_PDFA_IDENTIFICATION = (b'<rdf:Description xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/" rdf:about=""'
                        b' pdfaid:part="3" pdfaid:conformance="B"/>')
_DATES = ('<rdf:Description xmlns:xmp="http://ns.adobe.com/xap/1.0/" rdf:about="">'
          "<xmp:CreateDate>{timestamp}</xmp:CreateDate><xmp:ModifyDate>{timestamp}</xmp:ModifyDate>"
          "<xmp:MetadataDate>{timestamp}</xmp:MetadataDate></rdf:Description>")
_FACTURX_DESCRIPTIONS = _facturx_descriptions()


def _pdf_date(moment: dt.datetime) -> str:
    return moment.strftime("D:%Y%m%d%H%M%SZ")
