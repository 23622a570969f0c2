"""The direct debit file (pain.008.001.08): what it holds, read back and validated against the ISO
20022 schema; FRST then RCUR, FRST again after 36 months unused; what it refuses and holds back."""

from __future__ import annotations

import hashlib
from datetime import UTC, date, datetime

import pytest
import time_machine

from backend.billing.bank import files
from backend.billing.bank.direct_debits import lapses_on
from backend.billing.bank.end_to_end import end_to_end_id
from backend.billing.models import (
    AuditEntry,
    BankFile,
    BankFileKind,
    BankFileOrder,
    MandateStatus,
    PaymentMethod,
    PaymentOrder,
    SepaMandate,
)
from backend.errors import Conflict
from backend.runtime import current_runtime
from tests.billing.bank.data import (
    CREDITOR_ID,
    DEBTOR_IBAN,
    PLATFORM_BIC,
    PLATFORM_IBAN,
    bank_config,
    collect,
    read_debits,
    sign_sepa_mandate,
)
from tests.billing.helpers import Market, approved_org

DEBITS = BankFileKind.DIRECT_DEBIT
# Monday 30 November 2026, 10:00 in Paris: the first collection date TARGET2 allows is Tuesday 1 December.
MONDAY = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def make(config=None, **overrides):
    storage = current_runtime().storage
    file = files.make_file(DEBITS, storage=storage, config=config or bank_config(**overrides), user_id=None).file
    return file, storage.read_bytes(files.STORAGE_CONTEXT, file.storage_key)


def refused(**overrides) -> dict:
    with pytest.raises(Conflict) as caught:
        make(**overrides)
    return caught.value.details


@pytest.fixture
def market():
    return Market()


def test_the_file_holds_every_debit_due_and_validates_against_the_iso_schema(market):
    first, second = approved_org("industrial"), approved_org("industrial")
    mandates = [sign_sepa_mandate(first, signed_at=datetime(2026, 10, 5, 22, 30, tzinfo=UTC)),  # 6 Oct in Paris
                sign_sepa_mandate(second, signed_at=datetime(2026, 11, 2, 8, 0, tzinfo=UTC))]
    with time_machine.travel(MONDAY, tick=False):
        answers = [collect(market, first, price_cents=100_000), collect(market, second, price_cents=33_333)]
        by_transfer = collect(market, approved_org("industrial"), method=PaymentMethod.BANK_TRANSFER)
        file, xml = make()
    header, transactions = read_debits(xml)
    orders = [PaymentOrder.get_by_id(answer.payment_order_id) for answer in answers]
    assert [order.amount_cents for order in orders] == [144_000, 48_000]
    assert header == {"messageId": file.message_id, "count": 2, "controlSumCents": 192_000,
                      "creditorIban": PLATFORM_IBAN, "creditorBic": PLATFORM_BIC, "creditorId": CREDITOR_ID,
                      "instrument": "CORE"}
    assert [(t.end_to_end_id, t.amount_cents, t.remittance, t.iban, t.sequence_type, t.requested_on, t.mandate_ref,
             t.mandate_signed_on) for t in sorted(transactions, key=lambda t: -t.amount_cents)] == [
        (end_to_end_id(orders[0].id), 144_000, answers[0].invoice_number, DEBTOR_IBAN, "FRST", "2026-12-01",
         mandates[0].mandate_ref, "2026-10-06"),
        (end_to_end_id(orders[1].id), 48_000, answers[1].invoice_number, DEBTOR_IBAN, "FRST", "2026-12-01",
         mandates[1].mandate_ref, "2026-11-02")]
    assert (file.kind, file.count, file.control_sum_cents, file.requested_on, file.status) == (
        "direct_debit", 2, 192_000, date(2026, 12, 1), "live")
    assert file.sha256 == hashlib.sha256(xml).hexdigest()
    assert [PaymentOrder.get_by_id(o.id).settlement for o in orders] == ["in_file", "in_file"]
    assert PaymentOrder.get_by_id(by_transfer.payment_order_id).settlement == "unsent"  # the payer's own transfer
    links = BankFileOrder.select().where(BankFileOrder.file_id == file.id).order_by(BankFileOrder.amount_cents)
    assert [(link.payment_order_id, link.amount_cents, link.sequence_type) for link in links] == [
        (orders[1].id, 48_000, "FRST"), (orders[0].id, 144_000, "FRST")]
    audit = AuditEntry.get(AuditEntry.action == "billing.bank.file")
    assert audit.details["fileId"] == file.id and audit.details["controlSumCents"] == 192_000
    assert "admin route" in audit.reason
    # Nothing due any more: 409, and no file.
    assert refused()["reason"] == "nothing_due" and BankFile.select().count() == 1


def test_frst_for_a_mandates_first_debit_rcur_after_and_frst_again_after_36_months_unused(market):
    industrial = approved_org("industrial")
    mandate = sign_sepa_mandate(industrial)
    with time_machine.travel(MONDAY, tick=False):
        collect(market, industrial)
        collect(market, industrial)  # one file, one mandate: FRST then RCUR
        _, xml = make()
        assert [t.sequence_type for t in read_debits(xml)[1]] == ["FRST", "RCUR"]
        collect(market, industrial)
    # 35 months after the last collection date (1 December 2026): still in use.
    with time_machine.travel(datetime(2029, 11, 5, 9, 0, tzinfo=UTC), tick=False):
        _, xml = make()
        assert [(t.sequence_type, t.requested_on) for t in read_debits(xml)[1]] == [("RCUR", "2029-11-06")]
        collect(market, industrial)
    # 36 months after that one (6 November 2029): the mandate starts again at FRST.
    assert lapses_on(date(2029, 11, 6)) == date(2032, 11, 6)
    with time_machine.travel(datetime(2032, 11, 5, 9, 0, tzinfo=UTC), tick=False):
        _, xml = make()
        assert [(t.sequence_type, t.requested_on, t.mandate_ref) for t in read_debits(xml)[1]] == [
            ("FRST", "2032-11-08", mandate.mandate_ref)]  # Saturday 6 November: the collection date is Monday


def test_the_36_months_count_to_the_day_and_a_29_february():
    assert lapses_on(date(2028, 2, 29)) == date(2031, 2, 28)
    assert lapses_on(date(2026, 12, 1)) == date(2029, 12, 1)


def test_a_debit_on_an_ended_mandate_is_held_back_and_nothing_else_due_is_409(market, log_lines):
    industrial = approved_org("industrial")
    mandate = sign_sepa_mandate(industrial)
    answer = collect(market, industrial)
    SepaMandate.update(status=MandateStatus.ENDED, ended_at=mandate.signed_at, end_reason="IBAN changed").where(
        SepaMandate.id == mandate.id).execute()
    details = refused()
    assert (details["reason"], details["held"]) == (
        "nothing_due", [{"paymentOrderId": answer.payment_order_id, "reason": "mandate_ended"}])
    assert PaymentOrder.get_by_id(answer.payment_order_id).settlement == "unsent"
    assert any(line["scope"] == "billing.bank.debit_held_back" for line in log_lines())


@pytest.mark.owner  # the envelope of a signed mandate rewritten: only the owner could
def test_debits_with_an_iban_or_mandate_reference_failing_its_check_are_held_and_the_others_filed(market):
    good, bad_iban, unsigned, malformed = (approved_org("industrial") for _ in range(4))
    sign_sepa_mandate(good)
    sign_sepa_mandate(bad_iban, iban="FR7630006000011234567890188")  # a wrong check digit
    forged = sign_sepa_mandate(unsigned)
    sign_sepa_mandate(malformed, mandate_ref="VIT//42")
    answers = [collect(market, organization) for organization in (good, bad_iban, unsigned, malformed)]
    # The reference the order quotes is not the one the envelope printed (the envelope changed by
    # hand after the collection, as a bad migration would).
    SepaMandate.update(signature_request_id="00000000-0000-4000-8000-000000000000").where(
        SepaMandate.id == forged.id).execute()
    made = files.make_file(DEBITS, storage=current_runtime().storage, config=bank_config(), user_id=None)
    assert sorted((h.payment_order_id, h.reason, h.field, h.problem[:12]) for h in made.held) == sorted([
        (answers[1].payment_order_id, "bank_details_invalid", "debtorIban", "The number's"),
        (answers[2].payment_order_id, "bank_details_invalid", "mandateReference", "not the refe"),
        (answers[3].payment_order_id, "bank_details_invalid", "mandateReference", "not 1 to 35 ")])
    assert made.file.count == 1
    assert [PaymentOrder.get_by_id(a.payment_order_id).settlement for a in answers] == [
        "in_file", "unsent", "unsent", "unsent"]
    # Nothing else can go: 409, the held orders listed.
    assert sorted(h["paymentOrderId"] for h in refused()["held"]) == sorted(a.payment_order_id for a in answers[1:])


def test_no_file_without_the_creditor_identifier_or_with_a_bad_platform_bic(market):
    industrial = approved_org("industrial")
    sign_sepa_mandate(industrial)
    collect(market, industrial)
    details = refused(platform_sepa_creditor_id=None)
    assert (details["reason"], list(details["settings"])) == ("bank_not_configured", ["PLATFORM_SEPA_CREDITOR_ID"])
    details = refused(platform_legal_bic="AGRIFR")
    assert (details["reason"], list(details["settings"])) == ("bank_not_configured", ["PLATFORM_LEGAL_BIC"])
    assert BankFile.select().count() == 0
