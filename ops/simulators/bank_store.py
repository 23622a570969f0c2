"""The bank simulator's state and the camt.053 it writes (`ops.simulators.bank`).

The account's movements wait in `pending` until the next statement books them: the debits of each
pain.008 received (credits to the account, or a credit then its return with a reason code when
the debit was switched to come back), the transfers of each pain.001 (debits), and the incoming
transfers the control routes add (a customer paying late, short or twice, an unknown payer).
`statement()` books what is due into one camt.053.001.08 (opening and closing booked balances,
the transactions summary), numbered in order, kept so it can be fetched again.
"""

from __future__ import annotations

import itertools
import threading
import uuid
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal
from xml.sax.saxutils import escape

from lxml import etree

CAMT053 = "urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"
DEFAULT_IBAN = "FR7630006000011234567890189"
MAX_FILE = 8 * 1024 * 1024


@dataclass
class Movement:
    credit: bool
    amount_cents: int
    end_to_end_id: str | None = None
    remittance: str | None = None
    name: str | None = None
    iban: str | None = None
    return_code: str | None = None
    delay: int = 0  # statements to wait before it is booked


@dataclass
class BankState:
    iban: str = DEFAULT_IBAN
    balance_cents: int = 0
    pending: list[Movement] = field(default_factory=list)
    statements: list[bytes] = field(default_factory=list)
    returns: dict[str, str] = field(default_factory=dict)  # end-to-end id -> reason code
    files: list[dict] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # This run's prefix of statement ids and bank references: a restarted simulator never repeats
    # the ids of a statement the platform imported (it would take it for the same one).
    run: str = field(default_factory=lambda: uuid.uuid4().hex[:8].upper())
    _refs: itertools.count = field(default_factory=lambda: itertools.count(1))

    def receive(self, document: bytes) -> dict:
        """A pain.008 (direct debits: credits to come, or returns) or pain.001 (transfers out)."""
        if len(document) > MAX_FILE:
            raise ValueError("file too large")
        parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
        root = etree.fromstring(document, parser)
        namespace = etree.QName(root).namespace or ""
        ns = {"p": namespace}
        if "pain.008" in namespace:
            kind, path, party = "pain.008", "p:CstmrDrctDbtInitn/p:PmtInf/p:DrctDbtTxInf", "Dbtr"
            account = root.findtext("p:CstmrDrctDbtInitn/p:PmtInf/p:CdtrAcct/p:Id/p:IBAN", namespaces=ns)
        elif "pain.001" in namespace:
            kind, path, party = "pain.001", "p:CstmrCdtTrfInitn/p:PmtInf/p:CdtTrfTxInf", "Cdtr"
            account = root.findtext("p:CstmrCdtTrfInitn/p:PmtInf/p:DbtrAcct/p:Id/p:IBAN", namespaces=ns)
        else:
            raise ValueError("not a pain.008 or pain.001 document")
        moves = []
        for tx in root.findall(path, ns):
            amount = tx.find("p:InstdAmt", ns)
            if amount is None:
                amount = tx.find("p:Amt/p:InstdAmt", ns)
            moves.append(Movement(
                credit=kind == "pain.008", amount_cents=int(Decimal(amount.text) * 100),
                end_to_end_id=tx.findtext("p:PmtId/p:EndToEndId", namespaces=ns),
                remittance=tx.findtext("p:RmtInf/p:Ustrd", namespaces=ns),
                name=tx.findtext(f"p:{party}/p:Nm", namespaces=ns),
                iban=tx.findtext(f"p:{party}Acct/p:Id/p:IBAN", namespaces=ns)))
        with self.lock:
            if account:
                self.iban = account
            self.pending.extend(moves)
            self.files.append({"kind": kind, "transactions": len(moves)})
        return {"kind": kind, "transactions": len(moves)}

    def add(self, movement: Movement, times: int = 1) -> None:
        with self.lock:
            self.pending.extend(Movement(**vars(movement)) for _ in range(times))

    def statement(self, booked_on: date) -> bytes:
        """Book what is due into the next camt.053 (and keep it)."""
        with self.lock:
            due = [m for m in self.pending if m.delay <= 0]
            self.pending = [m for m in self.pending if m.delay > 0]
            for movement in self.pending:
                movement.delay -= 1
            entries = []
            for movement in due:
                entries.append(self._entry(movement, booked_on))
                code = self.returns.pop(movement.end_to_end_id or "", None) if movement.credit else None
                if code:  # the debit comes back: booked, then returned with its reason
                    entries.append(self._entry(Movement(credit=False, amount_cents=movement.amount_cents,
                                                        end_to_end_id=movement.end_to_end_id, name=movement.name,
                                                        iban=movement.iban, return_code=code), booked_on))
            number = len(self.statements) + 1
            opening = self.balance_cents
            self.balance_cents += sum(e[1] if e[0] else -e[1] for e in entries)
            document = camt053(self.iban, f"STMT-{self.run}-{number:06d}", f"MSG-{self.run}-{number:06d}", opening,
                               [e[2] for e in entries], booked_on)
            self.statements.append(document)
            return document

    def _entry(self, movement: Movement, booked_on: date) -> tuple[bool, int, str]:
        return movement.credit, movement.amount_cents, entry_xml(
            f"SIM{self.run}{next(self._refs):010d}", movement.credit, movement.amount_cents, booked_on,
            end_to_end_id=movement.end_to_end_id, remittance=movement.remittance, name=movement.name,
            iban=movement.iban, return_code=movement.return_code)


def _amount(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"


def entry_xml(reference: str, credit: bool, amount_cents: int, booked_on: date, *, end_to_end_id: str | None = None,
              remittance: str | None = None, name: str | None = None, iban: str | None = None,
              return_code: str | None = None) -> str:
    """One `Ntry` of a camt.053.001.08, with its one transaction's details."""
    indicator = "CRDT" if credit else "DBIT"
    party = "Dbtr" if credit else "Cdtr"
    family = ("RDDT", "UPDD") if return_code else (("RDDT", "ESDD") if credit and end_to_end_id and not remittance
                                                   else ("RCDT", "ESCT") if credit else ("ICDT", "ESCT"))
    parties = ""
    if name or iban:
        parties = (f"<RltdPties><{party}><Pty><Nm>{escape(name or '')}</Nm></Pty></{party}>"
                   + (f"<{party}Acct><Id><IBAN>{iban}</IBAN></Id></{party}Acct>" if iban else "") + "</RltdPties>")
    return (f"<Ntry><Amt Ccy=\"EUR\">{_amount(amount_cents)}</Amt><CdtDbtInd>{indicator}</CdtDbtInd>"
            f"<Sts><Cd>BOOK</Cd></Sts><BookgDt><Dt>{booked_on.isoformat()}</Dt></BookgDt>"
            f"<ValDt><Dt>{booked_on.isoformat()}</Dt></ValDt><AcctSvcrRef>{reference}</AcctSvcrRef>"
            f"<BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>{family[0]}</Cd><SubFmlyCd>{family[1]}</SubFmlyCd></Fmly>"
            f"</Domn></BkTxCd><NtryDtls><TxDtls><Refs><EndToEndId>{escape(end_to_end_id or 'NOTPROVIDED')}"
            f"</EndToEndId></Refs><Amt Ccy=\"EUR\">{_amount(amount_cents)}</Amt>{parties}"
            + (f"<RmtInf><Ustrd>{escape(remittance[:140])}</Ustrd></RmtInf>" if remittance else "")
            + (f"<RtrInf><Rsn><Cd>{return_code}</Cd></Rsn></RtrInf>" if return_code else "")
            + "</TxDtls></NtryDtls></Ntry>")


def camt053(iban: str, statement_id: str, message_id: str, opening_cents: int, entries: list[str], booked_on: date,
            *, credits_cents: int | None = None, debits_cents: int | None = None) -> bytes:
    """A camt.053.001.08 document of `entries` (`entry_xml`) with its balances and summary; the
    sums are read back from the entries unless given (a test gives wrong ones)."""
    if credits_cents is None or debits_cents is None:
        credits_cents, debits_cents = _sums(entries)
    count_credit = sum("<CdtDbtInd>CRDT" in entry for entry in entries)
    count_debit = len(entries) - count_credit
    closing = opening_cents + credits_cents - debits_cents
    now = datetime.now(UTC).replace(microsecond=0).isoformat()

    def balance(code: str, cents: int) -> str:
        return (f"<Bal><Tp><CdOrPrtry><Cd>{code}</Cd></CdOrPrtry></Tp><Amt Ccy=\"EUR\">{_amount(abs(cents))}</Amt>"
                f"<CdtDbtInd>{'CRDT' if cents >= 0 else 'DBIT'}</CdtDbtInd><Dt><Dt>{booked_on.isoformat()}</Dt></Dt>"
                "</Bal>")

    return (f"<?xml version=\"1.0\" encoding=\"UTF-8\"?><Document xmlns=\"{CAMT053}\"><BkToCstmrStmt>"
            f"<GrpHdr><MsgId>{message_id}</MsgId><CreDtTm>{now}</CreDtTm></GrpHdr>"
            f"<Stmt><Id>{statement_id}</Id><CreDtTm>{now}</CreDtTm><Acct><Id><IBAN>{iban}</IBAN></Id></Acct>"
            + balance("OPBD", opening_cents) + balance("CLBD", closing)
            + f"<TxsSummry><TtlNtries><NbOfNtries>{len(entries)}</NbOfNtries>"
            f"<Sum>{_amount(credits_cents + debits_cents)}</Sum></TtlNtries>"
            f"<TtlCdtNtries><NbOfNtries>{count_credit}</NbOfNtries><Sum>{_amount(credits_cents)}</Sum></TtlCdtNtries>"
            f"<TtlDbtNtries><NbOfNtries>{count_debit}</NbOfNtries><Sum>{_amount(debits_cents)}</Sum></TtlDbtNtries>"
            "</TxsSummry>" + "".join(entries) + "</Stmt></BkToCstmrStmt></Document>").encode()


def _sums(entries: list[str]) -> tuple[int, int]:
    credits = debits = 0
    for entry in entries:
        amount = entry.split("<Amt Ccy=", 1)[1].split(">", 1)[1].split("<", 1)[0]
        units, cents = amount.split(".")
        value = int(units) * 100 + int(cents)
        if "<CdtDbtInd>CRDT" in entry:
            credits += value
        else:
            debits += value
    return credits, debits
