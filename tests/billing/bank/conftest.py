"""The bank tests' simulator, in process (`ops.simulators.bank`), one per test."""

from __future__ import annotations

import pytest

from ops.simulators.bank import BankSimulator
from tests.billing.bank.statements_data import IBAN


@pytest.fixture
def bank():
    with BankSimulator(iban=IBAN) as simulator:
        yield simulator


@pytest.fixture
def bank_client(make_app):
    """The platform over HTTP (falcon's test client), its IBAN the simulator's account."""
    import falcon.testing

    return falcon.testing.TestClient(make_app(platform_legal_iban=IBAN))
