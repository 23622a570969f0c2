"""Bad input gets a clear 4xx, never a 500: deep nesting, NUL characters, numbers past bigint,
chunked bodies, and an admin removing the last admin role."""

from __future__ import annotations

import io
import json

import falcon.testing
import pytest
from hypothesis import given
from hypothesis import strategies as st

from backend.json_input import MAX_DEPTH, nesting_depth
from backend.onboarding.models import SignatureEvent
from tests.factories import make_user, signed_in
from tests.onboarding.conftest import event_body, signed_headers

DEEP = b"[" * 1000 + b"]" * 1000


def test_nesting_depth_ignores_brackets_inside_strings():
    assert nesting_depth(b'{"a": [1, {"b": "[[[[\\"]]"}]}') == 3
    assert nesting_depth(b'"{{{{"') == 0
    assert nesting_depth(DEEP) == 1000


def _depth(value) -> int:
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
    return 0 if children is None else 1 + max(map(_depth, children), default=0)


_TEXT = st.text(alphabet='[]{}"\\ab,:')  # what a depth count could mistake for structure
_JSON = st.recursive(st.none() | st.integers() | _TEXT,
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
                     max_leaves=20)


@given(_JSON, st.booleans())
def test_nesting_depth_is_the_parsed_values_depth(value, compact):
    raw = json.dumps(value, separators=(",", ":") if compact else None).encode()
    assert nesting_depth(raw) == _depth(value)


def test_an_unpaired_quote_is_invalid_json_not_a_500(client):
    """Found by the fuzz test: a quote left unpaired once the strings are removed broke the depth
    count (KeyError, 500) before the parser could refuse the body."""
    assert nesting_depth(b'{"a": "b", "c}') == 1
    answer = client.simulate_post("/api/auth/sign-in", body=b'{"email": "x", "password}',
                                  headers={"content-type": "application/json"})
    assert answer.status_code == 400 and answer.json["error"]["code"] == "VALIDATION_ERROR"


@pytest.mark.parametrize("body", [DEEP, b'{"email": ' + DEEP + b', "password": "x"}'])
def test_deeply_nested_json_is_refused_before_parsing(client, body):
    answer = client.simulate_post("/api/auth/sign-in", body=body, headers={"content-type": "application/json"})
    assert answer.status_code == 400
    assert answer.json["error"]["code"] == "VALIDATION_ERROR"
    assert f"{MAX_DEPTH} levels" in answer.json["error"]["message"]


def test_a_signed_but_deeply_nested_webhook_is_refused_without_a_500(client):
    body = b'{"event_id": "evt-deep", "event_name": "x", "data": ' + DEEP + b"}"
    answer = client.simulate_post("/api/webhooks/esign", body=body, headers=signed_headers(body))
    assert answer.status_code == 400
    assert SignatureEvent.select().count() == 0


@pytest.mark.parametrize(("path", "query"), [
    ("/api/admin/organizations", "search=a%00b"),
    ("/api/admin/organizations/industrial%3A%00", ""),
])
def test_nul_in_the_path_or_query_is_refused(client, path, query):
    answer = client.simulate_get(path, query_string=query, headers=signed_in(make_user(roles=["admin"])))
    assert answer.status_code == 400
    assert answer.json["error"]["code"] == "VALIDATION_ERROR"


def test_nul_in_a_json_string_is_refused(client):
    answer = client.simulate_post("/api/auth/sign-up", json={"email": "nul@example.com", "password": "long enough",
                                                             "name": "a\x00b"})
    assert answer.status_code == 400
    assert "NUL" in answer.json["error"]["message"]


@pytest.mark.parametrize("page", ["99999999999999999999", "9223372036854775807", "100000000"])
def test_a_page_past_bigint_is_a_validation_error(client, page):
    answer = client.simulate_get("/api/admin/organizations", query_string=f"page={page}",
                                 headers=signed_in(make_user(roles=["admin"])))
    assert answer.status_code == 400


def _chunked(app, method: str, path: str, body: bytes, headers: dict | None = None):
    """A request whose body comes chunked: no Content-Length, and a server (gunicorn) that says
    its input ends by itself."""
    env = falcon.testing.create_environ(path=path, method=method, headers={
        "content-type": "application/json", "transfer-encoding": "chunked", **(headers or {})})
    env.pop("CONTENT_LENGTH", None)
    env["wsgi.input"] = io.BytesIO(body)
    env["wsgi.input_terminated"] = True
    start = falcon.testing.StartResponseMock()
    chunks = app(env, start)
    return start.status, json.loads(b"".join(chunks))


def test_a_chunked_json_body_is_read(app):
    status, answer = _chunked(app, "POST", "/api/auth/sign-in",
                              json.dumps({"email": "nobody@example.com", "password": "wrong password"}).encode())
    assert status.startswith("401") and answer["error"]["code"] == "AUTH_INVALID_CREDENTIALS"


def test_a_chunked_signed_webhook_passes_its_signature(app):
    body = event_body("signer.link_opened", "prov-chunked", event_id="evt-chunked")
    status, answer = _chunked(app, "POST", "/api/webhooks/esign", body, signed_headers(body))
    assert status.startswith("200") and answer["data"] == {"received": True, "duplicate": False}


def test_an_admin_cannot_remove_their_own_admin_role_nor_the_last_admin(client):
    admin = make_user(roles=["admin"])
    own = client.simulate_patch(f"/api/admin/users/{admin.id}", headers=signed_in(admin),
                                json={"roles": ["industrial"]})
    assert own.status_code == 409 and own.json["error"]["details"]["reason"] == "own_admin_role"
    from backend.errors import Conflict
    from backend.identity.memberships import set_roles
    from backend.identity.models import User

    User.update(roles=[]).where(User.id != admin.id, User.roles.contains("admin")).execute()
    with pytest.raises(Conflict) as last:
        set_roles(User.get_by_id(admin.id), ["industrial"], None, actor_user_id="someone-else")
    assert last.value.details["reason"] == "last_admin"
    second = make_user(roles=["admin"])
    removed = client.simulate_patch(f"/api/admin/users/{second.id}", headers=signed_in(admin), json={"roles": []})
    assert removed.status_code == 200 and removed.json["data"]["user"]["roles"] == []
