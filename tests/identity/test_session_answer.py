"""`SessionOut` answers in one pass (`AnsweredDirectly`): the same dict, in the same order, as
marshmallow's field-by-field dump of its fields (its user's as `UserOut` dumps it)."""

import json
from datetime import UTC, datetime, timedelta, timezone

import pytest

from backend.identity.models import User
from schemas.identity.accounts import SessionOut


def _user(**changes) -> User:
    values = {"id": "3f2c7d1e-0000-4000-8000-000000000001", "email": "ines@example.com", "name": "Inès Dupont",
              "email_verified_at": None, "roles": ["industrial"],
              "created_at": datetime(2026, 3, 4, 5, 6, 7, 891234, tzinfo=UTC)}
    return User(**{**values, **changes})


SESSIONS = [
    {"user": _user(), "roles": ["industrial"], "permissions": ["catalog.read", "reservations.write"],
     "activeOrganizationId": "industrial:552100554",
     "organizations": [{"id": "industrial:552100554", "actorType": "industrial", "legalName": "Bench SA",
                        "kybStatus": "approved", "membershipRole": "manager"},
                       {"id": "distributor:732829320", "actorType": "distributor", "legalName": "Éditions & Cie",
                        "kybStatus": None, "membershipRole": "member"}],
     "workspace": {"home": "/industrial", "redirectTo": "/onboarding-signature-pending"}},
    {"user": _user(roles=["admin", "distributor"], email_verified_at=datetime(2026, 1, 1, tzinfo=UTC),
                   created_at=datetime(2026, 1, 1, 23, 30, tzinfo=timezone(timedelta(hours=-2)))),
     "roles": ["admin", "distributor"], "permissions": [], "activeOrganizationId": None, "organizations": [],
     "workspace": {"home": None, "redirectTo": None}},
]


@pytest.mark.parametrize("session", SESSIONS)
def test_the_session_answer_is_the_field_by_field_dump(session):
    schema = SessionOut()
    direct = schema.dump(session)
    assert direct == schema.dump_field_by_field(session)
    assert json.dumps(direct) == json.dumps(schema.dump_field_by_field(session))  # key order too
