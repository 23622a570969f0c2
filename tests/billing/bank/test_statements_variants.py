"""Statements as banks send them (API.md "Statements in"): an opening balance given as `PRCD`, an
entry without a booking date, a batch whose transactions carry no amount of their own; the same
identifier with other content is a conflict; a statement that does not open on the last closing
balance is refused (a statement is missing). The documents are written as a French bank's
camt.053.001.02 export lays them out (version 02, `BkTxCd`, `ValDt`, `AddtlNtryInf`), not by the
project's own writer."""

from __future__ import annotations

import pytest

from backend.billing.accounting.chart import Account
from backend.billing.accounting.ledger import balance
from backend.billing.bank import statements
from backend.billing.models import BankLine, BankStatement
from backend.errors import Conflict, ValidationError
from tests.billing.bank.statements_data import IBAN, books_breaches, config


def _bank_statement(statement_id: str, opening: str, closing: str, entries: str, *, opening_code: str = "PRCD",
                    account: str = IBAN) -> bytes:
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <BkToCstmrStmt>
    <GrpHdr><MsgId>CAMT053{statement_id}</MsgId><CreDtTm>2026-12-04T06:12:44</CreDtTm>
      <MsgPgntn><PgNb>1</PgNb><LastPgInd>true</LastPgInd></MsgPgntn></GrpHdr>
    <Stmt>
      <Id>{statement_id}</Id><ElctrncSeqNb>338</ElctrncSeqNb><CreDtTm>2026-12-04T06:12:44</CreDtTm>
      <FrToDt><FrDtTm>2026-12-03T00:00:00</FrDtTm><ToDtTm>2026-12-03T23:59:59</ToDtTm></FrToDt>
      <Acct><Id><IBAN>{account}</IBAN></Id><Ccy>EUR</Ccy><Svcr><FinInstnId><BIC>AGRIFRPP</BIC></FinInstnId></Svcr></Acct>
      <Bal><Tp><CdOrPrtry><Cd>{opening_code}</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">{opening}</Amt>
        <CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-12-02</Dt></Dt></Bal>
      <Bal><Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">{closing}</Amt>
        <CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-12-03</Dt></Dt></Bal>
      {entries}
    </Stmt>
  </BkToCstmrStmt>
</Document>""".encode()


# A SEPA credit batch booked as one entry: the bank lists the three transfers' references but
# reports no amount per transaction.
BATCH = """
      <Ntry><NtryRef>0001</NtryRef><Amt Ccy="EUR">300.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts>
        <BookgDt><Dt>2026-12-03</Dt></BookgDt><ValDt><Dt>2026-12-03</Dt></ValDt><AcctSvcrRef>BQ2026120300001</AcctSvcrRef>
        <BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>RCDT</Cd><SubFmlyCd>ESCT</SubFmlyCd></Fmly></Domn></BkTxCd>
        <NtryDtls><Btch><NbOfTxs>3</NbOfTxs></Btch>
          <TxDtls><Refs><EndToEndId>NOTPROVIDED</EndToEndId></Refs><RmtInf><Ustrd>LOYER DEC</Ustrd></RmtInf></TxDtls>
          <TxDtls><Refs><EndToEndId>NOTPROVIDED</EndToEndId></Refs><RmtInf><Ustrd>ACOMPTE</Ustrd></RmtInf></TxDtls>
          <TxDtls><Refs><EndToEndId>NOTPROVIDED</EndToEndId></Refs></TxDtls>
        </NtryDtls><AddtlNtryInf>REMISE VIREMENTS SEPA 3 OPERATIONS</AddtlNtryInf></Ntry>"""
# A card fee booked without a booking date: the bank gives its value date only.
NO_BOOKING_DATE = """
      <Ntry><Amt Ccy="EUR">12.50</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts>BOOK</Sts>
        <ValDt><Dt>2026-12-03</Dt></ValDt><AcctSvcrRef>BQ2026120300002</AcctSvcrRef>
        <BkTxCd><Domn><Cd>ACMT</Cd><Fmly><Cd>MDOP</Cd><SubFmlyCd>CHRG</SubFmlyCd></Fmly></Domn></BkTxCd>
        <AddtlNtryInf>FRAIS TENUE DE COMPTE</AddtlNtryInf></Ntry>"""


def _import(document: bytes):
    return statements.import_statement(document, config=config(), user_id=None)


def test_a_bank_statement_with_prcd_a_batch_without_amounts_and_no_booking_date_is_read():
    answer = _import(_bank_statement("STMT-338", "1000.00", "1287.50", BATCH + NO_BOOKING_DATE))
    assert (answer.lines, answer.unmatched) == (2, 2)  # the batch is one line of its entry's amount
    lines = {line.entry_key: line for line in BankLine.select().where(BankLine.statement_id == answer.id)}
    assert (lines["BQ2026120300001"].amount_cents, lines["BQ2026120300001"].direction) == (30_000, "credit")
    assert (lines["BQ2026120300002"].booking_date.isoformat(), lines["BQ2026120300002"].amount_cents) == (
        "2026-12-03", 1_250)
    row = BankStatement.get_by_id(answer.id)
    assert (row.opening_balance_cents, row.closing_balance_cents, row.closing_date.isoformat()) == (
        100_000, 128_750, "2026-12-03")
    # 512 moved by what the bank moved; both lines wait in 471
    assert balance(Account.BANK) == 28_750 and balance(Account.SUSPENSE) == -28_750


def test_a_batch_where_only_some_transactions_carry_an_amount_is_refused():
    partly = BATCH.replace("<TxDtls><Refs><EndToEndId>NOTPROVIDED</EndToEndId></Refs><RmtInf><Ustrd>LOYER DEC",
                           '<TxDtls><Amt Ccy="EUR">100.00</Amt><Refs><EndToEndId>NOTPROVIDED</EndToEndId></Refs>'
                           "<RmtInf><Ustrd>LOYER DEC")
    with pytest.raises(ValidationError) as refused:
        _import(_bank_statement("STMT-339", "1000.00", "1300.00", partly))
    assert refused.value.details["reason"] == "malformed"


def test_the_same_identifier_with_other_content_is_a_conflict_and_the_same_document_is_imported_once():
    document = _bank_statement("STMT-340", "0.00", "300.00", BATCH, opening_code="OPBD")
    first = _import(document)
    assert _import(document).id == first.id  # the same document again: nothing changes
    other = _bank_statement("STMT-340", "0.00", "287.50", BATCH + NO_BOOKING_DATE, opening_code="OPBD")
    with pytest.raises(Conflict) as conflict:
        _import(other)
    assert conflict.value.details["reason"] == "statement_conflict"
    assert BankLine.select().where(BankLine.statement_id == first.id).count() == 1
    assert books_breaches() == []


def test_a_statement_that_does_not_open_on_the_last_closing_balance_is_refused_as_a_missing_statement():
    _import(_bank_statement("STMT-341", "0.00", "300.00", BATCH, opening_code="OPBD"))
    skipped = _bank_statement("STMT-343", "500.00", "487.50", NO_BOOKING_DATE)  # STMT-342 never imported
    with pytest.raises(Conflict) as refused:
        _import(skipped)
    assert refused.value.details["reason"] == "statement_missing"
    assert (refused.value.details["lastStatementId"], refused.value.details["lastClosingBalanceCents"],
            refused.value.details["openingBalanceCents"]) == ("STMT-341", 30_000, 50_000)
    assert not BankStatement.select().where(BankStatement.statement_id == "STMT-343").exists()
    assert _import(_bank_statement("STMT-342", "300.00", "500.00", BATCH.replace("300.00", "200.00")
                                   .replace("BQ2026120300001", "BQ2026120300009"))).lines == 1
    assert _import(skipped).lines == 1  # now it follows
    assert books_breaches() == []
