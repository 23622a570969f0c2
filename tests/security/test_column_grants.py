"""The runtime role updates only the columns a state change writes: a reservation's frozen amounts,
a self-billed invoice's acceptance row, a SEPA mandate's reference and IBAN, an e-invoice
transmission's invoice, amount and buyer, a reported status's amount and code, a platform
callback's body are refused to it, whatever the row; what the services move still moves."""

from __future__ import annotations

import os
import re

import pytest
from peewee import DatabaseError

from backend import clock
from backend.billing.models import ReservationIncident, SepaMandate
from backend.billing.self_billing import incidents
from backend.database_roles import RESTRICTED, current_role, owner_session
from backend.db import database, transaction
from tests.billing.helpers import Market, approved_org
from tests.factories import make_admin

REWRITES_REFUSED = [
    "UPDATE billing_financial_record SET total_cents = 0",
    "UPDATE billing_financial_record SET store_base_cents = store_base_cents + 1",
    "UPDATE billing_financial_record SET commission_cents = 0, commission_rate_bps = 0",
    "UPDATE billing_financial_record SET billing_model = 'legacy_mandate'",
    "UPDATE billing_financial_record SET reservation_id = reservation_id",
    "UPDATE billing_self_billed_acceptance SET invoice_id = invoice_id",
    "UPDATE billing_self_billed_acceptance SET organization_id = organization_id",
    "UPDATE billing_sepa_mandate SET iban = 'FR7630006000011234567890189'",
    "UPDATE billing_sepa_mandate SET mandate_ref = mandate_ref",
    "UPDATE billing_sepa_mandate SET signature_request_id = NULL",
    "UPDATE billing_sepa_mandate SET document_storage_key = 'another.pdf'",
    "UPDATE billing_sepa_mandate SET signed_at = now()",
    "UPDATE einvoice_transmission SET amount_incl_tax_cents = 0",
    "UPDATE einvoice_transmission SET invoice_number = invoice_number",
    "UPDATE einvoice_transmission SET idempotency_key = idempotency_key",
    "UPDATE einvoice_transmission SET document_pdf_key = 'billing/invoices/another.pdf'",
    "UPDATE einvoice_transmission SET buyer_siren = '000000000', flow_type = flow_type",
    "UPDATE billing_reservation_incident SET reason = 'another reason'",
    "UPDATE billing_reservation_incident SET reservation_id = reservation_id, declared_at = now()",
    "UPDATE einvoice_payment_report SET amount_cents = 0",
    "UPDATE einvoice_payment_report SET invoice_number = invoice_number, paid_on = paid_on",
    "UPDATE einvoice_decision_report SET code = 205",
    "UPDATE einvoice_decision_report SET reason = NULL, decided_at = decided_at",
    "UPDATE billing_bank_line SET amount_cents = 0",
    "UPDATE billing_bank_line SET direction = direction, booking_date = booking_date",
    "UPDATE billing_bank_line SET counterparty_iban = 'FR7630006000011234567890189'",
    "UPDATE billing_bank_statement SET closing_balance_cents = 0",
    "UPDATE billing_bank_statement SET document_sha256 = document_sha256, statement_id = statement_id",
    "UPDATE einvoice_platform_callback SET payload = '{}'",
    "UPDATE einvoice_platform_callback SET flow_id = flow_id, event_key = event_key",
]

WHAT_MOVES = [
    "UPDATE billing_financial_record SET financial_status = financial_status,"
    " refunded_excl_tax_cents = refunded_excl_tax_cents, updated_at = now() WHERE false",
    "UPDATE billing_self_billed_acceptance SET status = status, decided_at = now(), decided_by_user_id = NULL,"
    " contest_reason = NULL, contested_at = NULL, contested_by_user_id = NULL, resolution = NULL,"
    " resolution_note = NULL, resolved_at = NULL, resolved_by_user_id = NULL, corrected_invoice_id = NULL"
    " WHERE false",
    "UPDATE billing_sepa_mandate SET status = status, ended_at = now(), end_reason = 'x',"
    " retries_stopped_at = now() WHERE false",
    "UPDATE einvoice_transmission SET status = status, provider_status = NULL, provider_flow_id = NULL,"
    " operator_status = NULL, dispatch_attempts = dispatch_attempts + 1, dispatch_claimed_at = now(),"
    " last_error_code = NULL, last_error_message = NULL, last_synced_at = now(), next_dispatch_at = NULL,"
    " lifecycle_code = NULL, lifecycle_at = NULL, updated_at = now(), status_changed_at = now() WHERE false",
    "UPDATE einvoice_payment_report SET status = status, provider_flow_id = NULL, attempts = attempts + 1,"
    " last_error_message = NULL, sent_at = now() WHERE false",
    "UPDATE einvoice_decision_report SET status = status, provider_flow_id = NULL, attempts = attempts + 1,"
    " last_error_message = NULL, sent_at = now() WHERE false",
    "UPDATE billing_bank_line SET state = state, payment_order_id = NULL, matched_by_user_id = NULL,"
    " matched_at = now() WHERE false",
    "UPDATE billing_bank_statement SET matched = matched + 1, returned = returned, unmatched = unmatched - 1"
    " WHERE false",
    "UPDATE einvoice_platform_callback SET processing_status = processing_status, processing_note = NULL,"
    " processed_at = now() WHERE false",
]


def _refusal(statement: str, params=()) -> str:
    with pytest.raises(DatabaseError) as refusal, transaction():  # a savepoint: the test goes on
        database.execute_sql(statement, params)
    return getattr(refusal.value.orig, "pgcode", "") or str(refusal.value)


@pytest.mark.parametrize("statement", REWRITES_REFUSED)
def test_the_runtime_role_cannot_rewrite_what_a_record_was_issued_with(statement):
    assert _refusal(statement) == "42501"  # insufficient_privilege, whatever rows match


@pytest.mark.parametrize("statement", WHAT_MOVES)
def test_the_runtime_role_writes_the_columns_a_state_change_needs(statement):
    database.execute_sql(statement)


def _granted_columns(privileges: str) -> set[str] | None:
    match = re.search(r"UPDATE \(([^)]*)\)", privileges)
    return {name.strip() for name in match.group(1).split(",")} if match else None


@pytest.mark.parametrize("table", sorted(t for t, p in RESTRICTED.items() if _granted_columns(p)))
def test_the_catalog_holds_exactly_the_column_grants_declared(table):
    """What the database grants is what `RESTRICTED` declares, column by column: a column another
    migration adds is not updatable until it is named there."""
    rows = database.execute_sql(
        "SELECT column_name, has_column_privilege(current_user, quote_ident(%s), column_name, 'UPDATE'),"
        " has_table_privilege(current_user, quote_ident(%s), 'UPDATE')"
        " FROM information_schema.columns WHERE table_schema = 'public' AND table_name = %s",
        (table, table, table)).fetchall()
    assert rows and not any(whole for *_, whole in rows)  # no table-wide UPDATE
    assert {name for name, updatable, _ in rows if updatable} == _granted_columns(RESTRICTED[table])


def test_a_sepa_mandate_is_ended_once_and_never_made_active_again():
    organization = approved_org("industrial")
    mandate = SepaMandate.create(organization_id=organization.id, mandate_ref=f"VIT-{organization.siren}",
                                 iban="FR7630006000011234567890189", signed_at=clock.now())
    ended = SepaMandate.update(status="ended", ended_at=clock.now(), end_reason="superseded").where(
        SepaMandate.id == mandate.id).execute()
    assert ended == 1
    assert _refusal("UPDATE billing_sepa_mandate SET status = 'active' WHERE id = %s", (mandate.id,)) == "23514"
    assert SepaMandate.get_by_id(mandate.id).status == "ended"


def test_a_repair_the_runtime_role_may_not_write_runs_on_the_owners_connection_then_gives_it_back():
    owner_url = os.environ["DATABASE_OWNER_URL"]
    with owner_session(owner_url):
        assert database.execute_sql("SELECT current_user").fetchone() == (current_role(owner_url),)
    assert database.execute_sql("SELECT current_user").fetchone() == (current_role(os.environ["DATABASE_URL"]),)
    assert _refusal("UPDATE billing_financial_record SET total_cents = 0") == "42501"


def test_an_incident_is_released_once_and_never_opened_again():
    industrial, distributor = approved_org("industrial"), approved_org("distributor")
    reservation = Market().reservation(industrial, distributor)
    incident = ReservationIncident.create(reservation_id=reservation.id, organization_id=industrial.id,
                                          reason="Le meuble n'a pas été installé", declared_by_user_id=make_admin().id,
                                          declared_at=clock.now())
    released = incidents.release(incident_id=incident.id, user_id=make_admin().id, resolution_note="installé")
    assert (released.status, ReservationIncident.get_by_id(incident.id).status) == ("released", "released")
    assert _refusal("UPDATE billing_reservation_incident SET status = 'open', released_at = NULL,"
                    " resolution_note = NULL WHERE id = %s", (incident.id,)) == "23514"
