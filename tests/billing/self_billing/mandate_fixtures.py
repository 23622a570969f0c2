"""Self-billing mandate test data and the simulator fixtures of the onboarding tests (the e-signature
simulator over HTTP, a client pointed at it, the app booted with that client)."""

from __future__ import annotations

import pytest

from tests.billing.helpers import approved_org
from tests.factories import add_member, make_admin, make_user, signed_in
from tests.onboarding.conftest import api_server, app, make_simulator, provider, runtime, simulator  # noqa: F401

BASE = "/api/billing/organizations/{}/self-billing-mandate"


class Distributor:
    """A KYB-approved distributor with a billing profile (signer Alice Martin), one member per
    membership role, an outsider distributor and an admin, with their request headers."""

    def __init__(self) -> None:
        self.organization = approved_org("distributor")
        self.path = BASE.format(self.organization.id)
        self.members = {}
        for role in ("manager", "member", "billing"):
            user = make_user()
            add_member(user, self.organization, role)
            self.members[role] = signed_in(user, self.organization)
        other = approved_org("distributor")
        outsider = make_user()
        add_member(outsider, other, "manager")
        self.outsider = signed_in(outsider, other)
        industrial = approved_org("industrial")
        industrial_user = make_user()
        add_member(industrial_user, industrial, "manager")
        self.industrial = signed_in(industrial_user, industrial)
        self.admin_user = make_admin()
        self.admin = signed_in(self.admin_user)


@pytest.fixture
def distributor(runtime, provider):  # noqa: F811
    """`runtime` publishes the templates; `provider` makes `app` talk to the simulator."""
    return Distributor()
