"""Validation of a lifecycle status as a CDAR message (`cdar`), shared by the client (before a
status leaves) and the operator simulator (on receipt), so both accept and refuse the same.

No package ships the UN/CEFACT CDAR D22B schema yet (docs/einvoicing.md "Statuses the platform
sends"), so the profile the platform emits is checked here as code: the element tree with its
order and cardinalities (a closed content model: an element the profile does not place there is
an error), the data formats (dates 204 and 102, amounts, SIREN), and the reform's closed lists
(status codes, reason codes BR-FR-CDV-CL-09, role codes, type codes), plus the rules between them:
a status that needs a reason carries a coded one; a 212 carries the amount received per VAT rate.
`check` answers what the message says, or raises `CdarInvalid` with every problem found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation

from lxml import etree

from backend.einvoicing import reason_codes, reform_statuses
from backend.einvoicing.cdar import GUIDELINE, PARIS, QDT, RAM, RSM, SIREN_SCHEME, UDT

ROLE_CODES = frozenset({"SE", "BY", "WK", "DFH", "AB", "DL", "PE", "PR", "II", "IV", "SR"})
INVOICE_TYPE_CODES = frozenset({"380", "381", "384", "386", "389", "261", "262", "393", "396", "471", "472",
                                "473", "500", "501", "502", "503"})
ACKNOWLEDGEMENT_TYPE_CODES = frozenset({"23", "305"})
CHARACTERISTIC_TYPE_CODES = frozenset({"MEN", "MPA", "RAP", "ESC", "RAB", "REM", "DIV", "DVA", "CBB", "MAP", "MAPTTC",
                                       "MNA", "MNATTC"})
_AMOUNT = re.compile(r"^-?[0-9]{1,15}(\.[0-9]{1,2})?$")
_MAX_BYTES = 1024 * 1024


class CdarInvalid(ValueError):
    """The message is not one the profile accepts; `problems` lists each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class El:
    """One element of the profile: where it goes, how many, and what it holds."""

    ns: str
    name: str
    low: int = 1
    high: int | None = 1  # None: unbounded
    children: tuple[El, ...] = ()
    attributes: tuple[str, ...] = ()  # required attributes

    @property
    def tag(self) -> str:
        return f"{{{self.ns}}}{self.name}"


def _date_time(name: str, low: int = 1, ns: str = RAM) -> El:
    return El(ns, name, low, 1, (El(UDT, "DateTimeString", attributes=("format",)),))


_PARTY = (El(RAM, "GlobalID", 0, 1, attributes=("schemeID",)), El(RAM, "Name", 0), El(RAM, "RoleCode"),
          El(RAM, "URIUniversalCommunication", 0, 1, (El(RAM, "URIID", attributes=("schemeID",)),)))
_CHARACTERISTIC = El(RAM, "SpecifiedDocumentCharacteristic", 0, None, (
    El(RAM, "ID", 0), El(RAM, "TypeCode"),
    El(RAM, "ValueChangedIndicator", 0, 1, (El(UDT, "IndicatorString"),)),
    El(RAM, "Name", 0), El(RAM, "Location", 0), El(RAM, "ValueAmount", 0, attributes=("currencyID",)),
    El(RAM, "ValuePercent", 0)))
PROFILE = El(RSM, "CrossDomainAcknowledgementAndResponse", 1, 1, (
    El(RSM, "ExchangedDocumentContext", 1, 1, (
        El(RAM, "BusinessProcessSpecifiedDocumentContextParameter", 0, 1, (El(RAM, "ID"),)),
        El(RAM, "GuidelineSpecifiedDocumentContextParameter", 1, 1, (El(RAM, "ID"),)))),
    El(RSM, "ExchangedDocument", 1, 1, (
        El(RAM, "ID"), El(RAM, "Name", 0), _date_time("IssueDateTime"),
        El(RAM, "SenderTradeParty", 0, 1, _PARTY), El(RAM, "IssuerTradeParty", 1, 1, _PARTY),
        El(RAM, "RecipientTradeParty", 1, None, _PARTY))),
    El(RSM, "AcknowledgementDocument", 1, 1, (
        El(RAM, "MultipleReferencesIndicator", 0, 1, (El(UDT, "Indicator"),)),
        El(RAM, "TypeCode"), _date_time("IssueDateTime"),
        El(RAM, "ReferenceReferencedDocument", 1, 1, (
            El(RAM, "IssuerAssignedID"), El(RAM, "StatusCode", 0), El(RAM, "TypeCode"),
            _date_time("ReceiptDateTime", 0),
            El(RAM, "FormattedIssueDateTime", 1, 1, (El(QDT, "DateTimeString", attributes=("format",)),)),
            El(RAM, "ProcessConditionCode"), El(RAM, "ProcessCondition", 0),
            El(RAM, "IssuerTradeParty", 0, 1, (El(RAM, "GlobalID", attributes=("schemeID",)),)),
            El(RAM, "SpecifiedDocumentStatus", 0, None, (
                El(RAM, "ReasonCode", 0), El(RAM, "Reason", 0), El(RAM, "RequestedActionCode", 0),
                El(RAM, "RequestedAction", 0), El(RAM, "SequenceNumeric", 0), _CHARACTERISTIC)))))),
))


def check(content: bytes) -> dict:
    """What a valid message says: `{messageId, invoiceNumber, invoiceTypeCode, code, label, at,
    issuerSiren, issuerRole, reasonCode, reason, amounts: [{amountCents, vatRateBps}]}`; raises
    `CdarInvalid` otherwise."""
    if not content or len(content) > _MAX_BYTES:
        raise CdarInvalid(["the message is empty or larger than 1 MiB"])
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)
    try:
        tree = etree.fromstring(content, parser).getroottree()
    except etree.XMLSyntaxError as exc:
        raise CdarInvalid([f"not well-formed XML: {exc}"]) from None
    if tree.docinfo.doctype:
        raise CdarInvalid(["a DOCTYPE is not allowed"])
    root = tree.getroot()
    problems: list[str] = []
    if root.tag != PROFILE.tag:
        raise CdarInvalid([f"the root must be rsm:{PROFILE.name}, not {etree.QName(root).localname}"])
    _structure(root, PROFILE, "/" + PROFILE.name, problems)
    if problems:
        raise CdarInvalid(problems)
    summary = _read(root, problems)
    if problems:
        raise CdarInvalid(problems)
    return summary


def _structure(element: etree._Element, spec: El, path: str, problems: list[str]) -> None:
    """The element's children in the profile's order and numbers, its attributes, its text."""
    for attribute in spec.attributes:
        if not (element.get(attribute) or "").strip():
            problems.append(f"{path}: attribute {attribute} is required")
    children = [child for child in element if isinstance(child.tag, str)]
    if not spec.children:
        if children:
            problems.append(f"{path}: holds no element")
        elif not (element.text or "").strip():
            problems.append(f"{path}: must not be empty")
        return
    index = 0
    for child_spec in spec.children:
        count = 0
        while index < len(children) and children[index].tag == child_spec.tag:
            count += 1
            _structure(children[index], child_spec, f"{path}/{child_spec.name}", problems)
            index += 1
        if count < child_spec.low:
            problems.append(f"{path}: {child_spec.name} is required")
        if child_spec.high is not None and count > child_spec.high:
            problems.append(f"{path}: {child_spec.name} at most {child_spec.high} time(s), found {count}")
    for extra in children[index:]:
        problems.append(f"{path}: {etree.QName(extra).localname} is not allowed here (unknown or out of order)")


def _text(root: etree._Element, path: str) -> str | None:
    found = root.find(path, {"rsm": RSM, "ram": RAM, "udt": UDT, "qdt": QDT})
    return None if found is None else (found.text or "").strip()


def _all(root: etree._Element, path: str) -> list[etree._Element]:
    return root.findall(path, {"rsm": RSM, "ram": RAM, "udt": UDT, "qdt": QDT})


def _read(root: etree._Element, problems: list[str]) -> dict:
    def closed(value: str | None, allowed, what: str) -> None:
        if value is not None and value not in allowed:
            problems.append(f"{what} {value!r} is not in the reform's list")

    guideline = _text(root, "rsm:ExchangedDocumentContext/ram:GuidelineSpecifiedDocumentContextParameter/ram:ID")
    if guideline != GUIDELINE:
        problems.append(f"the guideline (MDT-3) must be {GUIDELINE}, not {guideline!r}")
    for stamp in _all(root, ".//udt:DateTimeString"):
        _check_date(stamp, "204", 14, "%Y%m%d%H%M%S", problems)
    for stamp in _all(root, ".//qdt:DateTimeString"):
        _check_date(stamp, "102", 8, "%Y%m%d", problems)
    for role in _all(root, ".//ram:RoleCode"):
        closed(role.text.strip(), ROLE_CODES, "role code")
    for identifier in _all(root, ".//ram:GlobalID"):
        if identifier.get("schemeID") == SIREN_SCHEME and not re.fullmatch(r"[0-9]{9}", identifier.text.strip()):
            problems.append(f"a SIREN (scheme {SIREN_SCHEME}) is nine digits, not {identifier.text.strip()!r}")
    if _text(root, "rsm:ExchangedDocument/ram:IssuerTradeParty/ram:GlobalID") is None:
        problems.append("the status's issuer (MDT-38) needs its identifier")
    for indicator in _all(root, ".//udt:Indicator") + _all(root, ".//udt:IndicatorString"):
        closed(indicator.text.strip(), ("true", "false"), "indicator")
    closed(_text(root, "rsm:AcknowledgementDocument/ram:TypeCode"), ACKNOWLEDGEMENT_TYPE_CODES, "document type code")

    reference = "rsm:AcknowledgementDocument/ram:ReferenceReferencedDocument/"
    type_code = _text(root, reference + "ram:TypeCode")
    closed(type_code, INVOICE_TYPE_CODES, "invoice type code (BT-3)")
    raw_code = _text(root, reference + "ram:ProcessConditionCode") or ""
    code = int(raw_code) if raw_code.isdigit() else None
    if code not in reform_statuses.LABELS:
        problems.append(f"status code {raw_code!r} is not in the reform's list")
    reason_code = _text(root, reference + "ram:SpecifiedDocumentStatus/ram:ReasonCode")
    closed(reason_code, reason_codes.LABELS, "reason code (BR-FR-CDV-CL-09)")
    if code in reform_statuses.REASON_REQUIRED and reason_code is None:
        problems.append(f"a {code} carries a reason code (BR-FR-CDV-CL-09)")
    elif reason_code in reason_codes.LABELS and code is not None and not reason_codes.admitted(reason_code, code):
        problems.append(f"reason code {reason_code} is not admitted for a {code} (BR-FR-CDV-CL-09_MDT-113_{code})")
    amounts = []
    for characteristic in _all(root, reference + "ram:SpecifiedDocumentStatus/ram:SpecifiedDocumentCharacteristic"):
        kind = _text(characteristic, "ram:TypeCode")
        closed(kind, CHARACTERISTIC_TYPE_CODES, "characteristic type code")
        if kind != "MEN":
            continue
        amount, percent = _text(characteristic, "ram:ValueAmount"), _text(characteristic, "ram:ValuePercent")
        currency = characteristic.find(f"{{{RAM}}}ValueAmount")
        if amount is None or percent is None or not _AMOUNT.match(amount) or not _AMOUNT.match(percent):
            problems.append("an amount received (MEN) has a decimal ValueAmount and ValuePercent")
            continue
        if currency.get("currencyID") != "EUR":
            problems.append("an amount received is in EUR")
        amounts.append({"amountCents": _cents(amount), "vatRateBps": _cents(percent)})
    if code == reform_statuses.ENCAISSEE and not amounts:
        problems.append("a 212 carries the amount received per VAT rate (MEN)")
    at = _text(root, "rsm:AcknowledgementDocument/ram:IssueDateTime/udt:DateTimeString") or ""
    return {
        "messageId": _text(root, "rsm:ExchangedDocument/ram:ID"),
        "invoiceNumber": _text(root, reference + "ram:IssuerAssignedID"),
        "invoiceTypeCode": type_code,
        "code": code,
        "label": reform_statuses.label(code) if code is not None else raw_code,
        "at": _iso(at),
        "issuerSiren": _text(root, "rsm:ExchangedDocument/ram:IssuerTradeParty/ram:GlobalID"),
        "issuerRole": _text(root, "rsm:ExchangedDocument/ram:IssuerTradeParty/ram:RoleCode"),
        "reasonCode": reason_code,
        "reason": _text(root, reference + "ram:SpecifiedDocumentStatus/ram:Reason"),
        "amounts": amounts,
    }


def _check_date(stamp: etree._Element, fmt: str, digits: int, pattern: str, problems: list[str]) -> None:
    value = (stamp.text or "").strip()
    if stamp.get("format") != fmt or len(value) != digits or not value.isdigit():
        problems.append(f"a date {value!r} must be format {fmt} ({digits} digits)")
        return
    try:
        datetime.strptime(value, pattern)
    except ValueError:
        problems.append(f"{value!r} is not a date")


def _cents(value: str) -> int:
    try:
        return int(Decimal(value) * 100)
    except InvalidOperation:  # pragma: no cover (the pattern matched)
        return 0


def _iso(value: str) -> str | None:
    """A format 204 date-time (Paris time) as ISO 8601 with its offset."""
    try:
        return datetime.strptime(value, "%Y%m%d%H%M%S").replace(tzinfo=PARIS).isoformat()
    except ValueError:
        return None
