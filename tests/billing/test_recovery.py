"""`vitrine billing recover-legacy`: never-billed legacy reservations move to principal_seller."""

from __future__ import annotations

import pytest

from backend.billing import legacy, recovery
from backend.billing.collection import collect
from backend.billing.models import AuditEntry, FinancialRecord, Invoice, PaymentMethod
from backend.errors import Conflict
from backend.marketplace.models import Reservation
from ops.cli import main
from tests.billing.helpers import Market, approved_org, booted_config


def _legacy(reservation) -> Reservation:
    Reservation.update(billing_model=None, commission_amount_cents=0, total_amount_cents=Reservation.base_amount_cents,
                       commission_rate_bps=0).where(Reservation.id == reservation.id).execute()
    return Reservation.get_by_id(reservation.id)


def test_dry_run_reports_and_the_real_run_recomputes_the_commission():
    market = Market()
    industrial, distributor = approved_org("industrial"), approved_org("distributor")
    old = _legacy(market.reservation(industrial, distributor, price_cents=10_001))
    billed = _legacy(market.reservation(industrial, distributor, price_cents=5_000, day=20))
    Reservation.update(billing_model="legacy_mandate").where(Reservation.id == billed.id).execute()
    legacy.collect_step(legacy.DEPOSIT, reservation_id=billed.id, industrial_organization_id=industrial.id,
                        method=PaymentMethod.BANK_TRANSFER, key="d", user_id=None, config=booted_config())
    dry = recovery.recover_legacy(rate_bps=2000, dry_run=True)
    assert [c["reservationId"] for c in dry] == [old.id]
    assert Reservation.get_by_id(old.id).billing_model is None
    (change,) = recovery.recover_legacy(rate_bps=2000, dry_run=False)
    assert change["after"] == {"billingModel": "principal_seller", "commissionAmountCents": 2_000,
                               "totalAmountCents": 12_001, "commissionRateBps": 2000}
    recovered = Reservation.get_by_id(old.id)
    assert (recovered.billing_model, recovered.commission_amount_cents) == ("principal_seller", 2_000)
    assert Reservation.get_by_id(billed.id).billing_model == "legacy_mandate"
    (audit,) = AuditEntry.select().where(AuditEntry.action == "billing.recover_legacy")
    assert (audit.reservation_id, audit.details["after"]["commissionAmountCents"]) == (old.id, 2_000)
    answer = collect.collect(reservation_id=old.id, industrial_organization_id=industrial.id,
                                method=PaymentMethod.BANK_TRANSFER, key="k", user_id=None,
                                config=booted_config())
    assert answer.financial_status == "reservation_total_paid"
    assert recovery.recover_legacy(rate_bps=2000, dry_run=True) == []


def test_the_command_prints_what_it_would_change(capsys):
    assert main(["billing", "recover-legacy", "--dry-run"]) == 0
    assert "reservation(s) would change" in capsys.readouterr().out


@pytest.mark.owner  # a record's amounts are re-priced: the command runs as the owner (owner_session)
def test_a_failed_legacy_collection_is_recovered_and_then_collected():
    market = Market()
    industrial, distributor = approved_org("industrial"), approved_org("distributor")
    failed = _legacy(market.reservation(industrial, distributor, price_cents=10_001))
    with pytest.raises(Conflict):  # no SEPA mandate: the record is left opened `deposit_due`
        legacy.collect_step(legacy.DEPOSIT, reservation_id=failed.id, industrial_organization_id=industrial.id,
                            method=PaymentMethod.SEPA_DD, key="d", user_id=None, config=booted_config())
    record = FinancialRecord.get_by_id(failed.id)
    assert (record.financial_status, record.billing_model, record.commission_cents) == (
        "deposit_due", "legacy_mandate", 0)
    (change,) = recovery.recover_legacy(rate_bps=2000, dry_run=False)
    assert (change["before"]["financialStatus"], change["after"]["financialStatus"]) == (
        "deposit_due", "reservation_total_due")
    record = FinancialRecord.get_by_id(failed.id)
    assert (record.financial_status, record.billing_model, record.store_base_cents, record.commission_cents,
            record.total_cents, record.commission_rate_bps) == (
        "reservation_total_due", "principal_seller", 10_001, 2_000, 12_001, 2000)
    answer = collect.collect(reservation_id=failed.id, industrial_organization_id=industrial.id,
                                method=PaymentMethod.BANK_TRANSFER, key="k", user_id=None, config=booted_config())
    assert answer.financial_status == "reservation_total_paid"
    assert Invoice.get(Invoice.number == answer.invoice_number).amount_excl_tax_cents == 12_001
    assert recovery.recover_legacy(rate_bps=2000, dry_run=True) == []
