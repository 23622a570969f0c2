"""Bank statements in: a camt.053 (end of day statement) or camt.054 (debit and credit
notifications) document read into plain values, refused whole on anything unexpected.

The document is parsed with lxml defensively, as a stream (`iterparse`: each entry dropped once
read, so memory stays flat): at most `MAX_DOCUMENT_BYTES`, no DTD (a document declaring one is
refused, so no entity is ever expanded), no network, no huge-tree mode. The root
must be an ISO 20022 `Document` of a `camt.053.001.NN` or `camt.054.001.NN` namespace holding
exactly one statement (`Stmt`) or notification (`Ntfctn`). Every refusal is a `ValidationError`
with `details.reason`:

- `too_large`, `not_xml`, `dtd`, `not_camt`, `several_statements`;
- `malformed` (a required element missing, an amount with more than two decimals, a bad date);
- `currency` (an amount not in euros), `control_sum` (the entries do not add up to the statement's
  totals `TxsSummry`, the closing balance is not the opening balance plus the entries, or the
  transactions of a batch-booked entry do not add up to it); the account (`account`) is checked by
  the import, which knows the platform's IBAN.

Each booked entry (`Sts` `BOOK`) becomes one `Line`, or one per transaction when the bank booked a
batch as one entry (`NtryDtls/TxDtls` several times). A line's `key` is the bank's reference of
the entry (`AcctSvcrRef`, with the transaction's index in a batch), else a hash of what the entry
says: the unique key that makes a re-import, or a camt.053 repeating the camt.054 of the day,
change nothing. A debit carrying a return reason (`RtrInf/Rsn/Cd`) is a returned direct debit
(R-transaction) of the debit its `EndToEndId` names.
"""

from __future__ import annotations

import functools
import hashlib
import io
import re
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import BinaryIO

from lxml import etree

from backend.errors import ValidationError

MAX_DOCUMENT_BYTES = 32 * 1024 * 1024
_READ_BYTES = 64 * 1024  # what the parser is handed at a time
_NAMESPACE = re.compile(r"^urn:iso:std:iso:20022:tech:xsd:(camt\.05[34])\.001\.\d{2}$")
_ROOTS = {"camt.053": ("BkToCstmrStmt", "Stmt"), "camt.054": ("BkToCstmrDbtCdtNtfctn", "Ntfctn")}
_RETURN_CODE = re.compile(r"^[A-Z0-9]{4}$")
_MAX_TEXT = 140


@dataclass(frozen=True)
class Line:
    key: str
    credit: bool
    amount_cents: int
    booking_date: date
    end_to_end_id: str | None
    remittance: str | None
    counterparty_name: str | None
    counterparty_iban: str | None
    return_code: str | None


@dataclass(frozen=True)
class Statement:
    kind: str  # camt.053 | camt.054
    message_id: str
    statement_id: str
    iban: str
    lines: tuple[Line, ...]
    sha256: str  # of the document's bytes
    balances: Balances | None = None  # a camt.053's; a camt.054 states none


@dataclass(frozen=True)
class Balances:
    """A camt.053's opening and closing booked balances (signed cents) and the closing day."""

    opening_cents: int
    closing_cents: int
    closing_date: date | None


def refused(reason: str, message: str) -> ValidationError:
    return ValidationError(f"bank statement refused: {message}", reason=reason)


class _Bounded:
    """A binary stream read at most `MAX_DOCUMENT_BYTES` deep, hashed as it is read."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self.size = 0
        self.sha256 = hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        chunk = self._stream.read(_READ_BYTES if size is None or size < 0 else min(size, _READ_BYTES))
        self.size += len(chunk)
        if self.size > MAX_DOCUMENT_BYTES:
            raise refused("too_large", f"the document exceeds {MAX_DOCUMENT_BYTES} bytes")
        self.sha256.update(chunk)
        return chunk


def parse(source: bytes | BinaryIO) -> Statement:
    """The statement of a camt.053 or camt.054 document (its bytes, or a binary stream read once);
    `ValidationError` (with `reason`) else.

    Read as a stream (`lxml.etree.iterparse`): each entry (`Ntry`) is turned into its lines and
    its signed amount as soon as it is complete, then dropped from the tree, so the memory a
    statement takes grows with its lines' values, not with its XML."""
    if isinstance(source, bytes | bytearray):
        if len(source) > MAX_DOCUMENT_BYTES:
            raise refused("too_large", f"the document exceeds {MAX_DOCUMENT_BYTES} bytes")
        source = io.BytesIO(source)
    stream = _Bounded(source)
    events = etree.iterparse(stream, events=("start", "end"), resolve_entities=False, no_network=True,
                             load_dtd=False, dtd_validation=False, huge_tree=False, remove_comments=True,
                             remove_pis=True)
    reader: _Reader | None = None
    kind = ""
    signed: list[int] = []
    lines: list[Line] = []
    try:
        for event, element in events:
            if reader is None:  # the root's start: a DTD has been read by now, if there is one
                kind = _kind_of(element)
                reader = _Reader(etree.QName(element).namespace)
                entry_tag = f"{{{reader.ns['c']}}}Ntry"
                continue
            if event == "end" and element.tag == entry_tag:
                signed.append(reader.signed_cents(element))
                lines += reader.lines(element, len(signed) - 1)
                element.clear(keep_tail=False)  # the entries read before it go: the report's other parts stay
                previous = element.getprevious()
                while previous is not None and previous.tag == entry_tag:
                    element.getparent().remove(previous)
                    previous = element.getprevious()
        root = events.root
    except etree.XMLSyntaxError as exc:
        raise refused("not_xml", "the document is not well-formed XML") from exc
    if reader is None:
        raise refused("not_xml", "the document is not well-formed XML")
    message_name, report_name = _ROOTS[kind]
    message = reader.child(root, message_name)
    reports = reader.all(message, report_name)
    if len(reports) != 1:
        raise refused("several_statements" if reports else "malformed",
                      f"the document must hold exactly one {report_name}")
    report = reports[0]
    balances = _check_totals(reader, kind, report, signed)
    return Statement(kind=kind, message_id=reader.text(message, "GrpHdr/MsgId"),
                     statement_id=reader.text(report, "Id"),
                     iban=normalized_iban(reader.text(report, "Acct/Id/IBAN")), lines=tuple(lines),
                     sha256=stream.sha256.hexdigest(), balances=balances)


def _kind_of(root) -> str:
    """`camt.053` or `camt.054` of the document whose root element is `root` (refused else)."""
    docinfo = root.getroottree().docinfo
    if docinfo.doctype or docinfo.internalDTD is not None:
        raise refused("dtd", "a document type declaration (DTD) is not accepted")
    qname = etree.QName(root)
    match = _NAMESPACE.match(qname.namespace or "")
    if match is None or qname.localname != "Document":
        raise refused("not_camt", "the document is not a camt.053 or camt.054 (ISO 20022) document")
    return match.group(1)


def normalized_iban(value: str) -> str:
    return re.sub(r"\s+", "", value).upper()


def _check_totals(reader: _Reader, kind: str, report, signed: list[int]) -> Balances | None:
    """The entries (their `signed` amounts) add up to the report's totals (when given) and, in a
    camt.053, take the opening booked balance (`OPBD`, or `PRCD`: the previous closing balance a
    bank may give instead) to the closing one; the camt.053's balances."""
    credits = [amount for amount in signed if amount > 0]
    debits = [-amount for amount in signed if amount < 0]
    summary = reader.optional(report, "TxsSummry")
    if summary is not None:
        for path, amounts in (("TtlNtries", [abs(a) for a in signed]), ("TtlCdtNtries", credits),
                              ("TtlDbtNtries", debits)):
            total = reader.optional(summary, path)
            if total is None:
                continue
            count = reader.optional_text(total, "NbOfNtries")
            if count is not None and count != str(len(amounts)):
                raise refused("control_sum", f"{path}: {count} entries announced, {len(amounts)} found")
            announced = reader.optional_text(total, "Sum")
            if announced is not None and cents(announced) != sum(amounts):
                raise refused("control_sum", f"{path}: the entries do not add up to its sum")
        net = reader.optional(summary, "TtlNtries/TtlNetNtry")
        if net is not None and reader.signed(net, cents(reader.text(net, "Amt"))) != sum(signed):
            raise refused("control_sum", "the entries do not add up to the net total")
    if kind != "camt.053":
        return None
    balances = {reader.optional_text(balance, "Tp/CdOrPrtry/Cd"): balance for balance in reader.all(report, "Bal")}
    opening = balances.get("OPBD", balances.get("PRCD"))
    closing = balances.get("CLBD")
    if opening is None or closing is None:
        raise refused("malformed", "a camt.053 states its opening (OPBD or PRCD) and closing (CLBD) booked balances")
    opening_cents, closing_cents = reader.signed_cents(opening), reader.signed_cents(closing)
    if opening_cents + sum(signed) != closing_cents:
        raise refused("control_sum", "the opening balance plus the entries is not the closing balance")
    day = reader.optional_text(closing, "Dt/Dt") or (reader.optional_text(closing, "Dt/DtTm") or "")[:10]
    try:
        closing_date = date.fromisoformat(day) if day else None
    except ValueError as exc:
        raise refused("malformed", f"closing balance date {day!r}") from exc
    return Balances(opening_cents, closing_cents, closing_date)


def cents(text: str) -> int:
    """An ISO 20022 amount (`123.45`) in integer cents; more than two decimals is malformed."""
    try:
        value = Decimal(text.strip())
    except InvalidOperation as exc:
        raise refused("malformed", f"{text[:40]!r} is not an amount") from exc
    scaled = value * 100
    if not value.is_finite() or value < 0 or scaled != scaled.to_integral_value():
        raise refused("malformed", f"{text[:40]!r} is not an amount in cents")
    return int(scaled)


class _Reader:
    """Namespaced lookups of one document, each refusing what is missing or malformed."""

    def __init__(self, namespace: str) -> None:
        self.ns = {"c": namespace}

    @staticmethod
    @functools.lru_cache(maxsize=128)
    def _path(path: str) -> str:
        return "/".join(f"c:{part}" for part in path.split("/"))

    def all(self, node, path: str) -> list:
        return node.findall(self._path(path), self.ns)

    def optional(self, node, path: str):
        return node.find(self._path(path), self.ns)

    def child(self, node, path: str):
        found = self.optional(node, path)
        if found is None:
            raise refused("malformed", f"{path} is missing")
        return found

    def optional_text(self, node, path: str) -> str | None:
        found = self.optional(node, path)
        text = (found.text or "").strip() if found is not None else ""
        return text[:_MAX_TEXT] or None

    def text(self, node, path: str) -> str:
        value = self.optional_text(node, path)
        if value is None:
            raise refused("malformed", f"{path} is missing")
        return value

    def amount(self, node, path: str = "Amt") -> int:
        element = self.child(node, path)
        if element.get("Ccy") != "EUR":
            raise refused("currency", f"only amounts in EUR are accepted, not {element.get('Ccy')!r}")
        return cents(element.text or "")

    def signed(self, node, amount: int) -> int:
        indicator = self.text(node, "CdtDbtInd")
        if indicator not in ("CRDT", "DBIT"):
            raise refused("malformed", f"CdtDbtInd {indicator!r} is neither CRDT nor DBIT")
        return amount if indicator == "CRDT" else -amount

    def signed_cents(self, node) -> int:
        return self.signed(node, self.amount(node))

    def booking_date(self, entry) -> date:
        """The entry's booking date; its value date when the bank gives none (some banks leave
        `BookgDt` out of a booked entry)."""
        value = next((found[:10] for path in ("BookgDt/Dt", "BookgDt/DtTm", "ValDt/Dt", "ValDt/DtTm")
                      if (found := self.optional_text(entry, path))), None)
        if value is None:
            raise refused("malformed", "an entry has neither a booking date nor a value date")
        try:
            return date.fromisoformat(value)
        except ValueError as exc:
            raise refused("malformed", f"booking date {value!r}") from exc

    def booked(self, entry) -> bool:
        status = self.optional_text(entry, "Sts/Cd") or self.optional_text(entry, "Sts")
        return status == "BOOK"

    def lines(self, entry, index: int) -> list[Line]:
        """The lines of one entry: one, or one per transaction of a batch-booked entry."""
        signed = self.signed_cents(entry)
        if not self.booked(entry):
            return []
        details = self.all(entry, "NtryDtls/TxDtls")
        reference = self.optional_text(entry, "AcctSvcrRef")
        if len(details) > 1 and not any(self._own_amount(detail) for detail in details):
            details = []  # a batch whose transactions carry no amount of their own: one line of the entry
        if len(details) <= 1:
            amounts = [abs(signed)]
        else:
            amounts = [self.amount(detail, path) if (path := self._own_amount(detail)) else None
                       for detail in details]
            if None in amounts:
                raise refused("malformed", f"entry {index + 1}: some of its transactions carry no amount")
            if sum(amounts) != abs(signed):
                raise refused("control_sum", f"entry {index + 1}: its transactions do not add up to it")
        day = self.booking_date(entry)
        lines = []
        for position, amount in enumerate(amounts):
            detail = details[position] if details else None
            lines.append(self._line(entry, detail, amount, signed > 0, day, position,
                                    reference if len(amounts) == 1 or reference is None
                                    else f"{reference}/{position + 1}"))
        return lines

    def _own_amount(self, detail) -> str | None:
        """The path of a transaction's own amount, None when it carries none."""
        return next((path for path in ("Amt", "AmtDtls/TxAmt/Amt") if self.optional(detail, path) is not None), None)

    def _line(self, entry, detail, amount: int, credit: bool, day: date, position: int,
              reference: str | None) -> Line:
        get = (lambda path: self.optional_text(detail, path)) if detail is not None else (lambda path: None)
        remittance = " ".join(element.text.strip() for element in (
            self.all(detail, "RmtInf/Ustrd") + self.all(detail, "RmtInf/Strd/CdtrRefInf/Ref")
            if detail is not None else []) if element.text and element.text.strip()) or None
        party = "Dbtr" if credit else "Cdtr"
        name = get(f"RltdPties/{party}/Nm") or get(f"RltdPties/{party}/Pty/Nm")
        iban = get(f"RltdPties/{party}Acct/Id/IBAN")
        return_code = get("RtrInf/Rsn/Cd") if not credit else None
        if return_code is not None and not _RETURN_CODE.match(return_code):
            raise refused("malformed", f"return reason {return_code!r} is not an ISO reason code")
        end_to_end = get("Refs/EndToEndId")
        if end_to_end == "NOTPROVIDED":
            end_to_end = None
        key = reference or hashlib.sha256("|".join(str(part) for part in (
            day, credit, amount, end_to_end, remittance, name, iban, return_code,
            self.optional_text(entry, "NtryRef"), position)).encode()).hexdigest()
        return Line(key=key, credit=credit, amount_cents=amount, booking_date=day, end_to_end_id=end_to_end,
                    remittance=remittance[:1000] if remittance else None, counterparty_name=name,
                    counterparty_iban=normalized_iban(iban) if iban else None, return_code=return_code)
