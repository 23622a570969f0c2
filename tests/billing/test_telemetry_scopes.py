"""Every telemetry scope of spec C's Events table, scope by scope: one table names the scope and the
real action of the services (or the routes) that logs it; each row runs its action on its own data
and finds its scope in the structured log lines."""

from __future__ import annotations

from dataclasses import replace

import pytest

from backend import clock
from backend.billing import corrections, payouts
from backend.billing.collection import auto
from backend.billing.collection import collect as collection
from backend.billing.documents.render import render_invoice_pdf
from backend.billing.invoicing.post_invoice_hook import run_post_invoice_hook
from backend.billing.models import Invoice, InvoiceKind, PaymentMethod, SelfBillingMandate
from backend.billing.self_billing import acceptance, incidents, scheduler
from backend.billing.self_billing import invoice as self_billing
from backend.billing.self_billing.mandate_events import apply_provider_event
from backend.errors import DomainError
from backend.identity.models import BillingProfile
from tests.billing.documents import invoice_samples as samples
from tests.billing.helpers import Market, approved_org, booted_config, customer_paid
from tests.billing.invoicing.test_post_invoice_hook import issue, platform_config  # noqa: F401 (fixtures)
from tests.billing.self_billing import mandate_fixtures
from tests.billing.self_billing.data import AFTER, DURING, collected, sign_mandate
from tests.billing.self_billing.test_invoice import open_incident_on, refuse_invoices_of
from tests.factories import make_admin

# The e-signature simulator's fixtures, which the mandate rows ask for.
app, distributor, make_simulator = mandate_fixtures.app, mandate_fixtures.distributor, mandate_fixtures.make_simulator
provider, runtime, simulator = mandate_fixtures.provider, mandate_fixtures.runtime, mandate_fixtures.simulator


class Run:
    """What an action needs: fresh parties, a market, the test's fixtures on demand."""

    def __init__(self, request: pytest.FixtureRequest) -> None:
        self.request = request
        self.market = Market()
        self.industrial = approved_org("industrial")
        self.distributor = approved_org("distributor")

    def fixture(self, name: str):
        return self.request.getfixturevalue(name)

    def collected(self):
        return collected(self.market, self.industrial, self.distributor)

    def sale_of(self, reservation) -> Invoice:
        return Invoice.get(Invoice.reservation_id == reservation.id, Invoice.kind == InvoiceKind.PLATFORM_SALE)

    def self_billed(self):
        """A collected reservation, self-billed by the scheduler's unit once its window closed."""
        sign_mandate(self.distributor)
        reservation = self.collected()
        with clock.frozen_at(AFTER):
            assert self_billing.self_bill_if_due(reservation.id, config=booted_config()).invoice is not None
        return reservation


def refused(action, *args, **kwargs) -> None:
    with pytest.raises(DomainError):
        action(*args, **kwargs)


def collect(run: Run, reservation, method=PaymentMethod.BANK_TRANSFER) -> None:
    collection.collect(reservation_id=reservation.id, industrial_organization_id=run.industrial.id, method=method,
                       key="telemetry", user_id=None, config=booted_config())


def refund(run: Run, invoice: Invoice, amount_cents: int) -> None:
    corrections.refund_once(key="telemetry", invoice_number=invoice.number, amount_cents=amount_cents,
                            reason="geste commercial", method=PaymentMethod.BANK_TRANSFER, user_id=None,
                            config=booted_config())


def collects(run: Run) -> None:
    run.collected()


def collect_fails(run: Run) -> None:  # sepa_dd without a mandate: 409
    refused(collect, run, run.market.reservation(run.industrial, run.distributor), PaymentMethod.SEPA_DD)


def auto_collects(run: Run) -> None:
    auto.auto_collect(run.market.reservation(run.industrial, run.distributor).id, config=booted_config())


def auto_collect_fails(run: Run) -> None:  # the industrial's billing identity is incomplete: 409
    reservation = run.market.reservation(run.industrial, run.distributor)
    BillingProfile.update(city="").where(BillingProfile.organization == run.industrial.id).execute()
    auto.auto_collect(reservation.id, config=booted_config())


def self_bills(run: Run) -> None:
    run.self_billed()


def adjusts(run: Run) -> None:  # a refund after self-billing credits the store share
    refund(run, run.sale_of(run.self_billed()), 10_000)


def pays_out(run: Run) -> None:  # once the distributor accepted its self-billed invoice (issue 32)
    reservation = run.self_billed()
    number = Invoice.get(Invoice.reservation_id == reservation.id,
                         Invoice.kind == InvoiceKind.SUPPLIER_SELF_BILLED).number
    acceptance.accept(invoice_number=number, organization_id=run.distributor.id, user_id=None)
    customer_paid(reservation.id)
    payouts.pay_out(reservation_id=reservation.id, key="telemetry", user_id=make_admin().id)


def payout_fails(run: Run) -> None:  # collected, not self-billed: nothing to pay
    refused(payouts.pay_out, reservation_id=run.collected().id, key="telemetry", user_id=make_admin().id)


def refunds(run: Run) -> None:
    refund(run, run.sale_of(run.collected()), 10_000)


def refund_fails(run: Run) -> None:  # more than was paid: 409 over_refund
    refused(refund, run, run.sale_of(run.collected()), 10_000_000)


def pdf_fails(run: Run) -> None:  # no published `invoice` template: the fallback document
    render_invoice_pdf(samples.sale(), storage=run.fixture("storage"))


def hook(run: Run, invoice: Invoice, **changes):
    run.fixture("seeded")
    config = replace(run.fixture("platform_config"), **changes)
    return run_post_invoice_hook(invoice.id, storage=run.fixture("storage"), config=config,
                                 mandate_signed=lambda organization_id: True)


def drafts(run: Run) -> None:
    hook(run, issue(InvoiceKind.PLATFORM_SALE, issuer=None, customer=run.industrial.id, paid=True,
                    config=run.fixture("platform_config")))


def skips_draft(run: Run) -> None:  # self-billed kinds wait for EINVOICING_SELF_BILLING_ENABLED
    hook(run, issue(InvoiceKind.SUPPLIER_SELF_BILLED, issuer=run.distributor.id, customer=None,
                    config=run.fixture("platform_config")))


def draft_fails(run: Run) -> None:  # a buyer country e-invoicing cannot use: the e-invoicing area throws
    BillingProfile.update(country="1X").where(BillingProfile.organization == run.industrial.id).execute()
    drafts(run)


def transmits_self_billed(run: Run) -> None:
    hook(run, issue(InvoiceKind.SUPPLIER_SELF_BILLED, issuer=run.distributor.id, customer=None,
                    config=run.fixture("platform_config")), einvoicing_self_billing_enabled=True)


def request_mandate(run: Run):
    run.fixture("provider")  # the app talks to the simulator
    seller = run.fixture("distributor")
    return run.fixture("client").simulate_post(seller.path, headers=seller.admin)


def requested_mandate(run: Run) -> SelfBillingMandate:
    answer = request_mandate(run)
    assert answer.status_code == 201, answer.text
    return SelfBillingMandate.get_by_id(answer.json["data"]["mandate"]["id"])


def provider_event(run: Run, mandate: SelfBillingMandate, name: str) -> str | None:
    return apply_provider_event(mandate.id, f"evt-{name}", name, provider=run.fixture("provider"),
                                storage=run.fixture("runtime").storage)


def mandate_request_fails(run: Run) -> None:
    run.fixture("simulator").store.faults.update({"reject_uploads": True})
    assert request_mandate(run).status_code == 502


def signs_mandate(run: Run) -> SelfBillingMandate:
    mandate = requested_mandate(run)
    run.fixture("simulator").store.act(mandate.esign_request_ref, "sign")
    assert provider_event(run, mandate, "signature_request.done") == "signed"
    return mandate


def declines_mandate(run: Run) -> None:
    assert provider_event(run, requested_mandate(run), "signer.declined") == "declined"


def revokes_mandate(run: Run) -> None:
    signs_mandate(run)
    seller = run.fixture("distributor")
    answer = run.fixture("client").simulate_delete(seller.path, headers=seller.admin, json={"reason": "fin"})
    assert answer.status_code == 200, answer.text


def ignores_unconfirmed_done(run: Run) -> None:  # `done` while the provider says the request is ongoing
    assert provider_event(run, requested_mandate(run), "signature_request.done") is None


def refuses_signed_file(run: Run) -> None:  # the signed file is not a PDF
    mandate = requested_mandate(run)
    store = run.fixture("simulator").store
    store.requests[mandate.esign_request_ref]["documents"][0]["content"] = b"<html>no pdf</html>"
    store.act(mandate.esign_request_ref, "sign")
    assert provider_event(run, mandate, "signature_request.done") == "declined"


def skips_without_mandate(run: Run) -> None:
    reservation = run.collected()
    with clock.frozen_at(AFTER):
        self_billing.self_bill_if_due(reservation.id, config=booted_config())


def skips_open_incident(run: Run) -> None:
    sign_mandate(run.distributor)
    reservation = run.collected()
    open_incident_on(reservation)
    with clock.frozen_at(AFTER):
        self_billing.self_bill_if_due(reservation.id, config=booted_config())


def forces_without_mandate(run: Run) -> None:
    self_billing.catch_up(reservation_id=run.collected().id, user_id=None, force=True, reason="accord écrit",
                          config=booted_config())


def forces_with_open_incident(run: Run) -> None:
    sign_mandate(run.distributor)
    reservation = run.collected()
    open_incident_on(reservation)
    self_billing.catch_up(reservation_id=reservation.id, user_id=None, force=True, reason="litige clos",
                          config=booted_config())


def trigger_fails(run: Run) -> None:  # the database refuses the unit's invoice: counted failed
    sign_mandate(run.distributor)
    refuse_invoices_of(run.collected())
    with clock.frozen_at(AFTER):
        assert scheduler.self_bill_due_reservations(config=booted_config())["failed"] == 1


def declares_incident(run: Run):
    reservation = run.collected()
    with clock.frozen_at(DURING):
        return incidents.declare(reservation_id=reservation.id, industrial_organization_id=run.industrial.id,
                                 user_id=make_admin().id, reason="Meuble absent")


def releases_incident(run: Run) -> None:
    incident = declares_incident(run)
    with clock.frozen_at(DURING):
        incidents.release(incident_id=incident.id, user_id=make_admin().id, resolution_note="Meuble installé")


# Spec C "Events", row by row: the scope and the action that logs it.
SCOPES = {
    "billing.reservation.collect.requested": collects,
    "billing.reservation.collect.paid": collects,
    "billing.reservation.collect.failed": collect_fails,
    "billing.reservation.collect.auto_triggered": auto_collects,
    "billing.reservation.collect.auto_succeeded": auto_collects,
    "billing.reservation.collect.auto_failed": auto_collect_fails,
    "billing.supplier.self_billing.issued": self_bills,
    "billing.supplier.self_billing.adjusted": adjusts,
    "billing.supplier.payout.requested": pays_out,
    "billing.supplier.payout.paid": pays_out,
    "billing.supplier.payout.failed": payout_fails,
    "billing.refund.requested": refunds,
    "billing.refund.paid": refunds,
    "billing.refund.failed": refund_fails,
    "billing.invoice.pdf_generation_failed": pdf_fails,
    "billing.einvoicing.transmission_draft_created": drafts,
    "billing.einvoicing.transmission_draft_skipped": skips_draft,
    "billing.einvoicing.transmission_draft_failed": draft_fails,
    "billing.self_billing_mandate.requested": requested_mandate,
    "billing.self_billing_mandate.signed": signs_mandate,
    "billing.self_billing_mandate.declined": declines_mandate,
    "billing.self_billing_mandate.revoked": revokes_mandate,
    "billing.self_billing_mandate.request_failed": mandate_request_fails,
    "billing.self_billing_mandate.webhook_ignored": ignores_unconfirmed_done,
    "billing.self_billing_mandate.webhook_apply_failed": refuses_signed_file,
    "billing.supplier.self_billing.skipped_no_mandate": skips_without_mandate,
    "billing.supplier.self_billing.skipped_open_incident": skips_open_incident,
    "billing.supplier.self_billing.forced_without_mandate": forces_without_mandate,
    "billing.supplier.self_billing.forced_with_open_incident": forces_with_open_incident,
    "billing.supplier.self_billing.trigger_failed": trigger_fails,
    "billing.supplier.self_billing.transmission_created": transmits_self_billed,
    "billing.reservation.incident.declared": declares_incident,
    "billing.reservation.incident.released": releases_incident,
}
OWNER_ONLY = {"billing.supplier.self_billing.trigger_failed"}  # creates a trigger


@pytest.mark.parametrize("scope", [pytest.param(scope, marks=[pytest.mark.owner] if scope in OWNER_ONLY else [])
                                   for scope in SCOPES])
def test_every_spec_c_scope_is_logged_by_its_action(scope, request, log_lines):
    SCOPES[scope](Run(request))
    assert scope in {line["scope"] for line in log_lines()}
