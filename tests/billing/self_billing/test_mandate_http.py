"""The self-billing mandate over real HTTP with a real worker: the admin requests it, the
simulator's signer page signs (or declines) it, its webhooks reach the onboarding webhook route,
the worker applies them, the signed PDF downloads; two concurrent requests make one mandate."""

from __future__ import annotations

import threading

import pytest
import requests

from backend.billing.models import SelfBillingMandate
from backend.billing.self_billing.mandate_document import STORAGE_CONTEXT
from backend.db import database
from backend.documents.seeding import seed_default_versions
from backend.onboarding.models import SignatureEvent
from tests.billing.helpers import approved_org
from tests.billing.self_billing.mandate_fixtures import (  # noqa: F401  (fixtures)
    BASE,
    api_server,
    app,
    make_simulator,
    provider,
    runtime,
    simulator,
)
from tests.factories import add_member, make_admin, make_user, session_cookie
from tests.onboarding.conftest import wait_until

pytestmark = pytest.mark.committed


@pytest.fixture
def live(api_server, simulator, provider, runtime, broker, worker):
    """The API on a socket, booted with a client on the simulator (the worker's runtime too), the
    simulator's webhooks pointed at the API; an admin and a distributor manager signed in."""
    with database.connection_context():
        seed_default_versions(runtime.storage)  # committed: the worker and the web render with them
        organization = approved_org("distributor")
        manager = make_user()
        add_member(manager, organization, "manager")
        admin_user = make_admin()
        sessions = {"admin": session_cookie(admin_user), "manager": session_cookie(manager, organization)}
    simulator.sender.url = f"{api_server}/api/webhooks/esign"
    return {"url": f"{api_server}{BASE.format(organization.id)}", "organization": organization,
            "simulator": simulator, "api": api_server,
            **{name: {"Cookie": f"auth.session_token={token}"} for name, token in sessions.items()}}


def _mandate(live) -> dict:
    return requests.get(live["url"], headers=live["admin"], timeout=30).json()["data"]["mandate"]


def test_requested_signed_on_the_signer_page_then_downloaded(live):
    requested = requests.post(live["url"], headers=live["admin"], timeout=60)
    assert requested.status_code == 201, requested.text
    link = requested.json()["data"]["signatureLink"]
    pid = requested.json()["data"]["mandate"]["esignRequestRef"]
    page = requests.get(link, timeout=5)  # the signer page the provider's invitation opens
    assert page.status_code == 200 and f'action="/sign/{pid}/sign"' in page.text
    requests.post(f"{live['simulator'].url}/sign/{pid}/open", timeout=5).raise_for_status()
    requests.post(f"{live['simulator'].url}/sign/{pid}/sign", timeout=5).raise_for_status()
    wait_until(lambda: _mandate(live)["status"] == "signed", timeout=30)
    seen = requests.get(live["url"], headers=live["manager"], timeout=30).json()["data"]["mandate"]
    assert seen["status"] == "signed" and "esignRequestRef" not in seen and seen["documentAvailable"] is True
    document = requests.get(f"{live['url']}/document", headers=live["manager"], timeout=30)
    assert document.status_code == 200 and document.headers["Content-Type"] == "application/pdf"
    assert document.content.startswith(b"%PDF-") and b"signed at esign simulator" in document.content
    with database.connection_context():
        row = SelfBillingMandate.get(SelfBillingMandate.esign_request_ref == pid)
        assert live["simulator"].sender.idle()
        names = {e.event_name for e in SignatureEvent.select().where(
            SignatureEvent.provider_signature_request_id == pid)}
    assert {"signature_request.activated", "signer.notified", "signer.link_opened", "signature_request.done"} <= names
    assert document.content == _stored(row)
    again = requests.post(live["url"], headers=live["admin"], timeout=30)
    assert again.status_code == 409 and again.json()["error"]["details"]["reason"] == "mandate_active"
    revoked = requests.delete(live["url"], headers=live["admin"], json={"reason": "fin du partenariat"}, timeout=30)
    assert revoked.status_code == 200 and revoked.json()["data"]["mandate"]["status"] == "revoked"


def _stored(row: SelfBillingMandate) -> bytes:
    from backend.runtime import current_runtime

    return current_runtime().storage.read_bytes(STORAGE_CONTEXT, row.document_storage_key)


def test_declined_on_the_signer_page_frees_the_organization_for_a_new_request(live):
    requested = requests.post(live["url"], headers=live["admin"], timeout=60)
    assert requested.status_code == 201, requested.text
    pid = requested.json()["data"]["mandate"]["esignRequestRef"]
    requests.post(f"{live['simulator'].url}/sign/{pid}/decline", timeout=5).raise_for_status()
    wait_until(lambda: _mandate(live)["status"] == "declined", timeout=30)
    declined = _mandate(live)
    assert declined["declinedAt"] and declined["declineReason"] in ("signer.declined", "signature_request.declined")
    document = requests.get(f"{live['url']}/document", headers=live["manager"], timeout=30)
    assert document.status_code == 404 and document.json()["error"]["code"] == "BILLING_PDF_NOT_READY"
    assert requests.delete(live["url"], headers=live["admin"], json={"reason": "x"}, timeout=30).status_code == 409
    assert requests.post(live["url"], headers=live["admin"], timeout=60).status_code == 201


def test_two_concurrent_requests_make_one_mandate(live):
    start = threading.Barrier(2)
    answers: list[requests.Response] = []

    def request() -> None:
        start.wait()
        answers.append(requests.post(live["url"], headers=live["admin"], timeout=120))

    threads = [threading.Thread(target=request) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=180)
    assert sorted(a.status_code for a in answers) == [201, 409]
    [refused] = [a for a in answers if a.status_code == 409]
    assert refused.json()["error"]["code"] == "CONFLICT"
    assert refused.json()["error"]["details"]["reason"] in ("mandate_request_in_progress", "mandate_active")
    with database.connection_context():
        rows = list(SelfBillingMandate.select().where(
            SelfBillingMandate.organization_id == live["organization"].id))
    assert [r.status for r in rows] == ["pending_signature"]
    assert len(live["simulator"].store.requests) == 1  # the refused one never reached the provider
