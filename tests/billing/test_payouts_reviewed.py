"""Payouts and refunds only move money received, to accounts reviewed (API.md, wave 4): a payout
waits for the customer's money and pays the account approved at KYB when it was made, never an
IBAN typed since; an IBAN change sends the KYB back to review, e-mails the managers and holds the
organization's unsent orders until an admin approves it again; a file carries what can go and
answers the rest; a refund without a profile IBAN goes to the mandate's account."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from backend import clock
from backend.audit import SecurityEvent
from backend.billing import corrections, creditor_accounts, payouts, sepa_mandates, store_share
from backend.billing.bank import files, statements
from backend.billing.collection import collect
from backend.billing.models import AuditEntry, BankFileKind, Invoice, PaymentOrder, SepaMandate
from backend.billing.self_billing import acceptance, scheduler
from backend.billing.self_billing.invoice import catch_up
from backend.email.messages import EmailMessage
from backend.errors import Conflict
from backend.identity import bank_details, squatting
from backend.identity.models import BillingProfile, Organization
from backend.onboarding.models import SignatureRequest
from backend.runtime import current_runtime
from tests.billing.bank.data import NS, bank_config, read_transfers, refund, valid_against_schema
from tests.billing.bank.statements_data import books_breaches, credit, returned, statement
from tests.billing.bank.statements_data import config as statement_config
from tests.billing.helpers import Market, approved_org, customer_paid
from tests.billing.self_billing.data import AFTER, admin_headers, collected, sign_mandate
from tests.factories import add_billing_profile, add_member, make_user, signed_in

DISTRIBUTOR_IBAN = "FR1420041010050500013M02606"
INDUSTRIAL_IBAN = "FR7630001007941234567890185"
CHANGED_IBAN = "DE89370400440532013000"


@pytest.fixture
def sale(config):
    """A sale collected by bank transfer (not yet received), self-billed and accepted; the
    distributor's manager and billing member."""
    industrial = approved_org("industrial", iban=INDUSTRIAL_IBAN)
    distributor = approved_org("distributor", iban=DISTRIBUTOR_IBAN)
    manager, billing = make_user(), make_user()
    add_member(manager, distributor)
    add_member(billing, distributor, role="billing")
    sign_mandate(distributor)
    reservation = collected(Market(), industrial, distributor)
    with clock.frozen_at(AFTER):
        assert scheduler.self_bill_due_reservations(config=config)["issued"] == 1
    invoice = Invoice.get(Invoice.reservation_id == reservation.id, Invoice.kind == "supplier_self_billed")
    acceptance.accept(invoice_number=invoice.number, organization_id=distributor.id, user_id=None)
    return SimpleNamespace(reservation=reservation, distributor=distributor, industrial=industrial, manager=manager,
                           billing=billing, invoice=invoice)


def received(reservation_id: str) -> None:
    """The customer's transfer booked: a statement line naming the sale's invoice, imported."""
    order = PaymentOrder.get(PaymentOrder.reservation_id == reservation_id, PaymentOrder.kind == "reservation_total")
    assert statements.import_statement(statement(credit(order, by_number=True)), config=statement_config(),
                                       user_id=None).matched == 1


def pay(reservation_id: str, key: str = "payout-1"):
    return payouts.pay_out(reservation_id=reservation_id, key=key, user_id=None)


def transfers():
    """A credit transfer run: `(file, held, transactions)` (the XML read back against its schema)."""
    made = files.make_file(BankFileKind.CREDIT_TRANSFER, storage=current_runtime().storage, config=bank_config(),
                           user_id=None)
    xml = current_runtime().storage.read_bytes(files.STORAGE_CONTEXT, made.file.storage_key)
    return made.file, made.held, read_transfers(xml)[1]


def refused_transfers() -> dict:
    with pytest.raises(Conflict) as caught:
        transfers()
    assert caught.value.details["reason"] == "nothing_due"
    return caught.value.details


def profile_body(organization: Organization, *, iban: str | None, **overrides) -> dict:
    """The body of a PUT of the billing profile `tests.factories.add_billing_profile` made, with `iban`."""
    profile = BillingProfile.get_by_id(organization.id)
    body = {"legalName": profile.legal_name, "siret": profile.siret, "vatNumber": None,
            "address": {"street": profile.street, "postalCode": profile.postal_code, "city": profile.city,
                        "country": profile.country},
            "iban": iban, "signer": {"firstName": profile.signer_first_name, "lastName": profile.signer_last_name,
                                     "email": profile.signer_email, "phone": "06 12 34 56 78",
                                     "onRegistryExtract": True}}
    return {**body, **overrides}


def put_profile(client, user, organization: Organization, **body):
    return client.simulate_put(f"/api/organizations/{organization.id}/billing-profile", headers=signed_in(user),
                               json=profile_body(organization, **body))


def re_approve(client, organization: Organization):
    """The admin approves the KYB again (its onboarding envelope signed)."""
    SignatureRequest.create(organization=organization.id, status="signed", identity_verification_policy="qualified",
                            signature_level="qualified_electronic_signature", signer_on_registry_extract=True,
                            created_at=clock.now(), status_changed_at=clock.now())
    answer = client.simulate_post(f"/api/admin/organizations/{organization.id}/review", headers=admin_headers(),
                                  json={"status": "approved", "note": "nouvel IBAN vérifié"})
    assert answer.status_code == 200, answer.json


def test_a_payout_waits_for_the_customers_money_and_goes_once_the_statement_booked_it(client, sale, log_lines):
    assert sale.invoice.status == "issued"  # the self-billed invoice is issued on time all the same
    with pytest.raises(Conflict) as early:
        pay(sale.reservation.id)
    assert early.value.details["reason"] == "customer_payment_not_received"
    assert not PaymentOrder.select().where(PaymentOrder.kind == "supplier_payout").exists()
    order = PaymentOrder.get(PaymentOrder.reservation_id == sale.reservation.id,
                             PaymentOrder.kind == "reservation_total")
    # The admin's list of the payouts waiting for money, and its daily line.
    waiting = client.simulate_get("/api/admin/billing/payouts/waiting", headers=admin_headers()).json["data"]["items"]
    assert [(w["reservationId"], w["selfBilledInvoiceNumber"], w["paymentOrderId"], w["settlement"]) for w in waiting
            ] == [(sale.reservation.id, sale.invoice.number, order.id, "unsent")]
    assert payouts.log_waiting_for_money() == 1
    assert [line["count"] for line in log_lines() if line["scope"] == "billing.supplier.payout.waiting"] == [1]
    assert statements.import_statement(statement(credit(order, by_number=True)), config=statement_config(),
                                       user_id=None).matched == 1
    assert payouts.waiting_for_money() == []
    paid = pay(sale.reservation.id, key="payout-2")
    recorded = PaymentOrder.get_by_id(paid.payment_order_id)
    assert (recorded.creditor_iban, recorded.creditor_name) == (
        DISTRIBUTOR_IBAN, BillingProfile.get_by_id(sale.distributor.id).legal_name)
    assert books_breaches() == []


def test_an_iban_changed_after_the_payout_is_never_paid_and_the_order_waits_for_the_review(client, sale):
    received(sale.reservation.id)
    paid = pay(sale.reservation.id)
    answer = put_profile(client, sale.manager, sale.distributor, iban=CHANGED_IBAN)
    assert answer.status_code == 200, answer.json
    assert Organization.get_by_id(sale.distributor.id).kyb_status == "submitted"
    # The managers are told, both IBANs masked but for their last four characters; audited.
    [mail] = EmailMessage.select().where(EmailMessage.template == "iban_changed")
    assert mail.to_address == sale.manager.email
    assert "2606" in mail.body_text and "3000" in mail.body_text
    assert DISTRIBUTOR_IBAN not in mail.body_text and CHANGED_IBAN not in mail.body_text
    event = SecurityEvent.get(SecurityEvent.event == "organization.bank_details.changed")
    assert event.details["accountAfter"].endswith("3000") and CHANGED_IBAN not in str(event.details)
    # The order is held back, listed with its reason; no file pays the new IBAN.
    held = [{"paymentOrderId": paid.payment_order_id, "reason": "kyb_not_approved"}]
    assert refused_transfers()["held"] == held
    listed = client.simulate_get("/api/admin/billing/bank/held", headers=admin_headers()).json["data"]["items"]
    assert [(i["paymentOrderId"], i["reason"], i["kind"]) for i in listed] == [
        (paid.payment_order_id, "kyb_not_approved", "supplier_payout")]
    # The admin approves again: the order goes, once, to the account approved when it was made.
    re_approve(client, sale.distributor)
    file, held, paid_to = transfers()
    assert (file.count, held, [t.iban for t in paid_to]) == (1, [], [DISTRIBUTOR_IBAN])
    assert PaymentOrder.get_by_id(paid.payment_order_id).settlement == "in_file"
    assert refused_transfers()["held"] == []
    assert books_breaches() == []  # `vitrine accounting verify` clean


def test_the_admin_gives_a_held_order_the_newly_approved_account_explicitly(client, sale):
    customer_paid(sale.reservation.id)
    paid = pay(sale.reservation.id)
    assert put_profile(client, sale.manager, sale.distributor, iban=CHANGED_IBAN).status_code == 200
    path = f"/api/admin/billing/bank/held/{paid.payment_order_id}/account"
    refused = client.simulate_post(path, headers=admin_headers())
    assert (refused.status_code, refused.json["error"]["details"]["reason"]) == (409, "kyb_not_approved")
    re_approve(client, sale.distributor)
    answer = client.simulate_post(path, headers=admin_headers())
    assert answer.status_code == 200, answer.json
    assert answer.json["data"]["paymentOrder"]["creditorIban"] == CHANGED_IBAN
    audit = AuditEntry.get(AuditEntry.action == "billing.bank.order.account_refreshed")
    assert audit.payment_order_id == paid.payment_order_id and audit.details["accountAfter"].endswith("3000")
    assert [t.iban for t in transfers()[2]] == [CHANGED_IBAN]


def test_no_payout_while_the_distributors_kyb_is_under_review(client, sale):
    customer_paid(sale.reservation.id)
    assert put_profile(client, sale.manager, sale.distributor, iban=CHANGED_IBAN).status_code == 200
    with pytest.raises(Conflict) as refused:
        pay(sale.reservation.id)
    assert refused.value.details["reason"] == "kyb_not_approved"
    assert not PaymentOrder.select().where(PaymentOrder.kind == "supplier_payout").exists()


def test_only_a_manager_changes_the_bank_details(client, sale):
    refused = put_profile(client, sale.billing, sale.distributor, iban=CHANGED_IBAN)
    assert (refused.status_code, refused.json["error"]["details"]["reason"]) == (403, "bank_details_manager_only")
    removed = put_profile(client, sale.billing, sale.distributor, iban=None)
    assert removed.status_code == 403
    assert BillingProfile.get_by_id(sale.distributor.id).iban == DISTRIBUTOR_IBAN
    # The rest of the profile stays the billing member's to edit.
    kept = put_profile(client, sale.billing, sale.distributor, iban=DISTRIBUTOR_IBAN, billingEmail="compta@example.com")
    assert kept.status_code == 200, kept.json
    assert not EmailMessage.select().where(EmailMessage.template == "iban_changed").exists()


def test_one_creditor_without_an_account_holds_only_its_own_order(sale):
    received(sale.reservation.id)
    # The industrial (no mandate: it paid by transfer) approved without an IBAN: its refund has no account.
    BillingProfile.update(iban=None).where(BillingProfile.organization == sale.industrial.id).execute()
    bank_details.record_approved(sale.industrial.id)
    number = Invoice.get(Invoice.reservation_id == sale.reservation.id, Invoice.kind == "platform_sale").number
    refunded = refund(number, 10_000)
    paid = pay(sale.reservation.id)
    file, held, paid_to = transfers()
    assert [(h.payment_order_id, h.reason) for h in held] == [(refunded.payment_order_id, "creditor_account_missing")]
    assert (file.count, [t.iban for t in paid_to]) == (1, [DISTRIBUTOR_IBAN])
    assert PaymentOrder.get_by_id(paid.payment_order_id).settlement == "in_file"
    assert books_breaches() == []


def test_a_direct_debit_customer_without_a_profile_iban_is_refunded_to_its_mandates_account(client, config):
    industrial = approved_org("industrial", iban=None)
    mandate = SepaMandate.create(organization_id=industrial.id, mandate_ref="VTR-REFUND-01", iban=INDUSTRIAL_IBAN,
                                 signed_at=clock.now())
    reservation = Market().reservation(industrial, approved_org("distributor"))
    answer = client.simulate_post(f"/api/admin/billing/reservations/{reservation.id}/collect",
                                  headers={**admin_headers(), "Idempotency-Key": "no-method"})  # no method asked
    assert answer.status_code == 200, answer.json
    order = PaymentOrder.get_by_id(answer.json["data"]["paymentOrderId"])
    assert (order.method, order.mandate_ref) == ("sepa_dd", mandate.mandate_ref)
    refunded = refund(answer.json["data"]["invoiceNumber"], 5_000)
    assert PaymentOrder.get_by_id(refunded.payment_order_id).creditor_iban == INDUSTRIAL_IBAN
    assert [t.iban for t in transfers()[2]] == [INDUSTRIAL_IBAN]


def test_the_mandates_own_iban_entered_again_keeps_the_mandate_another_one_ends_it(client):
    industrial = approved_org("industrial", iban=INDUSTRIAL_IBAN)
    manager = make_user()
    add_member(manager, industrial)
    mandate = SepaMandate.create(organization_id=industrial.id, mandate_ref="VTR-KEEP-01", iban=INDUSTRIAL_IBAN,
                                 signed_at=clock.now())
    for iban in (None, INDUSTRIAL_IBAN):  # removed, then the mandate's own entered again
        assert put_profile(client, manager, industrial, iban=iban).status_code == 200
        assert sepa_mandates.end_active_mandates(industrial.id, reason="iban_changed") == 0
    assert sepa_mandates.active_mandate(industrial.id).id == mandate.id
    assert sepa_mandates.default_method(industrial.id) == "sepa_dd"
    assert put_profile(client, manager, industrial, iban=CHANGED_IBAN).status_code == 200
    assert sepa_mandates.end_active_mandates(industrial.id, reason="iban_changed") == 1
    assert sepa_mandates.default_method(industrial.id) == "bank_transfer"


def test_a_client_may_still_ask_for_a_bank_transfer_with_a_mandate(client):
    industrial = approved_org("industrial", iban=INDUSTRIAL_IBAN)
    SepaMandate.create(organization_id=industrial.id, mandate_ref="VTR-ASK-01", iban=INDUSTRIAL_IBAN,
                       signed_at=clock.now())
    reservation = Market().reservation(industrial, approved_org("distributor"))
    answer = client.simulate_post(f"/api/admin/billing/reservations/{reservation.id}/collect",
                                  headers={**admin_headers(), "Idempotency-Key": "asked"},
                                  json={"paymentMethod": "bank_transfer"})
    assert answer.status_code == 200, answer.json
    assert PaymentOrder.get_by_id(answer.json["data"]["paymentOrderId"]).method == "bank_transfer"


def test_a_debit_returned_after_the_payout_becomes_the_distributors_debt_kept_back_next_time(config):
    """docs/bank.md: the bank returns a debit after the store was paid (the customer's refund right);
    the admin credits the store share (a supplier credit note), the distributor's debt, kept back
    from its next payout."""
    industrial, distributor = approved_org("industrial"), approved_org("distributor", iban=DISTRIBUTOR_IBAN)
    SepaMandate.create(organization_id=industrial.id, mandate_ref="VTR-RETURN-01", iban=INDUSTRIAL_IBAN,
                       signed_at=clock.now())
    sign_mandate(distributor)
    market, sales = Market(), []
    for day in (0, 1):
        reservation = market.reservation(industrial, distributor, day=day)
        answer = collect.collect(reservation_id=reservation.id, industrial_organization_id=industrial.id,
                                 method=None, key=f"k-{reservation.id}", user_id=None, config=config)
        sales.append((reservation.id, PaymentOrder.get_by_id(answer.payment_order_id)))
    assert {order.method for _, order in sales} == {"sepa_dd"}  # the mandate's, no method asked
    statements.import_statement(statement(*(credit(order) for _, order in sales)), config=statement_config(),
                                user_id=None)
    for reservation_id, _ in sales:
        catch_up(reservation_id=reservation_id, user_id=None, config=config)
    first = payouts.pay_out(reservation_id=sales[0][0], key="first", user_id=None, reason="modèle")
    # Four weeks later the customer has the first debit refunded (MD06): the store was paid already.
    assert statements.import_statement(statement(returned(sales[0][1], "MD06")), config=statement_config(),
                                       user_id=None).returned == 1
    credited = corrections.credit_in_full(invoice_number=first.invoice_number, user_id=None, config=config,
                                          reason="Prélèvement remboursé au client après le versement")
    assert credited.invoice_status == "credited"
    assert store_share.outstanding_debt(distributor.id).cents == first.amount_cents
    second = payouts.pay_out(reservation_id=sales[1][0], key="second", user_id=None, reason="modèle")
    assert second.deducted_cents == first.amount_cents and second.amount_cents == 0
    assert store_share.outstanding_debt(distributor.id).cents == 0
    assert books_breaches() == []


DISTRIBUTOR_BIC = "CEPAFRPP751"


def creditor_agents(xml: bytes) -> dict[str, str | None]:
    """Each transfer's creditor IBAN and its creditor agent's BIC (None: IBAN only), the file
    validated against its schema."""
    root = valid_against_schema(xml, "pain.001.001.09")
    return {tx.findtext("t:CdtrAcct/t:Id/t:IBAN", namespaces=NS): tx.findtext("t:CdtrAgt/t:FinInstnId/t:BICFI",
                                                                             namespaces=NS)
            for tx in root.iterfind("t:CstmrCdtTrfInitn/t:PmtInf/t:CdtTrfTxInf", NS)}


def test_the_bic_is_checked_and_only_a_manager_enters_it(client, sale):
    invalid = put_profile(client, sale.manager, sale.distributor, iban=DISTRIBUTOR_IBAN, bic="CEPAZZPP")
    assert (invalid.status_code, list(invalid.json["error"]["details"]["fields"])) == (400, ["bic"])
    alone = put_profile(client, sale.manager, sale.distributor, iban=None, bic=DISTRIBUTOR_BIC)
    assert (alone.status_code, list(alone.json["error"]["details"]["fields"])) == (400, ["bic"])
    refused = put_profile(client, sale.billing, sale.distributor, iban=DISTRIBUTOR_IBAN, bic=DISTRIBUTOR_BIC)
    assert (refused.status_code, refused.json["error"]["details"]["reason"]) == (403, "bank_details_manager_only")
    entered = put_profile(client, sale.manager, sale.distributor, iban=DISTRIBUTOR_IBAN, bic="cepa fr pp 751")
    assert entered.status_code == 200, entered.json
    assert entered.json["data"]["billingProfile"]["bic"] == DISTRIBUTOR_BIC
    # The BIC is part of the account an admin approves: entering it reopens the review.
    assert Organization.get_by_id(sale.distributor.id).kyb_status == "submitted"
    assert bank_details.approved_account(sale.distributor.id).bic is None


def test_the_approved_bic_is_recorded_on_the_payout_and_is_the_files_creditor_agent(client, sale):
    assert put_profile(client, sale.manager, sale.distributor, iban=DISTRIBUTOR_IBAN,
                       bic=DISTRIBUTOR_BIC).status_code == 200
    re_approve(client, sale.distributor)
    customer_paid(sale.reservation.id)
    paid = pay(sale.reservation.id)
    assert PaymentOrder.get_by_id(paid.payment_order_id).creditor_bic == DISTRIBUTOR_BIC
    # A BIC typed since is not the approved one: the file pays the account as approved.
    assert put_profile(client, sale.manager, sale.distributor, iban=DISTRIBUTOR_IBAN,
                       bic="BNPAFRPP").status_code == 200
    re_approve(client, sale.distributor)
    number = Invoice.get(Invoice.reservation_id == sale.reservation.id, Invoice.kind == "platform_sale").number
    refund(number, 10_000)  # the industrial, approved without a BIC: IBAN only, valid SEPA all the same
    file, held, _ = transfers()
    assert (file.count, held) == (2, [])
    xml = current_runtime().storage.read_bytes(files.STORAGE_CONTEXT, file.storage_key)
    assert creditor_agents(xml) == {DISTRIBUTOR_IBAN: DISTRIBUTOR_BIC, INDUSTRIAL_IBAN: None}


OWNER_IBAN = "FR7630004000031234567890143"


def test_an_organization_given_back_after_squatting_never_pays_the_squatters_account(client, sale):
    """The squatter's approved account is voided by the reassign: its unsent payout is held with its
    reason, still after the owner's approval, until the admin gives it the owner's account."""
    received(sale.reservation.id)
    paid = pay(sale.reservation.id)
    owner = make_user()
    answer = client.simulate_post(f"/api/admin/organizations/{sale.distributor.id}/reassign", headers=admin_headers(),
                                  json={"userId": owner.id, "note": "SIREN usurpé, rendu au dirigeant"})
    assert answer.status_code == 200, answer.json
    assert bank_details.approved_account(sale.distributor.id) is None
    event = SecurityEvent.get(SecurityEvent.event == "admin.organization.reassigned")
    assert event.details["voidedAccount"].endswith("2606") and DISTRIBUTOR_IBAN not in str(event.details)
    held = [{"paymentOrderId": paid.payment_order_id, "reason": "creditor_account_voided"}]
    assert refused_transfers()["held"] == held
    listed = client.simulate_get("/api/admin/billing/bank/held", headers=admin_headers()).json["data"]["items"]
    assert [(i["paymentOrderId"], i["reason"]) for i in listed] == [(paid.payment_order_id, "creditor_account_voided")]
    # The owner's profile approved: the order still waits for the admin's explicit refresh.
    add_billing_profile(sale.distributor, iban=OWNER_IBAN)
    re_approve(client, sale.distributor)
    assert refused_transfers()["held"] == held
    refreshed = client.simulate_post(f"/api/admin/billing/bank/held/{paid.payment_order_id}/account",
                                     headers=admin_headers())
    assert refreshed.json["data"]["paymentOrder"]["creditorIban"] == OWNER_IBAN
    file, held_now, paid_to = transfers()
    assert (file.count, held_now, [t.iban for t in paid_to]) == (1, [], [OWNER_IBAN])
    assert books_breaches() == []


def test_a_refund_never_falls_back_on_a_mandate_signed_before_the_account_was_voided(config):
    """A direct-debit customer given back after squatting: the squatter's mandate is not its account."""
    industrial = approved_org("industrial", iban=None)
    SepaMandate.create(organization_id=industrial.id, mandate_ref="VTR-SQUAT-01", iban=CHANGED_IBAN,
                       signed_at=clock.now())
    reservation = Market().reservation(industrial, approved_org("distributor"))
    answer = collect.collect(reservation_id=reservation.id, industrial_organization_id=industrial.id, method=None,
                             key="squatted", user_id=None, config=config)
    sale_id = PaymentOrder.get_by_id(answer.payment_order_id).invoice_id
    assert creditor_accounts.creditor_account(industrial.id, paid_invoice_id=sale_id)["creditor_iban"] == CHANGED_IBAN
    squatting.reassign_organization(organization_id=industrial.id, user_id=make_user().id, note="rendu",
                                    actor_user_id=None)
    assert creditor_accounts.creditor_account(industrial.id, paid_invoice_id=sale_id)["creditor_iban"] is None
