"""Transmission drafts: idempotent by key, decided by the unique index; the database guards the
statuses and records every change."""

from __future__ import annotations

import threading
import uuid

import pytest
from peewee import IntegrityError, ProgrammingError

from backend.db import database, transaction
from backend.einvoicing.drafts import create_transmission_draft
from backend.einvoicing.models import Transmission, TransmissionEvent
from backend.einvoicing.status import TransmissionStatus


def number() -> str:
    return f"FAC-RES-2026-{uuid.uuid4().int % 1_000_000:06d}-{uuid.uuid4().hex[:4]}"


def draft(**overrides):
    values = dict(invoice_number=number(), document_kind="invoice", flow_type="fr_domestic_b2b",
                  document_pdf_key="billing/invoices/x.pdf", amount_incl_tax_cents=12_000,
                  invoice_kind="platform_sale")
    values.update(overrides)
    return create_transmission_draft(**values)


def test_a_draft_is_pending_dispatch_with_its_key_and_a_history_row():
    transmission, idempotent = draft(invoice_number="FAC-RES-2026-000042")
    assert idempotent is False
    row = Transmission.get_by_id(transmission.id)
    assert row.status == TransmissionStatus.PENDING_DISPATCH
    assert row.idempotency_key == "FAC-RES-2026-000042:invoice:fr_domestic_b2b"
    assert row.provider_status is None and row.amount_incl_tax_cents == 12_000
    events = list(TransmissionEvent.select().where(TransmissionEvent.transmission == row.id))
    assert [(e.from_status, e.to_status, e.trigger) for e in events] == [(None, "pending_dispatch", "draft_created")]


def test_a_second_call_returns_the_same_transmission_as_idempotent():
    invoice = number()
    first, first_idempotent = draft(invoice_number=invoice)
    second, second_idempotent = draft(invoice_number=invoice)
    assert (first_idempotent, second_idempotent) == (False, True)
    assert second.id == first.id
    assert Transmission.select().where(Transmission.invoice_number == invoice).count() == 1


def test_the_credit_note_of_an_invoice_number_is_another_transmission():
    invoice = number()
    invoice_transmission, _ = draft(invoice_number=invoice)
    credit_transmission, idempotent = draft(invoice_number=invoice, document_kind="credit_note")
    assert idempotent is False and credit_transmission.id != invoice_transmission.id


@pytest.mark.parametrize("flow_type", ["eu_intra_b2b", "export_b2b"])
def test_e_reporting_flows_are_transmitted_with_the_international_processing_rule(flow_type):
    invoice = number()
    transmission, idempotent = draft(invoice_number=invoice, flow_type=flow_type)
    assert not idempotent and transmission.flow_type == flow_type and transmission.processing_rule == "B2BInt"
    assert transmission.idempotency_key == f"{invoice}:invoice:{flow_type}"
    assert draft(invoice_number=invoice, flow_type="fr_domestic_b2b")[0].processing_rule == "B2B"


@pytest.mark.parametrize(
    "overrides",
    [{"document_kind": "receipt"}, {"flow_type": "fr_b2c"}, {"amount_incl_tax_cents": -1},
     {"amount_incl_tax_cents": 10.5}, {"invoice_number": " "}],
)
def test_bad_arguments_are_refused_before_any_write(overrides):
    before = Transmission.select().count()
    with pytest.raises(ValueError):
        draft(**overrides)
    assert Transmission.select().count() == before


def test_a_draft_without_pdf_is_kept_for_dispatch_to_refuse():
    transmission, _ = draft(document_pdf_key=None)
    assert transmission.document_pdf_key is None


def _move(transmission_id: str, status: str, **fields) -> None:
    with transaction():
        Transmission.update(status=status, **fields).where(Transmission.id == transmission_id).execute()


def test_the_database_refuses_a_move_the_lifecycle_does_not_allow():
    transmission, _ = draft()
    with pytest.raises(IntegrityError):
        _move(transmission.id, "acknowledged", provider_status="accepted", provider_flow_id="f-1")


def test_terminal_statuses_never_move():
    transmission, _ = draft()
    _move(transmission.id, "dispatching")
    _move(transmission.id, "sent", provider_status="processing", provider_flow_id=f"flow-{uuid.uuid4()}")
    _move(transmission.id, "acknowledged", provider_status="accepted")
    for target, fields in (("sent", {"provider_status": "processing"}), ("failed", {"provider_status": None}),
                           ("cancelled", {"provider_status": None})):
        with pytest.raises(IntegrityError):
            _move(transmission.id, target, **fields)
    assert Transmission.get_by_id(transmission.id).status == "acknowledged"
    history = [e.to_status for e in TransmissionEvent.select().where(TransmissionEvent.transmission == transmission.id)
               .order_by(TransmissionEvent.id)]
    assert history == ["pending_dispatch", "dispatching", "sent", "acknowledged"]


def test_a_sent_transmission_needs_a_flow_id_and_the_processing_provider_status():
    transmission, _ = draft()
    _move(transmission.id, "dispatching")
    with pytest.raises(IntegrityError):
        _move(transmission.id, "sent", provider_status="processing")
    with pytest.raises(IntegrityError):
        _move(transmission.id, "sent", provider_flow_id="f-2")


@pytest.mark.parametrize("refusal", [
    ProgrammingError,  # the runtime role may not write the column at all
    pytest.param(IntegrityError, marks=pytest.mark.owner),  # the trigger refuses it to anyone
])
def test_the_invoice_and_amount_of_a_transmission_never_change(refusal):
    transmission, _ = draft()
    with pytest.raises(refusal):
        _move(transmission.id, "pending_dispatch", amount_incl_tax_cents=1)


def test_a_key_of_another_shape_is_refused():
    with pytest.raises(IntegrityError), transaction():
        Transmission.create(idempotency_key="other", invoice_number="FAC-1", document_kind="invoice",
                            flow_type="fr_domestic_b2b", amount_incl_tax_cents=1)


@pytest.mark.committed
def test_concurrent_hooks_for_one_invoice_make_one_transmission():
    invoice = number()
    barrier = threading.Barrier(4)
    results: list[tuple[str, bool]] = []
    errors: list[BaseException] = []

    def hook() -> None:
        try:
            with database.connection_context():
                barrier.wait(timeout=10)
                transmission, idempotent = draft(invoice_number=invoice)
                results.append((transmission.id, idempotent))
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=hook) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not errors
    assert len({transmission_id for transmission_id, _ in results}) == 1
    assert sorted(idempotent for _, idempotent in results) == [False, True, True, True]
    with database.connection_context():
        assert Transmission.select().where(Transmission.invoice_number == invoice).count() == 1
