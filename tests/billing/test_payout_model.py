"""The model of payouts and the bank (API.md "Payouts and refunds only move money received, to
accounts reviewed"): random sequences of sales collected by bank transfer and self-billed, the
customer's money booked by the bank or not yet, payouts asked for, IBAN changes by a manager
(the KYB back to review), re-approvals by an admin, the admin's refresh of a held order's account,
and credit transfer runs; checked against a plain model after every step.

Invariants: no file pays an account that was not the approved one when its order recorded it, nor
an order of an organization under review; no payout goes before the customer's money is received,
nor exceeds what was received for its sale; every payout order is in a file or held, never lost, and
goes into the first run after its reason is lifted.
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
from backend.billing.models import BankFileKind, PaymentMethod, PaymentOrder, Settlement
from backend.billing.self_billing.invoice import catch_up
from backend.db import transaction
from backend.errors import Conflict
from backend.identity import organizations
from backend.identity.models import Organization
from backend.identity.principal import Principal
from backend.onboarding import kyb_review
from backend.onboarding.models import SignatureRequest
from backend.runtime import current_runtime
from tests.billing.bank.data import bank_config, read_transfers
from tests.billing.helpers import Market, approved_org, booted_config, customer_paid
from tests.billing.self_billing.data import sign_mandate
from tests.factories import add_member, make_admin, make_user

EXAMPLES = int(os.environ.get("PAYOUT_MODEL_EXAMPLES", "4"))
IBANS = ("FR1420041010050500013M02606", "DE89370400440532013000", "FR7630001007941234567890185")
MAX_SALES = 2


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
        self.recorded: dict[str, str] = {}  # payout order id -> the account approved when it was recorded
        self.filed: set[str] = set()

    def teardown(self) -> None:
        self._savepoint.__exit__(_Rollback, _Rollback(), None)

    @initialize()
    def parties(self) -> None:
        self.industrial, self.distributor = approved_org("industrial"), approved_org("distributor", iban=IBANS[0])
        self.approved, self.live, self.kyb_approved = IBANS[0], IBANS[0], True
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
        reservation_id = data.draw(st.sampled_from(sorted(set(self.sales) - self.received)))
        customer_paid(reservation_id)
        self.received.add(reservation_id)

    @precondition(lambda self: set(self.sales) - set(self.paid_out))
    @rule(data=st.data())
    def payout(self, data) -> None:
        reservation_id = data.draw(st.sampled_from(sorted(set(self.sales) - set(self.paid_out))))
        try:
            paid = payouts.pay_out(reservation_id=reservation_id, key=f"p-{reservation_id}-{len(self.recorded)}",
                                   user_id=None, reason="modèle")
        except Conflict as refused:
            reason = refused.details["reason"]
            assert reason == ("kyb_not_approved" if not self.kyb_approved else "customer_payment_not_received")
            assert reservation_id not in self.received or not self.kyb_approved
            return
        assert self.kyb_approved and reservation_id in self.received  # money received, account approved
        assert paid.amount_cents <= self.sales[reservation_id]
        self.paid_out[reservation_id] = paid.amount_cents
        self.recorded[paid.payment_order_id] = self.approved

    @rule(iban=st.sampled_from(IBANS))
    def change_iban(self, iban) -> None:
        current = organizations.billing_profile_of(self.distributor.id)
        profile = {"legalName": current.legal_name, "siret": current.siret, "vatNumber": None, "iban": iban,
                   "address": {"street": current.street, "postalCode": current.postal_code, "city": current.city,
                               "country": current.country},
                   "signer": {"firstName": current.signer_first_name, "lastName": current.signer_last_name,
                              "email": current.signer_email, "phone": current.signer_phone}}
        organizations.put_billing_profile(principal=self.manager, organization_id=self.distributor.id,
                                          profile=profile, signer_on_registry_extract=True)
        if iban != self.live:
            self.live, self.kyb_approved = iban, False  # back to review

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
        assert self.kyb_approved
        xml = current_runtime().storage.read_bytes(files.STORAGE_CONTEXT, made.file.storage_key)
        paid = {t.end_to_end_id: t.iban for t in read_transfers(xml)[1]}  # valid against the ISO schema
        orders = PaymentOrder.select().where(PaymentOrder.id.in_(list(due)))
        assert {order.id.replace("-", ""): self.recorded[order.id] for order in orders} == paid
        self.filed |= due

    # -- what always holds -------------------------------------------------------------------------

    @invariant()
    def the_database_agrees(self) -> None:
        if not hasattr(self, "distributor"):
            return
        assert (Organization.get_by_id(self.distributor.id).kyb_status == "approved") == self.kyb_approved
        for order in PaymentOrder.select().where(PaymentOrder.kind == "supplier_payout"):
            assert order.creditor_iban == self.recorded[order.id]
            assert order.settlement == (Settlement.IN_FILE if order.id in self.filed else Settlement.UNSENT)
            assert order.reservation_id in self.received and order.amount_cents <= self.sales[order.reservation_id]


TestPayoutModel = PayoutModel.TestCase
TestPayoutModel.settings = settings(max_examples=EXAMPLES, stateful_step_count=10, deadline=None, database=None,
                                    suppress_health_check=list(HealthCheck), derandomize=True)
