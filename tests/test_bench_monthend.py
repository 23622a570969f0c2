"""`vitrine bench monthend`'s set-up on a tiny size: the reservations it prepares are the ones the
real scheduler pass selects and self-bills, and nothing of the set-up is left for the worker."""

from backend.billing.models import DocumentMailing, Invoice
from backend.billing.self_billing import scheduler
from backend.outbox import OutboxMessage
from ops.bench import monthend
from tests.billing.helpers import booted_config


def test_the_prepared_reservations_are_due_and_self_billed_by_one_pass(broker):
    ids = monthend.prepare_due_reservations(3, config=booted_config(), broker=broker)

    assert sorted(scheduler.candidates()) == sorted(ids)
    # The sales' follow-ups (their PDFs) are not the month end's: closed, none left for the worker.
    assert not OutboxMessage.select().where(OutboxMessage.done_at.is_null()).exists()
    counters = scheduler.self_bill_due_reservations(config=booted_config())
    assert (counters["eligible"], counters["issued"], counters["failed"]) == (3, 3, 0)
    invoices = list(Invoice.select().where(Invoice.kind == monthend.KIND).order_by(Invoice.sequence))
    assert [invoice.sequence for invoice in invoices] == [1, 2, 3]
    assert {invoice.reservation_id for invoice in invoices} == set(ids)
    # Each issue queued its post-invoice hook (the PDF, the e-mail, the transmission follow it).
    hooks = OutboxMessage.select().where(OutboxMessage.actor_name == "run_post_invoice_hook",
                                         OutboxMessage.done_at.is_null())
    assert hooks.count() == 3
    assert not DocumentMailing.select().exists()


def test_cores_busy_reads_each_core_between_two_readings():
    before = [(100, 1_000), (50, 1_000)]
    after = [(600, 2_000), (50, 1_500)]
    assert monthend.cores_busy(before, after) == [0.5, 0.0]
    assert len(monthend.core_ticks()) >= 1 and all(busy <= total for busy, total in monthend.core_ticks())
