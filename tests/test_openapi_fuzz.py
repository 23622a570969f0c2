"""Schemathesis against the app in-process (WSGI), every operation of `/api/openapi.json`, with all
checks (issue 21, item 6): no 5xx, every answer conforms to the document (status, content type,
headers, schema), invalid data refused, valid data not refused for its fields, and an undeclared
method answered 405. Each operation runs three times: anonymous, as a platform admin and as a
member of a KYB-approved industrial organization (session cookie; no `Origin`, as a same-site
client); anonymous, an operation that needs a session runs once (`REFUSED_CONFIG`). Examples are
bounded and derandomized with a fixed seed, so a run is deterministic and the test stays well
inside the suite's time on two cores (docs/operations.md, "API fuzzing").

Run it alone: `pytest -n 2 tests/test_openapi_fuzz.py`; more examples locally with
`FUZZ_MAX_EXAMPLES=50`. A failure prints the request that reproduces it (`curl ...`).
"""

from __future__ import annotations

import os

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.config import SchemathesisConfig

from api.app import create_app
from backend.runtime import current_runtime

# A schema-valid request may still be refused by a rule of the domain (an unknown token 400, a
# state conflict 409, a business rule 422, a deprecated route 410): `positive_data_acceptance`
# allows these; a refusal that names a field is the document being looser than the validation,
# which `valid_data_passes_field_validation` below fails.
DOMAIN_REFUSALS = ["2xx", "3xx", "400", "401", "403", "404", "409", "410", "422", "429"]
CONFIG = SchemathesisConfig.from_dict({
    "seed": 21,
    "generation": {"max-examples": int(os.environ.get("FUZZ_MAX_EXAMPLES", "5")), "deterministic": True},
    "phases": {"stateful": {"enabled": False}},  # no links between operations in the document
    "checks": {"positive_data_acceptance": {"expected-statuses": DOMAIN_REFUSALS}},
})

# An anonymous caller of an operation it may not call: one example, no coverage phase. Its request
# meets the same middleware as a signed-in one's (NUL, origin, rate limit, router's 405: the runs of
# the other two roles send it every case), then the policy answers 401 before reading anything of
# the request; what is left to check is that answer's conformance, which one example checks.
REFUSED_CONFIG = SchemathesisConfig.from_dict({
    "seed": 21,
    "generation": {"max-examples": 1, "deterministic": True},
    "phases": {"stateful": {"enabled": False}, "coverage": {"enabled": False}},
})
ANONYMOUS_ACCESS = ("public", "signature")  # `x-access` of the operations an anonymous caller reaches


def _anonymous_reaches(ctx) -> bool:
    return ctx.operation.definition.raw.get("x-access") in ANONYMOUS_ACCESS


def _anonymous_refused(ctx) -> bool:
    return not _anonymous_reaches(ctx)


# The module is imported after `pytest_configure` booted the session's runtime (tests/conftest.py).
schema = schemathesis.openapi.from_wsgi("/api/openapi.json", create_app(current_runtime().config), config=CONFIG)
refused_schema = schemathesis.openapi.from_wsgi("/api/openapi.json", create_app(current_runtime().config),
                                                config=REFUSED_CONFIG).exclude(_anonymous_reaches)
# Function-scoped fixtures (the rolled-back transaction, the signed-in users) are shared by the
# examples of one operation on purpose: each operation runs in its own transaction.
EXAMPLES_SHARE_FIXTURES = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])


# Field rules an OpenAPI 3.0 schema cannot state (each is in the field's description or API.md):
# a check key, an order between two fields, a key unique inside a list, one field of two, a field
# required by another's value, an upload's content, a multipart field's number, no NUL in any string.
UNSTATABLE_RULES = {
    "siren": "9 digits (the pattern) with a valid check key",
    "siret": "14 digits (the pattern) with a valid check key",
    "endsAt": "after startsAt",
    "allocations": "a zone, and a reservation in a zone, appear once",
    "reuse": "each item gives faceIndex or quantity, not both",
    "file": "an upload's content is judged by its bytes (PDF, PNG, JPEG, TIFF), not its part's type",
    "faceIndex": "a multipart text field holding an integer from 0, or empty",
    "delivery": "`snapshot` required for the target `single_address`",
    "reason": "required with the query parameter `force=true` (manual self-billing)",
    "amountCents": "required with `decision` `adjust` (resolving a contested self-billed invoice)",
}
NUL_REFUSED = "NUL character"  # api.middleware.RefuseNul, for every string of every request


def _stated_by_the_document(fields: dict) -> bool:
    """True when a field refusal names a rule the document states (so the document was looser)."""
    return any(name not in UNSTATABLE_RULES and NUL_REFUSED not in str(messages)
               for name, messages in fields.items())


@schemathesis.check
def valid_data_passes_field_validation(ctx, response, case) -> None:
    """A request the document calls valid is never refused for one of its fields (400 with
    `details.fields`): the document is exactly as strict as the validation, but for the rules
    of `UNSTATABLE_RULES`."""
    if case.meta is None or not case.meta.generation.mode.is_positive or response.status_code != 400:
        return
    try:
        fields = (response.json().get("error") or {}).get("details", {}).get("fields")
    except ValueError:
        return
    if fields and _stated_by_the_document(fields):
        raise AssertionError(f"a schema-valid request was refused for its fields: {fields}")


def _cookies(user, organization=None) -> dict[str, str]:
    # As cookies, not a `Cookie` header: the WSGI transport sends its own cookie jar.
    from api.policy import SESSION_COOKIE
    from tests.factories import session_cookie

    return {SESSION_COOKIE: session_cookie(user, organization)}


@pytest.fixture
def admin_session():
    from tests.factories import make_admin

    return _cookies(make_admin())


@pytest.fixture
def business_session():
    from backend.identity.models import KybStatus
    from tests.factories import add_member, make_organization, make_user

    user = make_user()
    organization = make_organization("industrial", kyb_status=KybStatus.APPROVED)
    add_member(user, organization)
    return _cookies(user, organization)


# Each operation is called on the test's own app (the `app` fixture): its rate-limit counters
# (memory, per app) start at zero, so a 429 earned by earlier operations never answers for it.


@schema.exclude(_anonymous_refused).parametrize()  # `exclude`: the document's own route stays out
@EXAMPLES_SHARE_FIXTURES
def test_anonymous(case, app):
    case.call_and_validate(app=app)


@refused_schema.parametrize()
@EXAMPLES_SHARE_FIXTURES
def test_anonymous_refused(case, app):
    case.call_and_validate(app=app)


@schema.parametrize()
@EXAMPLES_SHARE_FIXTURES
def test_admin(case, app, admin_session):
    case.call_and_validate(app=app, cookies=admin_session)


@schema.parametrize()
@EXAMPLES_SHARE_FIXTURES
def test_business_member(case, app, business_session):
    case.call_and_validate(app=app, cookies=business_session)
