"""A property of the direct debit files over any sequence of collections and file runs: every debit
collected before a run is in exactly one live file and none after; each file's control sum is the
sum of its transactions, as recorded and as written; a mandate's first debit is FRST, the rest RCUR."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backend.billing.bank import files
from backend.billing.bank.end_to_end import order_id_of
from backend.billing.models import BankFile, BankFileKind, BankFileOrder, PaymentMethod, PaymentOrder
from backend.db import transaction
from backend.errors import Conflict
from backend.runtime import current_runtime
from tests.billing.bank.data import bank_config, collect, read_debits, sign_sepa_mandate
from tests.billing.helpers import Market, approved_org

STEPS = st.lists(st.one_of(
    st.tuples(st.just("collect"), st.integers(0, 2), st.integers(1, 5_000_000), st.booleans()),
    st.tuples(st.just("run")),
), min_size=1, max_size=6)


class _Rollback(Exception):
    pass


@settings(max_examples=6, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=STEPS)
def test_every_debit_due_lands_in_exactly_one_file_whose_control_sum_adds_up(steps):
    try:
        with transaction():
            _check(steps)
            raise _Rollback
    except _Rollback:
        pass


def _check(steps) -> None:
    market, storage, config = Market(), current_runtime().storage, bank_config()
    industrials = [approved_org("industrial") for _ in range(3)]
    mandates = [sign_sepa_mandate(industrial).mandate_ref for industrial in industrials]
    before_last_run: set[str] = set()
    collected: set[str] = set()
    by_transfer: set[str] = set()
    for step in steps:
        if step[0] == "collect":
            _, who, price, debit = step
            answer = collect(market, industrials[who], price_cents=price,
                             method=PaymentMethod.SEPA_DD if debit else PaymentMethod.BANK_TRANSFER)
            (collected if debit else by_transfer).add(answer.payment_order_id)
        else:
            try:
                files.make_file(BankFileKind.DIRECT_DEBIT, storage=storage, config=config, user_id=None)
            except Conflict as refused:
                assert refused.details["reason"] == "nothing_due" and collected <= before_last_run
            before_last_run = set(collected)
    links = list(BankFileOrder.select())
    filed = [link.payment_order_id for link in links]
    assert len(filed) == len(set(filed)) and set(filed) == before_last_run  # exactly once, nothing else
    for order in PaymentOrder.select().where(PaymentOrder.id.in_(list(collected | by_transfer))):
        assert order.settlement == ("in_file" if order.id in before_last_run else "unsent")
    sequence_by_mandate: dict[str, list[str]] = {ref: [] for ref in mandates}
    for file in BankFile.select().order_by(BankFile.created_at, BankFile.id):
        header, transactions = read_debits(storage.read_bytes(files.STORAGE_CONTEXT, file.storage_key))
        mine = {link.payment_order_id: link for link in links if link.file_id == file.id}
        assert file.control_sum_cents == header["controlSumCents"] == sum(t.amount_cents for t in transactions) == sum(
            link.amount_cents for link in mine.values())
        assert file.count == header["count"] == len(transactions) == len(mine)
        assert {order_id_of(t.end_to_end_id) for t in transactions} == set(mine)
        for t in sorted(transactions, key=lambda t: (t.sequence_type != "FRST")):
            sequence_by_mandate[t.mandate_ref].append(t.sequence_type)
    for sequence in sequence_by_mandate.values():
        assert sequence == ["FRST", *["RCUR"] * (len(sequence) - 1)][:len(sequence)]
