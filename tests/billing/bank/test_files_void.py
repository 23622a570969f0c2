"""A file the bank refused, voided (`vitrine bank void`): its orders are due again and go in the next
file, FRST again (a voided file never used the mandate); refused once the bank booked an order.
Two runs at once make one file (the orders a file takes are never taken twice)."""

from __future__ import annotations

import threading
from datetime import date

import pytest

from backend.billing.bank import files, settlement
from backend.billing.models import AuditEntry, BankFile, BankFileKind, BankFileOrder, PaymentOrder
from backend.db import database
from backend.errors import Conflict, ValidationError
from backend.runtime import current_runtime
from ops.cli import main
from tests.billing.bank.data import bank_config, collect, command_booting, read_debits, sign_sepa_mandate
from tests.billing.helpers import Market, approved_org


def make() -> BankFile:
    return files.make_file(BankFileKind.DIRECT_DEBIT, storage=current_runtime().storage, config=bank_config(),
                           user_id=None).file


@pytest.fixture
def debit():
    industrial = approved_org("industrial")
    sign_sepa_mandate(industrial)
    return collect(Market(), industrial).payment_order_id


def test_a_voided_files_orders_go_in_the_next_file_as_first_debits(debit, config, capsys):
    with command_booting(config):
        refused = make()
        assert main(["bank", "void", refused.id, "--reason", "rejected by the bank: wrong creditor account"]) == 0
        assert "its 1 payment order(s) are due again" in capsys.readouterr().out
        voided = BankFile.get_by_id(refused.id)
        assert (voided.status, voided.void_reason) == ("void", "rejected by the bank: wrong creditor account")
        assert BankFileOrder.get(BankFileOrder.file_id == refused.id).file_status == "void"
        assert PaymentOrder.get_by_id(debit).settlement == "unsent"
        audit = AuditEntry.get(AuditEntry.action == "billing.bank.file.voided")
        assert audit.details["fileId"] == refused.id and "vitrine bank void" in audit.details["origin"]
        again = make()
        (transaction,) = read_debits(current_runtime().storage.read_bytes(files.STORAGE_CONTEXT, again.storage_key))[1]
        assert transaction.sequence_type == "FRST" and PaymentOrder.get_by_id(debit).settlement == "in_file"
        assert main(["bank", "void", refused.id, "--reason", "twice"]) == 1
        assert "void already" in capsys.readouterr().err


def test_a_file_with_an_order_the_bank_booked_is_not_voided(debit):
    file = make()
    settlement.settle(debit, booked_on=date(2026, 12, 2))
    with pytest.raises(Conflict) as caught:
        files.void_file(file.id, reason="refused?", user_id=None, origin="test")
    assert caught.value.details["reason"] == "file_has_bank_outcomes"
    assert BankFile.get_by_id(file.id).status == "live" and PaymentOrder.get_by_id(debit).settlement == "settled"
    with pytest.raises(ValidationError):
        files.void_file(file.id, reason=" ", user_id=None, origin="test")


@pytest.mark.committed
def test_two_runs_at_once_make_one_file_and_one_409():
    """Runs of one kind wait for each other (an advisory lock): the second finds nothing due."""

    with database.connection_context():
        industrial = approved_org("industrial")
        sign_sepa_mandate(industrial)
        collect(Market(), industrial)
        collect(Market(), industrial)
    outcomes, barrier = [], threading.Barrier(2)

    def run() -> None:
        with database.connection_context():
            barrier.wait(timeout=30)
            try:
                outcomes.append(make().count)
            except Conflict as refused:
                outcomes.append(refused.details["reason"])

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert sorted(outcomes, key=str) == [2, "nothing_due"]
    with database.connection_context():
        assert BankFile.select().count() == 1 and BankFileOrder.select().count() == 2
