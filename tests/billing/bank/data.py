"""Bank test data: the platform's bank settings, signed SEPA mandates (rows written directly: the
onboarding's envelope flow has its own tests), debits and transfers due, and the files read back
(parsed, and validated against the ISO 20022 schema by lxml, beside sepaxml's own validation)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

import sepaxml
from lxml import etree

from backend import clock
from backend.billing import corrections
from backend.billing.collection import collect as collection
from backend.billing.models import PaymentMethod, SepaMandate
from backend.config import Config
from backend.identity.models import Organization
from backend.sepa import mandate_reference
from tests.billing.helpers import Market, approved_org, booted_config

CREDITOR_ID = "FR72ZZZ123456"
PLATFORM_IBAN = "FR7630006000011234567890189"
PLATFORM_BIC = "AGRIFRPP"
DEBTOR_IBAN = "DE89370400440532013000"
SCHEMA_DIR = Path(sepaxml.__file__).parent / "schemas"


def bank_config(config: Config | None = None, **overrides) -> Config:
    settings = {"platform_sepa_creditor_id": CREDITOR_ID, "platform_legal_iban": PLATFORM_IBAN,
                "platform_legal_bic": PLATFORM_BIC, "platform_legal_company_name": "Vitrine SAS"}
    return replace(config or booted_config(), **{**settings, **overrides})


@contextmanager
def command_booting(config: Config) -> Iterator[None]:
    """Around a `vitrine` command run in the test process: the command boots the process's runtime
    with its own settings, the tests' is booted again afterwards."""
    from backend.runtime import boot

    try:
        yield
    finally:
        boot(config, role="test")


def sign_sepa_mandate(organization: Organization, *, signed_at: datetime | None = None, iban: str = DEBTOR_IBAN,
                      mandate_ref: str | None = None) -> SepaMandate:
    """The organization's active mandate, its reference the one its onboarding envelope printed
    (`mandate_ref` given: a mandate recorded without an envelope, under that reference)."""
    envelope = None if mandate_ref else str(uuid.uuid4())
    return SepaMandate.create(organization_id=organization.id, mandate_ref=mandate_ref or mandate_reference(envelope),
                              iban=iban, signature_request_id=envelope, signed_at=signed_at or clock.now())


def collect(market: Market, industrial: Organization, *, method: PaymentMethod = PaymentMethod.SEPA_DD,
            price_cents: int = 100_000, distributor: Organization | None = None):
    """A reservation collected now (`collection.Collected`)."""
    reservation = market.reservation(industrial, distributor or approved_org("distributor"), price_cents=price_cents)
    return collection.collect(reservation_id=reservation.id, industrial_organization_id=industrial.id, method=method,
                              key=f"k-{reservation.id}", user_id=None, config=booted_config())


def refund(invoice_number: str, amount_cents: int):
    return corrections.refund_once(key=f"r-{uuid.uuid4()}", invoice_number=invoice_number, amount_cents=amount_cents,
                                   reason="Vitrine abîmée", method=PaymentMethod.BANK_TRANSFER, user_id=None,
                                   config=booted_config())


@dataclass(frozen=True)
class Transaction:
    end_to_end_id: str
    amount_cents: int
    remittance: str
    iban: str
    name: str
    sequence_type: str | None
    requested_on: str
    mandate_ref: str | None
    mandate_signed_on: str | None


NS = {"d": "urn:iso:std:iso:20022:tech:xsd:pain.008.001.08", "t": "urn:iso:std:iso:20022:tech:xsd:pain.001.001.09"}


def valid_against_schema(xml: bytes, schema: str) -> etree._Element:
    """The document, once lxml validated it against the ISO 20022 XSD `schema` (no network, no DTD)."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    document = etree.fromstring(xml, parser)
    xsd = etree.XMLSchema(etree.parse(str(SCHEMA_DIR / f"{schema}.xsd")))
    xsd.assertValid(document)
    return document


def _cents(text: str) -> int:
    units, _, decimals = text.partition(".")
    return int(units) * 100 + int(decimals.ljust(2, "0"))


def read_debits(xml: bytes) -> tuple[dict, list[Transaction]]:
    root = valid_against_schema(xml, "pain.008.001.08")
    header = root.find("d:CstmrDrctDbtInitn/d:GrpHdr", NS)
    found = []
    for block in root.iterfind("d:CstmrDrctDbtInitn/d:PmtInf", NS):
        for tx in block.iterfind("d:DrctDbtTxInf", NS):
            found.append(Transaction(
                tx.findtext("d:PmtId/d:EndToEndId", namespaces=NS), _cents(tx.findtext("d:InstdAmt", namespaces=NS)),
                tx.findtext("d:RmtInf/d:Ustrd", namespaces=NS), tx.findtext("d:DbtrAcct/d:Id/d:IBAN", namespaces=NS),
                tx.findtext("d:Dbtr/d:Nm", namespaces=NS), block.findtext("d:PmtTpInf/d:SeqTp", namespaces=NS),
                block.findtext("d:ReqdColltnDt", namespaces=NS),
                tx.findtext("d:DrctDbtTx/d:MndtRltdInf/d:MndtId", namespaces=NS),
                tx.findtext("d:DrctDbtTx/d:MndtRltdInf/d:DtOfSgntr", namespaces=NS)))
    block = root.find("d:CstmrDrctDbtInitn/d:PmtInf", NS)
    return {
        "messageId": header.findtext("d:MsgId", namespaces=NS),
        "count": int(header.findtext("d:NbOfTxs", namespaces=NS)),
        "controlSumCents": _cents(header.findtext("d:CtrlSum", namespaces=NS)),
        "creditorIban": block.findtext("d:CdtrAcct/d:Id/d:IBAN", namespaces=NS),
        "creditorBic": block.findtext("d:CdtrAgt/d:FinInstnId/d:BICFI", namespaces=NS),
        "creditorId": block.findtext("d:CdtrSchmeId/d:Id/d:PrvtId/d:Othr/d:Id", namespaces=NS),
        "instrument": block.findtext("d:PmtTpInf/d:LclInstrm/d:Cd", namespaces=NS),
    }, found


def read_transfers(xml: bytes) -> tuple[dict, list[Transaction]]:
    root = valid_against_schema(xml, "pain.001.001.09")
    header = root.find("t:CstmrCdtTrfInitn/t:GrpHdr", NS)
    found = []
    for block in root.iterfind("t:CstmrCdtTrfInitn/t:PmtInf", NS):
        for tx in block.iterfind("t:CdtTrfTxInf", NS):
            found.append(Transaction(
                tx.findtext("t:PmtId/t:EndToEndId", namespaces=NS),
                _cents(tx.findtext("t:Amt/t:InstdAmt", namespaces=NS)), tx.findtext("t:RmtInf/t:Ustrd", namespaces=NS),
                tx.findtext("t:CdtrAcct/t:Id/t:IBAN", namespaces=NS), tx.findtext("t:Cdtr/t:Nm", namespaces=NS), None,
                block.findtext("t:ReqdExctnDt/t:Dt", namespaces=NS), None, None))
    block = root.find("t:CstmrCdtTrfInitn/t:PmtInf", NS)
    return {
        "messageId": header.findtext("t:MsgId", namespaces=NS),
        "count": int(header.findtext("t:NbOfTxs", namespaces=NS)),
        "controlSumCents": _cents(header.findtext("t:CtrlSum", namespaces=NS)),
        "debtorIban": block.findtext("t:DbtrAcct/t:Id/t:IBAN", namespaces=NS),
        "debtorBic": block.findtext("t:DbtrAgt/t:FinInstnId/t:BICFI", namespaces=NS),
    }, found
