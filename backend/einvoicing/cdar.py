"""A lifecycle status as a CDAR message: UN/CEFACT Cross Domain Acknowledgement and Response
(D22B), as the French reform profiles it for the lifecycle (`urn.cpro.gouv.fr:1p0:CDV:invoice`, XP
Z12-012). docs/einvoicing.md "Statuses the platform sends" says which data goes where.

One message names one invoice (`MultipleReferencesIndicator` false) and one status: its code and
label (`ProcessConditionCode`, `ProcessCondition`), the invoice's number, type code and issue date,
who issues the status and for whom, a coded reason where the status needs one, and, for a 212,
the amount received per VAT rate (a `MEN` characteristic each, negative when money is given back).
`build` writes it; `cdar_validation.check` reads it back (the client before sending, the operator
simulator on receipt), so a message that leaves is one the profile accepts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime
from zoneinfo import ZoneInfo

from lxml import etree

from backend.einvoicing import reform_statuses

RSM = "urn:un:unece:uncefact:data:standard:CrossDomainAcknowledgementAndResponse:100"
RAM = "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100"
UDT = "urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100"
QDT = "urn:un:unece:uncefact:data:standard:QualifiedDataType:100"
NSMAP = {"rsm": RSM, "ram": RAM, "udt": UDT, "qdt": QDT}
GUIDELINE = "urn.cpro.gouv.fr:1p0:CDV:invoice"
BUSINESS_PROCESS = "REGULATED"
SIREN_SCHEME = "0002"
PPF_SCHEME = "0238"
PPF_ID = "9998"  # the public portal, the administration's recipient of 200, 210, 212 and 213
# UN/CEFACT document status (MDT-88) of the statuses whose mapping the profile's examples give.
DOCUMENT_STATUS = {200: "10", 202: "43", 203: "48", 204: "45", 205: "1", 207: "46", 210: "50", 211: "47",
                   212: "47", 213: "8"}
# Statuses a platform issues (an application response, 305); the parties' own are status reports (23).
PLATFORM_STATUSES = frozenset({200, 201, 202, 203, 213, 221})
PARIS = ZoneInfo("Europe/Paris")


@dataclass(frozen=True)
class Party:
    siren: str | None
    name: str
    role: str  # SE seller, BY buyer, WK a platform, DFH the public portal


PUBLIC_PORTAL = Party(siren=None, name="PPF", role="DFH")


@dataclass(frozen=True)
class Received:
    """Money received (negative: given back), including VAT, at one VAT rate."""

    amount_cents: int
    vat_rate_bps: int


@dataclass(frozen=True)
class StatusMessage:
    message_id: str
    invoice_number: str
    invoice_type_code: str  # BT-3: 380, 389, 381, 261
    invoice_issued_on: date  # BT-2
    invoice_issuer_siren: str | None  # the invoice's seller (MDT-129)
    code: int
    at: datetime  # when the status happened
    created_at: datetime  # when the message was made
    issuer: Party
    recipients: tuple[Party, ...]
    reason_code: str | None = None
    reason: str | None = None
    received: tuple[Received, ...] = ()


def build(message: StatusMessage) -> bytes:
    root = etree.Element(f"{{{RSM}}}CrossDomainAcknowledgementAndResponse", nsmap=NSMAP)
    context = _sub(root, RSM, "ExchangedDocumentContext")
    _sub(_sub(context, RAM, "BusinessProcessSpecifiedDocumentContextParameter"), RAM, "ID", BUSINESS_PROCESS)
    _sub(_sub(context, RAM, "GuidelineSpecifiedDocumentContextParameter"), RAM, "ID", GUIDELINE)

    document = _sub(root, RSM, "ExchangedDocument")
    _sub(document, RAM, "ID", message.message_id)
    _sub(document, RAM, "Name", f"{message.invoice_number}-CDV-{message.code}")
    _date_time(_sub(document, RAM, "IssueDateTime"), message.created_at)
    _sub(_sub(document, RAM, "SenderTradeParty"), RAM, "RoleCode", "WK")
    _party(_sub(document, RAM, "IssuerTradeParty"), message.issuer)
    for recipient in message.recipients:
        _party(_sub(document, RAM, "RecipientTradeParty"), recipient)

    acknowledgement = _sub(root, RSM, "AcknowledgementDocument")
    _sub(_sub(acknowledgement, RAM, "MultipleReferencesIndicator"), UDT, "Indicator", "false")
    _sub(acknowledgement, RAM, "TypeCode", "305" if message.code in PLATFORM_STATUSES else "23")
    _date_time(_sub(acknowledgement, RAM, "IssueDateTime"), message.at)
    reference = _sub(acknowledgement, RAM, "ReferenceReferencedDocument")
    _sub(reference, RAM, "IssuerAssignedID", message.invoice_number)
    if message.code in DOCUMENT_STATUS:
        _sub(reference, RAM, "StatusCode", DOCUMENT_STATUS[message.code])
    _sub(reference, RAM, "TypeCode", message.invoice_type_code)
    issued = _sub(_sub(reference, RAM, "FormattedIssueDateTime"), QDT, "DateTimeString",
                  message.invoice_issued_on.strftime("%Y%m%d"))
    issued.set("format", "102")
    _sub(reference, RAM, "ProcessConditionCode", str(message.code))
    _sub(reference, RAM, "ProcessCondition", reform_statuses.label(message.code))
    if message.invoice_issuer_siren:
        _global_id(_sub(reference, RAM, "IssuerTradeParty"), message.invoice_issuer_siren, SIREN_SCHEME)
    if message.reason_code or message.received:
        status = _sub(reference, RAM, "SpecifiedDocumentStatus")
        if message.reason_code:
            _sub(status, RAM, "ReasonCode", message.reason_code)
            if message.reason:
                _sub(status, RAM, "Reason", message.reason)
        for received in message.received:
            characteristic = _sub(status, RAM, "SpecifiedDocumentCharacteristic")
            _sub(characteristic, RAM, "TypeCode", "MEN")
            _sub(_sub(characteristic, RAM, "ValueChangedIndicator"), UDT, "IndicatorString", "false")
            _sub(characteristic, RAM, "ValueAmount", euros(received.amount_cents)).set("currencyID", "EUR")
            _sub(characteristic, RAM, "ValuePercent", euros(received.vat_rate_bps))
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)


def euros(cents: int) -> str:
    """Cents (or basis points) as a decimal with two places: -1234 -> "-12.34"."""
    sign = "-" if cents < 0 else ""
    return f"{sign}{abs(cents) // 100}.{abs(cents) % 100:02d}"


def _party(element: etree._Element, party: Party) -> None:
    if party.role == "DFH":
        _global_id(element, PPF_ID, PPF_SCHEME)
    elif party.siren:
        _global_id(element, party.siren, SIREN_SCHEME)
    _sub(element, RAM, "Name", party.name)
    _sub(element, RAM, "RoleCode", party.role)


def _global_id(element: etree._Element, value: str, scheme: str) -> None:
    _sub(element, RAM, "GlobalID", value).set("schemeID", scheme)


def _date_time(element: etree._Element, moment: datetime) -> None:
    """Format 204 (CCYYMMDDHHMMSS), Paris time: the reform's dates are French ones."""
    _sub(element, UDT, "DateTimeString", moment.astimezone(PARIS).strftime("%Y%m%d%H%M%S")).set("format", "204")


# What XML 1.0 cannot carry (control characters, surrogates, U+FFFE/U+FFFF): left out of a text
# a user typed (a contest's reason), so such a text never stops its status.
_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _sub(parent: etree._Element, namespace: str, name: str, text: str | None = None) -> etree._Element:
    element = etree.SubElement(parent, f"{{{namespace}}}{name}")
    if text is not None:
        element.text = _NOT_XML.sub("", text)
    return element
