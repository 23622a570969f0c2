"""`vitrine create-admin` and the demo accounts of `vitrine seed-demo`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from backend.db import database
from backend.errors import ValidationError
from backend.identity.admin_users import ensure_admin
from backend.identity.demo import DEMO_PASSWORD, DEMO_USERS, seed_demo_identity
from backend.identity.models import Membership, User
from tests.factories import make_user

ROOT = Path(__file__).resolve().parents[2]


def test_ensure_admin_creates_then_promotes_without_duplicates():
    user, created = ensure_admin(email="Root@Example.com", password="mot-de-passe-admin")
    assert created and user.roles == ["admin"] and user.email == "root@example.com"
    again, created = ensure_admin(email="root@example.com", password="autre-mot-de-passe")
    assert (again.id, created) == (user.id, False)
    existing = make_user(roles=["industrial"])
    promoted, created = ensure_admin(email=existing.email, password="mot-de-passe-admin")
    assert not created and sorted(User.get_by_id(existing.id).roles) == ["admin", "industrial"]
    assert promoted.password_hash == existing.password_hash


@pytest.mark.parametrize(("email", "password"), [("pas-un-email", "mot-de-passe"), ("a@example.com", "court")])
def test_ensure_admin_refuses_bad_input(email, password):
    with pytest.raises(ValidationError):
        ensure_admin(email=email, password=password)


@pytest.mark.committed
def test_the_create_admin_command_is_idempotent(client):
    command = [sys.executable, "-m", "ops.cli", "create-admin", "--email", "cli@example.com",
               "--password", "mot-de-passe-cli"]
    first = subprocess.run(command, cwd=ROOT, env=os.environ, capture_output=True, text=True, timeout=120)
    second = subprocess.run(command, cwd=ROOT, env=os.environ, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0 and "admin created: cli@example.com" in first.stdout
    assert second.returncode == 0 and "promoted" in second.stdout
    with database.connection_context():
        assert User.select().where(User.email == "cli@example.com").count() == 1
    answer = client.simulate_post("/api/auth/sign-in", json={"email": "cli@example.com",
                                                              "password": "mot-de-passe-cli"})
    headers = {"Cookie": answer.headers["set-cookie"]}
    assert client.simulate_get("/api/admin/organizations", headers=headers).status_code == 200
    assert client.simulate_get("/api/admin/audit/security", headers=headers).status_code == 200


def test_demo_accounts_are_seeded_once_and_can_sign_in(client):
    assert seed_demo_identity().startswith("4 demo users and 3 demo organizations")
    assert seed_demo_identity().startswith("0 demo users and 0 demo organizations")
    assert Membership.select().count() == 3
    for email, _, role, _, _ in DEMO_USERS:
        answer = client.simulate_post("/api/auth/sign-in", json={"email": email, "password": DEMO_PASSWORD})
        session = client.simulate_get("/api/auth/session", headers={"Cookie": answer.headers["set-cookie"]})
        assert session.json["data"]["workspace"] == {"home": f"/{role}", "redirectTo": None}
