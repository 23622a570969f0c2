"""The model of payouts and the bank (API.md "Payouts and refunds only move money received, to
accounts reviewed"): random sequences of sales collected by bank transfer and self-billed, the
customer's transfer booked by the bank or never made, payouts asked for (again, too), changes of
the account (IBAN and BIC) by a manager (the KYB back to review), re-approvals by an admin, the
admin's refresh of a held order's account, and credit transfer runs; checked against a plain model
after every step.

Invariants, read from the database and the files themselves: no file pays an account (IBAN and
BIC) that was not the approved one when its order recorded it, nor an order of an organization
under review; no payout exceeds the money received for its sale (statement lines settling the
customer's payment) less what was already paid out for it, nor, summed, the money received for
the distributor's sales; every payout order is in a file or held, never lost, and goes into the
first run after its reason is lifted.
Deterministic (a fixed seed, `PAYOUT_MODEL_EXAMPLES` sequences, 4 by default).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from backend import clock
from backend.billing import payouts
from backend.billing.bank import files, transfers
from backend.billing.collection import collect
from backend.billing.models import BankFileKind, PaymentKind, PaymentMethod, PaymentOrder, PaymentStatus, Settlement
from backend.billing.self_billing.invoice import catch_up
from backend.db import transaction
from backend.errors import Conflict
from backend.identity import organizations
from backend.identity.models import Organization
from backend.identity.principal import Principal
from backend.onboarding import kyb_review
from backend.onboarding.models import SignatureRequest
from backend.runtime import current_runtime
from tests.billing.bank.data import NS, bank_config, valid_against_schema
from tests.billing.helpers import Market, approved_org, booted_config, customer_paid
from tests.billing.self_billing.data import sign_mandate
from tests.factories import add_member, make_admin, make_user

EXAMPLES = int(os.environ.get("PAYOUT_MODEL_EXAMPLES", "4"))
# The accounts a manager may enter: (IBAN, BIC or None).
ACCOUNTS = (("FR1420041010050500013M02606", None), ("DE89370400440532013000", "COBADEFFXXX"),
            ("FR7630001007941234567890185", "BNPAFRPPXXX"))
MAX_SALES = 2


def creditor_accounts_of(xml: bytes) -> dict[str, tuple[str, str | None]]:
    """Each transfer of a pain.001 (valid against its ISO 20022 schema) by end-to-end id: the
    creditor's IBAN and its agent's BIC (None: IBAN only)."""
    root = valid_against_schema(xml, "pain.001.001.09")
    return {tx.findtext("t:PmtId/t:EndToEndId", namespaces=NS): (
        tx.findtext("t:CdtrAcct/t:Id/t:IBAN", namespaces=NS), tx.findtext("t:CdtrAgt/t:FinInstnId/t:BICFI",
                                                                          namespaces=NS))
        for tx in root.iterfind("t:CstmrCdtTrfInitn/t:PmtInf/t:CdtTrfTxInf", NS)}


class _Rollback(Exception):
    pass


class PayoutModel(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self._savepoint = transaction()
        self._savepoint.__enter__()
        self.config = booted_config()
        self.sales: dict[str, int] = {}  # reservation id -> the customer's payment, including VAT
        self.received: set[str] = set()
        self.paid_out: dict[str, int] = {}  # reservation id -> amount paid out, including VAT
        # payout order id -> the account (IBAN, BIC) approved when it was recorded (or refreshed)
        self.recorded: dict[str, tuple[str, str | None]] = {}
        self.filed: set[str] = set()
        # what each file paid: (end-to-end id -> account, whether the distributor's KYB was approved)
        self.files: list[tuple[dict[str, tuple[str, str | None]], bool]] = []

    def teardown(self) -> None:
        self._savepoint.__exit__(_Rollback, _Rollback(), None)

    @initialize()
    def parties(self) -> None:
        self.industrial, self.distributor = approved_org("industrial"), approved_org("distributor",
                                                                                    iban=ACCOUNTS[0][0])
        self.approved, self.live, self.kyb_approved = ACCOUNTS[0], ACCOUNTS[0], True
        manager, self.admin = make_user(), make_admin()
        add_member(manager, self.distributor)
        self.manager = Principal(manager.id, manager.email, frozenset({"distributor"}), frozenset(),
                                 self.distributor.id, "manager")
        sign_mandate(self.distributor)
        SignatureRequest.create(organization=self.distributor.id, status="signed", signer_on_registry_extract=True,
                                identity_verification_policy="qualified",
                                signature_level="qualified_electronic_signature", status_changed_at=clock.now())
        self.market = Market()

    # -- the steps -------------------------------------------------------------------------------

    @precondition(lambda self: len(self.sales) < MAX_SALES and self.kyb_approved)
    @rule(price=st.sampled_from([100_000, 1_001]))
    def sale(self, price) -> None:
        reservation = self.market.reservation(self.industrial, self.distributor, price_cents=price)
        answer = collect.collect(reservation_id=reservation.id, industrial_organization_id=self.industrial.id,
                                 method=PaymentMethod.BANK_TRANSFER, key=f"c-{reservation.id}", user_id=None,
                                 config=self.config)
        catch_up(reservation_id=reservation.id, user_id=None, config=self.config)  # issued at once, paid or not
        self.sales[reservation.id] = PaymentOrder.get_by_id(answer.payment_order_id).amount_cents

    @precondition(lambda self: set(self.sales) - self.received)
    @rule(data=st.data())
    def customer_pays(self, data) -> None:
        self.customer_pays_for(data.draw(st.sampled_from(sorted(set(self.sales) - self.received))))

    def customer_pays_for(self, reservation_id: str) -> None:
        customer_paid(reservation_id)
        self.received.add(reservation_id)

    @precondition(lambda self: set(self.sales) - set(self.paid_out))
    @rule(data=st.data())
    def payout(self, data) -> None:
        self.payout_of(data.draw(st.sampled_from(sorted(set(self.sales) - set(self.paid_out)))))

    def payout_of(self, reservation_id: str) -> None:
        try:
            paid = payouts.pay_out(reservation_id=reservation_id, key=f"p-{reservation_id}-{len(self.recorded)}",
                                   user_id=None, reason="modèle")
        except Conflict as refused:
            reason = refused.details["reason"]
            assert reason == ("kyb_not_approved" if not self.kyb_approved else "customer_payment_not_received")
            assert reservation_id not in self.received or not self.kyb_approved
            return
        self.paid_out[reservation_id] = paid.amount_cents  # the invariants judge it against the money received
        self.recorded[paid.payment_order_id] = self.approved

    @precondition(lambda self: self.paid_out)
    @rule(data=st.data())
    def payout_again(self, data) -> None:
        """A sale paid out once is never paid out twice (a new key: not a replay)."""
        self.payout_again_of(data.draw(st.sampled_from(sorted(self.paid_out))))

    def payout_again_of(self, reservation_id: str) -> None:
        try:
            paid = payouts.pay_out(reservation_id=reservation_id, key=f"again-{reservation_id}-{len(self.files)}",
                                   user_id=None, reason="modèle")
        except Conflict as refused:
            assert refused.details["reason"] == "not_settlement_pending"
            return
        if paid.payment_order_id:  # the invariants say what is wrong with it
            self.recorded[paid.payment_order_id] = self.approved

    @rule(account=st.sampled_from(ACCOUNTS))
    def change_account(self, account) -> None:
        iban, bic = account
        current = organizations.billing_profile_of(self.distributor.id)
        profile = {"legalName": current.legal_name, "siret": current.siret, "vatNumber": None, "iban": iban, "bic": bic,
                   "address": {"street": current.street, "postalCode": current.postal_code, "city": current.city,
                               "country": current.country},
                   "signer": {"firstName": current.signer_first_name, "lastName": current.signer_last_name,
                              "email": current.signer_email, "phone": current.signer_phone}}
        organizations.put_billing_profile(principal=self.manager, organization_id=self.distributor.id,
                                          profile=profile, signer_on_registry_extract=True)
        if account != self.live:
            self.live, self.kyb_approved = account, False  # back to review

    @precondition(lambda self: not self.kyb_approved)
    @rule()
    def re_approve(self) -> None:
        kyb_review.review_organization(organization_id=self.distributor.id, status="approved", note="vu",
                                       actor_user_id=self.admin.id)
        self.approved, self.kyb_approved = self.live, True

    @precondition(lambda self: self.kyb_approved and set(self.recorded) - self.filed)
    @rule(data=st.data())
    def refresh(self, data) -> None:
        order_id = data.draw(st.sampled_from(sorted(set(self.recorded) - self.filed)))
        transfers.refresh_account(order_id, user_id=self.admin.id)
        self.recorded[order_id] = self.approved

    @rule()
    def transfer_run(self) -> None:
        due = {order_id for order_id in self.recorded if order_id not in self.filed}
        try:
            made = files.make_file(BankFileKind.CREDIT_TRANSFER, storage=current_runtime().storage,
                                   config=bank_config(), user_id=None)
        except Conflict as refused:
            assert refused.details["reason"] == "nothing_due"
            assert not due or not self.kyb_approved  # a due order of an approved organization always goes
            assert {h["paymentOrderId"] for h in refused.details["held"]} == due
            return
        xml = current_runtime().storage.read_bytes(files.STORAGE_CONTEXT, made.file.storage_key)
        paid = creditor_accounts_of(xml)
        self.files.append((paid, self.kyb_approved))
        assert set(paid) == {order_id.replace("-", "") for order_id in due}  # every order due goes, once
        self.filed |= due

    # -- what always holds -------------------------------------------------------------------------

    @invariant()
    def no_file_pays_an_account_that_was_not_approved_when_its_order_was_made(self) -> None:
        for paid, kyb_approved in self.files:
            assert kyb_approved, "a file paid an organization whose KYB was under review"
            recorded = {order_id.replace("-", ""): account for order_id, account in self.recorded.items()}
            assert {e2e: recorded[e2e] for e2e in paid} == paid

    @invariant()
    def no_payout_exceeds_the_money_received_less_what_was_paid_out(self) -> None:
        """Per sale, the payouts in order: each at most what the bank booked of the customer's payment
        less the payouts before it; and summed over the distributor's sales."""
        received, paid_out = {}, {}
        for order in PaymentOrder.select().where(PaymentOrder.status == PaymentStatus.PAID).order_by(
                PaymentOrder.created_at, PaymentOrder.id):
            if order.kind == PaymentKind.RESERVATION_TOTAL and order.settlement == Settlement.SETTLED:
                received[order.reservation_id] = received.get(order.reservation_id, 0) + order.amount_cents
        for order in PaymentOrder.select().where(PaymentOrder.kind == PaymentKind.SUPPLIER_PAYOUT).order_by(
                PaymentOrder.created_at, PaymentOrder.id):
            before = paid_out.get(order.reservation_id, 0)
            assert order.amount_cents <= received.get(order.reservation_id, 0) - before, (
                f"a payout of {order.amount_cents} for a sale of which {received.get(order.reservation_id, 0)} "
                f"was received and {before} paid out")
            paid_out[order.reservation_id] = before + order.amount_cents
        assert sum(paid_out.values()) <= sum(received.values())

    @invariant()
    def the_database_agrees(self) -> None:
        if not hasattr(self, "distributor"):
            return
        assert (Organization.get_by_id(self.distributor.id).kyb_status == "approved") == self.kyb_approved
        for order in PaymentOrder.select().where(PaymentOrder.kind == "supplier_payout"):
            assert (order.creditor_iban, order.creditor_bic) == self.recorded[order.id]
            assert order.settlement == (Settlement.IN_FILE if order.id in self.filed else Settlement.UNSENT)


TestPayoutModel = PayoutModel.TestCase
TestPayoutModel.settings = settings(max_examples=EXAMPLES, stateful_step_count=10, deadline=None, database=None,
                                    suppress_health_check=list(HealthCheck), derandomize=True)


def test_the_model_replays_a_payout_held_by_an_account_change_and_one_before_the_money():
    """The sequences the invariants are about, replayed step by step: a payout recorded, the account
    changed and approved again before the file (the file pays the account recorded, never the new
    one), then a sale whose customer has not paid (its payout refused)."""
    model = PayoutModel()
    try:
        model.parties()
        sale = lambda n: list(model.sales)[n]  # noqa: E731 (the n-th sale made)
        steps = [lambda: model.sale(100_000), lambda: model.customer_pays_for(sale(0)),
                 lambda: model.payout_of(sale(0)), lambda: model.change_account(ACCOUNTS[1]), model.transfer_run,
                 model.re_approve, model.transfer_run, lambda: model.sale(1_001), lambda: model.payout_of(sale(1)),
                 lambda: model.payout_again_of(sale(0))]
        for step in steps:
            step()
            model.no_file_pays_an_account_that_was_not_approved_when_its_order_was_made()
            model.no_payout_exceeds_the_money_received_less_what_was_paid_out()
            model.the_database_agrees()
        assert [len(paid) for paid, _ in model.files] == [1] and len(model.paid_out) == 1
    finally:
        model.teardown()

