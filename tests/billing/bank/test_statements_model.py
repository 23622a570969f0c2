"""The model of the bank statements: random sequences of statements (new, imported again, repeating
lines of earlier ones), returned debits and collections again, on the real database. After every
step each payment order is settled by at most one line and returned by at most one, its settlement
is what the lines say, each customer owes exactly the returned debits not collected again, and
`vitrine accounting verify` finds the books clean.

Deterministic (a fixed seed, `BANK_MODEL_EXAMPLES` sequences of at most `STEPS` steps; 8 by default).
"""

from __future__ import annotations

import os
import uuid
from collections import Counter

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from backend.billing.accounting.chart import Account
from backend.billing.accounting.ledger import balance
from backend.billing.bank import statements
from backend.billing.collection import admin
from backend.billing.models import BankLine, FinancialRecord, PaymentMethod, PaymentOrder
from backend.db import transaction
from backend.identity.models import Organization
from tests.billing.bank.statements_data import books_breaches, collected, config, credit, returned, statement
from tests.billing.helpers import Market, booted_config

EXAMPLES = int(os.environ.get("BANK_MODEL_EXAMPLES", "8"))
STEPS = 8
CODES = ("AM04", "MD06", "MS02")


class _Rollback(Exception):
    pass


class BankModel(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self._savepoint = transaction()
        self._savepoint.__enter__()
        self.config = config()
        self.documents: list[bytes] = []
        self.entries: list[str] = []  # every line sent so far, to be repeated by a later statement
        self.keys = 0

    def teardown(self) -> None:
        self._savepoint.__exit__(_Rollback, _Rollback(), None)

    @initialize()
    def orders(self) -> None:
        market = Market()
        first = collected(market=market)
        industrial = Organization.get_by_id(first.organization_id)
        self.industrial = industrial
        self.orders = [first, collected(market=market, industrial=industrial),
                       collected(PaymentMethod.BANK_TRANSFER, market=market, industrial=industrial)]

    def _send(self, *entries: str) -> None:
        document = statement(*entries)
        answer = statements.import_statement(document, config=self.config, user_id=None)
        assert answer.lines == len(entries) and answer.matched + answer.returned + answer.unmatched == answer.lines
        self.documents.append(document)
        self.entries.extend(entries)

    @rule(data=st.data(), count=st.integers(1, 3))
    def a_statement(self, data, count) -> None:
        entries = []
        for _ in range(count):
            order = data.draw(st.sampled_from(self.orders))
            kind = data.draw(st.sampled_from(["credit", "by_number", "return", "credit_and_return", "short"]))
            ref = uuid.uuid4().hex[:16]
            if kind == "credit_and_return":  # booked, then disputed on the same day
                entries += [credit(order, ref=ref), returned(order, data.draw(st.sampled_from(CODES)))]
            elif kind == "return":
                entries.append(returned(order, data.draw(st.sampled_from(CODES)), ref=ref))
            elif kind == "short":
                entries.append(credit(order, amount=order.amount_cents - 1, ref=ref, by_number=True))
            else:
                entries.append(credit(order, ref=ref, by_number=kind == "by_number"))
        self._send(*entries)

    @precondition(lambda self: self.documents)
    @rule(data=st.data())
    def the_same_statement_again(self, data) -> None:
        document = data.draw(st.sampled_from(self.documents))
        statements.import_statement(document, config=self.config, user_id=None)

    @precondition(lambda self: self.entries)
    @rule(data=st.data())
    def a_statement_repeating_lines(self, data) -> None:
        """A camt.053 repeating lines a camt.054 brought (same bank references)."""
        self._send(*data.draw(st.lists(st.sampled_from(self.entries), min_size=1, max_size=3, unique=True)))

    def _due(self) -> list[PaymentOrder]:
        """The returned debits whose reservation is due again."""
        if not hasattr(self, "industrial"):
            return []
        return [o for o in PaymentOrder.select().where(PaymentOrder.id.in_([o.id for o in self.orders]),
                                                       PaymentOrder.settlement == "returned")
                if FinancialRecord.get_by_id(o.reservation_id).financial_status == "reservation_total_due"]

    @precondition(lambda self: self._due())
    @rule(data=st.data())
    def collect_again(self, data) -> None:
        order = data.draw(st.sampled_from(self._due()))
        self.keys += 1
        answer = admin.collect_on_behalf(reservation_id=order.reservation_id,
                                                    method=PaymentMethod.SEPA_DD, key=f"model-{self.keys}",
                                                    user_id=None, config=booted_config())
        self.orders.append(PaymentOrder.get_by_id(answer.payment_order_id))

    @invariant()
    def each_order_is_settled_and_returned_at_most_once_as_its_lines_say(self) -> None:
        if not hasattr(self, "industrial"):
            return
        ids = [o.id for o in self.orders]
        lines = Counter((line.payment_order_id, line.state) for line in BankLine.select().where(
            BankLine.payment_order_id.in_(ids)))
        invoiced = {order.reservation_id: order.amount_cents for order in self.orders}
        received = 0
        for order in PaymentOrder.select().where(PaymentOrder.id.in_(ids)):
            matched, returns = lines[(order.id, "matched")], lines[(order.id, "returned")]
            assert matched <= 1 and returns <= 1
            assert (order.settlement == "returned") == (returns == 1)
            assert (order.settlement == "settled") == (matched == 1 and returns == 0)
            assert (order.status == "failed") == (returns == 1)
            received += order.amount_cents if order.settlement == "settled" else 0
        # the customer owes what it was invoiced minus what the bank received (and kept)
        assert balance(Account.CUSTOMERS, self.industrial.siren) == sum(invoiced.values()) - received
        # 512 is the sum of the statements' movements; what nothing explains waits in 471
        moved = sum(line.amount_cents if line.direction == "credit" else -line.amount_cents
                    for line in BankLine.select())
        assert balance(Account.BANK) == moved
        assert -balance(Account.SUSPENSE) == sum(
            line.amount_cents if line.direction == "credit" else -line.amount_cents
            for line in BankLine.select().where(BankLine.state == "unmatched"))
        assert books_breaches() == []


TestBankModel = BankModel.TestCase
# derandomize: the sequences come from a fixed seed (the test's name), the same on every run.
TestBankModel.settings = settings(max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None, database=None,
                                  suppress_health_check=list(HealthCheck), derandomize=True)
