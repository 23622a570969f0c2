"""Billing over HTTP: collect with Idempotency-Key, summary, invoice list and download access
matrix, refunds and credit notes."""

from __future__ import annotations

import hashlib
import threading
import time

import pytest

from backend.billing import idempotency
from backend.billing.collection.collect import COLLECT_ROUTE
from backend.billing.documents.stored_pdf import STORAGE_CONTEXT as INVOICE_PDF_CONTEXT
from backend.billing.models import FinancialRecord, Invoice
from backend.db import database, transaction
from backend.identity.models import BillingProfile
from backend.marketplace.models import Reservation
from backend.runtime import current_runtime
from tests.billing.helpers import Market, approved_org
from tests.factories import add_member, make_admin, make_user, signed_in

PDF = b"%PDF-1.7\n% test invoice\n%%EOF\n"


class Party:
    def __init__(self, actor_type: str, role: str = "manager") -> None:
        self.organization = approved_org(actor_type)
        self.user = make_user()
        add_member(self.user, self.organization, role)
        self.headers = signed_in(self.user, self.organization)


@pytest.fixture
def world():
    industrial, distributor = Party("industrial"), Party("distributor")
    reservation = Market().reservation(industrial.organization, distributor.organization, price_cents=100_000)
    return industrial, distributor, reservation


def collect(client, reservation_id, headers, key="key-1", method="bank_transfer"):
    extra = {"Idempotency-Key": key} if key is not None else {}
    return client.simulate_post(f"/api/billing/reservations/{reservation_id}/collect", json={"paymentMethod": method},
                                headers={**headers, **extra})


def test_collect_replay_mismatch_and_missing_key(client, world):
    industrial, _, reservation = world
    missing = collect(client, reservation.id, industrial.headers, key=None)
    assert missing.status_code == 400 and missing.json["error"]["code"] == "VALIDATION_ERROR"
    first = collect(client, reservation.id, industrial.headers)
    assert first.status_code == 200, first.json
    data = first.json["data"]
    assert set(data) == {"reservationId", "paymentOrderId", "invoiceNumber", "financialStatus", "paymentStatus",
                         "idempotent"}
    assert (data["financialStatus"], data["paymentStatus"], data["idempotent"]) == (
        "reservation_total_paid", "paid", False)
    replay = collect(client, reservation.id, industrial.headers)
    assert replay.status_code == 200 and replay.json["data"] == {**data, "idempotent": True}
    other = collect(client, reservation.id, industrial.headers, method="sepa_dd")
    assert other.status_code == 422 and other.json["error"]["code"] == "IDEMPOTENCY_KEY_REUSED"
    again = collect(client, reservation.id, industrial.headers, key="key-2")
    assert again.status_code == 409 and again.json["error"]["details"]["reason"] == "not_due"


def test_collect_refusals(client, world):
    industrial, distributor, reservation = world
    bad = client.simulate_post(f"/api/billing/reservations/{reservation.id}/collect", json={"paymentMethod": "cash"},
                               headers={**industrial.headers, "Idempotency-Key": "k"})
    assert bad.status_code == 400
    sepa = collect(client, reservation.id, industrial.headers, method="sepa_dd")
    assert sepa.status_code == 409 and sepa.json["error"]["details"]["reason"] == "sepa_mandate_missing"
    member = make_user()
    add_member(member, industrial.organization, "member")
    assert collect(client, reservation.id, signed_in(member, industrial.organization)).status_code == 403
    assert collect(client, reservation.id, distributor.headers).status_code == 403
    stranger = Party("industrial")
    assert collect(client, reservation.id, stranger.headers).status_code == 404
    billing = make_user()
    add_member(billing, industrial.organization, "billing")
    assert collect(client, reservation.id, signed_in(billing, industrial.organization)).status_code == 200


def test_collection_refuses_an_incomplete_billing_identity_and_leaves_it_due(client, world):
    industrial, _, reservation = world
    BillingProfile.update(postal_code="", city=" ").where(
        BillingProfile.organization == industrial.organization.id).execute()
    refused = collect(client, reservation.id, industrial.headers)
    assert refused.status_code == 409 and refused.json["error"]["code"] == "CONFLICT"
    assert refused.json["error"]["details"] == {"reason": "billing_identity_incomplete",
                                                "missing": ["address.postalCode", "address.city"]}
    path = f"/api/billing/reservations/{reservation.id}"
    Reservation.update(billing_model="legacy_mandate", commission_amount_cents=0, total_amount_cents=100_000).where(
        Reservation.id == reservation.id).execute()
    legacy = client.simulate_post(f"{path}/deposit/collect", json={"paymentMethod": "bank_transfer"},
                                  headers={**industrial.headers, "Idempotency-Key": "legacy-1"})
    assert legacy.status_code == 409 and legacy.json["error"]["details"]["reason"] == "billing_identity_incomplete"
    assert not Invoice.select().where(Invoice.reservation_id == reservation.id).exists()
    assert FinancialRecord.get_by_id(reservation.id).financial_status == "reservation_total_due"


def test_legacy_routes_refuse_a_principal_seller_reservation_and_collect_a_legacy_one(client, world):
    industrial, _, reservation = world
    path = f"/api/billing/reservations/{reservation.id}"
    headers = {**industrial.headers, "Idempotency-Key": "legacy-1"}
    refused = client.simulate_post(f"{path}/deposit/collect", json={"paymentMethod": "bank_transfer"}, headers=headers)
    assert refused.status_code == 409 and refused.json["error"]["details"]["reason"] == "not_legacy_mandate"
    Reservation.update(billing_model="legacy_mandate", commission_amount_cents=0, total_amount_cents=100_000).where(
        Reservation.id == reservation.id).execute()
    early = client.simulate_post(f"{path}/balance/collect", json={"paymentMethod": "bank_transfer"},
                                 headers={**industrial.headers, "Idempotency-Key": "b-0"})
    assert early.status_code == 409
    deposit = client.simulate_post(f"{path}/deposit/collect", json={"paymentMethod": "bank_transfer"}, headers=headers)
    assert deposit.status_code == 200, deposit.json
    assert deposit.json["data"]["financialStatus"] == "deposit_paid"
    assert deposit.json["data"]["invoiceNumber"].startswith("FAC-DEP-")
    balance = client.simulate_post(f"{path}/balance/collect", json={"paymentMethod": "bank_transfer"},
                                   headers={**industrial.headers, "Idempotency-Key": "b-1"})
    assert balance.status_code == 200 and balance.json["data"]["financialStatus"] == "balance_paid"
    kinds = {i.kind: i.amount_excl_tax_cents for i in Invoice.select().where(Invoice.reservation_id == reservation.id)}
    assert kinds == {"store_deposit": 30_000, "store_balance": 70_000, "platform_commission": 20_000}


def _store_pdf(invoice: Invoice) -> None:
    key = f"billing/invoices/{invoice.number}.pdf"
    current_runtime().storage.put_bytes(INVOICE_PDF_CONTEXT, key, PDF, "application/pdf")
    Invoice.update(pdf_storage_key=key, pdf_sha256=hashlib.sha256(PDF).hexdigest()).where(
        Invoice.id == invoice.id).execute()


def test_list_and_download_access_matrix(client, world):
    industrial, distributor, reservation = world
    number = collect(client, reservation.id, industrial.headers).json["data"]["invoiceNumber"]
    admin = signed_in(make_admin())
    stranger = Party("industrial")

    def listed(headers, **params):
        resp = client.simulate_get("/api/billing/invoices", headers=headers, params=params)
        assert resp.status_code == 200, resp.json
        return [item["invoiceNumber"] for item in resp.json["data"]["items"]]

    assert number in listed(industrial.headers)
    assert number in listed(industrial.headers, kind=["platform_sale", "platform_credit_note", "nonsense"])
    assert listed(industrial.headers, kind=["supplier_self_billed"]) == []
    assert number not in listed(distributor.headers) and number not in listed(stranger.headers)
    assert number in listed(admin)
    item = client.simulate_get("/api/billing/invoices", headers=industrial.headers).json["data"]["items"][0]
    assert item["hasPdf"] is False and "pdfStorageKey" not in item
    assert (item["amountExclTaxCents"], item["vatAmountCents"], item["amountInclTaxCents"], item["vatRatePercent"]) \
        == (120_000, 24_000, 144_000, 20.0)

    path = f"/api/billing/invoices/{number}/download"
    not_ready = client.simulate_get(path, headers=industrial.headers)
    assert not_ready.status_code == 404 and not_ready.json["error"]["code"] == "BILLING_PDF_NOT_READY"
    _store_pdf(Invoice.get(Invoice.number == number))
    for headers in (industrial.headers, admin):
        resp = client.simulate_get(path, headers=headers)
        assert resp.status_code == 200 and resp.content == PDF
        assert resp.headers["content-type"] == "application/pdf"
        assert resp.headers["content-disposition"].startswith("attachment")
        assert resp.headers["cache-control"] == "private, no-store"
        assert resp.headers["x-content-type-options"] == "nosniff"
    for headers in (distributor.headers, stranger.headers):
        assert client.simulate_get(path, headers=headers).status_code == 403
    assert client.simulate_get("/api/billing/invoices/FAC-RES-1999-000001/download",
                               headers=admin).status_code == 404
    assert client.simulate_get("/api/billing/invoices", headers=industrial.headers,
                               params={"limit": 201}).status_code == 400


def test_summary_for_both_parties_and_admin_only(client, world):
    industrial, distributor, reservation = world
    path = f"/api/billing/reservations/{reservation.id}/summary"
    before = client.simulate_get(path, headers=industrial.headers).json["data"]
    assert (before["financialStatus"], before["billingModel"], before["invoices"]) == ("draft", "principal_seller", [])
    collect(client, reservation.id, industrial.headers)
    summary = client.simulate_get(path, headers=distributor.headers).json["data"]
    assert summary["financialStatus"] == "reservation_total_paid"
    assert summary["amounts"] == {"storeBaseAmountCents": 100_000, "platformCommissionAmountCents": 20_000,
                                  "industrialTotalAmountCents": 120_000, "commissionRateBps": 2000}
    # each party sees what its organization issued or received: not the industrial's sale
    assert (summary["paymentOrders"], summary["invoices"], summary["refundedCents"]) == ([], [], 0)
    mine = client.simulate_get(path, headers=industrial.headers).json["data"]
    assert [(o["kind"], o["status"], o["settlement"]) for o in mine["paymentOrders"]] == [
        ("reservation_total", "paid", "unsent")]  # spec C's status, and the bank's view (no file yet)
    assert mine["invoices"][0]["kind"] == "platform_sale" and mine["customerCreditCents"] == 0
    admin = client.simulate_get(path, headers=signed_in(make_admin()))
    assert admin.status_code == 200 and len(admin.json["data"]["invoices"]) == 1
    assert client.simulate_get(path, headers=Party("distributor").headers).status_code == 404


def test_refund_and_credit_note_need_billing_manage_all(client, world):
    industrial, _, reservation = world
    number = collect(client, reservation.id, industrial.headers).json["data"]["invoiceNumber"]
    admin = signed_in(make_admin())
    body = {"amountCents": 20_000, "reason": "Emplacement indisponible 3 jours", "paymentMethod": "bank_transfer"}
    path = f"/api/billing/invoices/{number}/refund"
    assert client.simulate_post(path, json=body, headers={**industrial.headers, "Idempotency-Key": "r"}) \
        .status_code == 403
    assert client.simulate_post(path, json=body, headers=admin).status_code == 400  # no key
    refund = client.simulate_post(path, json=body, headers={**admin, "Idempotency-Key": "r-1"})
    assert refund.status_code == 200, refund.json
    assert (refund.json["data"]["financialStatus"], refund.json["data"]["remainingCents"]) == (
        "partially_refunded", 100_000)
    replay = client.simulate_post(path, json=body, headers={**admin, "Idempotency-Key": "r-1"})
    assert replay.json["data"] == {**refund.json["data"], "idempotent": True}
    over = client.simulate_post(path, json={**body, "amountCents": 100_001},
                                headers={**admin, "Idempotency-Key": "r-2"})
    assert over.status_code == 409 and over.json["error"]["details"]["reason"] == "over_refund"
    note = client.simulate_post(f"/api/billing/invoices/{number}/credit-note", json={"reason": "Annulation"},
                                headers=admin)
    assert note.status_code == 201 and note.json["data"]["creditedCents"] == 100_000
    summary = client.simulate_get(f"/api/billing/reservations/{reservation.id}/summary", headers=admin).json["data"]
    assert [i["kind"] for i in summary["invoices"]] == ["platform_sale", "platform_credit_note",
                                                        "platform_credit_note"]
    assert summary["invoices"][0]["status"] == "credited" and summary["refundedCents"] == 20_000


@pytest.mark.committed
def test_a_concurrent_request_with_the_same_key_is_409(app):
    import falcon.testing

    with database.connection_context(), transaction():
        industrial = Party("industrial")
        reservation = Market().reservation(industrial.organization, approved_org("distributor"))
    client = falcon.testing.TestClient(app)
    locked, release, first = threading.Event(), threading.Event(), {}

    def hold_reservation_row():  # another connection: the first request holds its key, then waits
        with database.connection_context(), transaction():
            Reservation.select().where(Reservation.id == reservation.id).for_update().get()
            locked.set()
            release.wait(timeout=30)

    def first_request():
        first["resp"] = collect(client, reservation.id, industrial.headers, key="same")

    holder, runner = threading.Thread(target=hold_reservation_row), threading.Thread(target=first_request)
    holder.start()
    assert locked.wait(timeout=10)
    runner.start()
    lock = idempotency.lock_id(industrial.organization.id, COLLECT_ROUTE, "same") & (2**64 - 1)
    with database.connection_context():  # the first request holds its key (advisory lock), then waits
        deadline = time.monotonic() + 10
        while not database.execute_sql(
                "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1"
                " AND classid::bigint = %s AND objid::bigint = %s)", (lock >> 32, lock & 0xFFFFFFFF)).fetchone()[0]:
            assert time.monotonic() < deadline, "the first request never held its key"
            time.sleep(0.01)
    second = collect(client, reservation.id, industrial.headers, key="same")
    release.set()
    runner.join(timeout=30)
    holder.join(timeout=30)
    assert second.status_code == 409 and second.json["error"]["details"]["reason"] == "request_in_flight"
    assert first["resp"].status_code == 200 and first["resp"].json["data"]["idempotent"] is False
