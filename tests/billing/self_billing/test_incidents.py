"""Reservation incidents over HTTP: declaration inside the window only (422 with the reason
outside), one open at a time (409, also under two concurrent declarations), who may declare and
read, eligibility reasons, release by an admin (audited, note required), the admin list."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from backend import clock
from backend.billing.models import AuditEntry, ReservationIncident
from backend.billing.self_billing import incidents
from backend.billing.self_billing.business_days import incident_window
from backend.errors import Conflict
from tests.billing.helpers import Market
from tests.billing.self_billing.data import DURING, LAST_SECOND, Party, admin_headers
from tests.factories import add_member, make_user, signed_in


@pytest.fixture
def world():
    industrial, distributor = Party("industrial"), Party("distributor")
    reservation = Market().reservation(industrial.organization, distributor.organization)
    return industrial, distributor, reservation


def path(reservation) -> str:
    return f"/api/billing/reservations/{reservation.id}/incident"


def declare(client, reservation, headers, reason="Le meuble n'a pas été installé"):
    return client.simulate_post(path(reservation), json={"reason": reason}, headers=headers)


def test_declare_inside_the_window_then_409_while_open(client, world):
    industrial, _, reservation = world
    assert incident_window(reservation.starts_at, reservation.ends_at).closes_at == LAST_SECOND
    with clock.frozen_at(LAST_SECOND):
        created = declare(client, reservation, industrial.headers)
        assert created.status_code == 201, created.json
        incident = created.json["data"]["incident"]
        assert (incident["status"], incident["reason"], incident["organizationId"]) == (
            "open", "Le meuble n'a pas été installé", industrial.organization.id)
        assert incident["declaredAt"] == "2026-12-18T22:59:59.000Z" and incident["resolutionNote"] is None
        again = declare(client, reservation, industrial.headers)
    assert again.status_code == 409 and again.json["error"]["code"] == "CONFLICT"
    assert again.json["error"]["details"]["reason"] == "incident_open"
    assert ReservationIncident.select().where(ReservationIncident.reservation_id == reservation.id).count() == 1


@pytest.mark.parametrize(("moment", "reason"), [
    (datetime(2026, 11, 30, 23, 59, 59, tzinfo=UTC), "not_started"),
    (LAST_SECOND + timedelta(seconds=1), "window_closed"),
])
def test_422_outside_the_window_with_the_reason(client, world, moment, reason):
    industrial, _, reservation = world
    with clock.frozen_at(moment):
        refused = declare(client, reservation, industrial.headers)
    assert refused.status_code == 422 and refused.json["error"]["code"] == "INCIDENT_WINDOW_CLOSED"
    details = refused.json["error"]["details"]
    assert details["reason"] == reason and details["closesAt"] == "2026-12-18T22:59:59.000Z"
    assert not ReservationIncident.select().where(ReservationIncident.reservation_id == reservation.id).exists()


def test_who_may_declare_and_bad_bodies(client, world):
    industrial, distributor, reservation = world
    with clock.frozen_at(DURING):
        assert declare(client, reservation, distributor.headers).status_code == 403
        assert declare(client, reservation, admin_headers()).status_code == 403
        assert declare(client, reservation, Party("industrial").headers).status_code == 404
        assert client.simulate_post(path(reservation), json={}, headers=industrial.headers).status_code == 400
        blank = declare(client, reservation, industrial.headers, reason="   ")
        assert blank.status_code == 400 and blank.json["error"]["details"]["fields"]["reason"] == ["required"]
        member = make_user()
        add_member(member, industrial.organization, "member")
        assert declare(client, reservation, signed_in(member, industrial.organization)).status_code == 201


def test_eligibility_reasons_for_each_reader(client, world):
    industrial, distributor, reservation = world

    def state(headers):
        answer = client.simulate_get(path(reservation), headers=headers)
        assert answer.status_code == 200, answer.json
        return answer.json["data"]

    with clock.frozen_at(datetime(2026, 11, 30, tzinfo=UTC)):
        before = state(industrial.headers)
    assert before["incident"] is None
    assert before["eligibility"] == {"canDeclare": False, "reason": "not_started",
                                     "opensAt": "2026-12-01T00:00:00.000Z", "closesAt": "2026-12-18T22:59:59.000Z"}
    with clock.frozen_at(DURING):
        assert state(industrial.headers)["eligibility"]["reason"] == "ok"
        assert state(industrial.headers)["eligibility"]["canDeclare"] is True
        assert state(distributor.headers)["eligibility"]["reason"] == "not_industrial"
        assert state(admin_headers())["eligibility"]["reason"] == "not_industrial"
        assert client.simulate_get(path(reservation), headers=Party("distributor").headers).status_code == 404
        declare(client, reservation, industrial.headers)
        opened = state(distributor.headers)
        assert opened["incident"]["status"] == "open"
        assert state(industrial.headers)["eligibility"] == {**before["eligibility"], "reason": "incident_open"}
    with clock.frozen_at(LAST_SECOND + timedelta(seconds=1)):
        assert state(industrial.headers)["eligibility"]["reason"] == "incident_open"
        incidents.release(incident_id=opened["incident"]["id"], user_id="admin", resolution_note="Posé le 3")
        closed = state(industrial.headers)
    assert closed["eligibility"]["reason"] == "window_closed"
    assert closed["incident"]["status"] == "released"


def test_release_and_list(client, world):
    industrial, _, reservation = world
    admin = admin_headers()
    with clock.frozen_at(DURING):
        incident_id = declare(client, reservation, industrial.headers).json["data"]["incident"]["id"]
    listed = client.simulate_get("/api/admin/billing/incidents", headers=admin)
    assert listed.status_code == 200
    assert incident_id in [i["id"] for i in listed.json["data"]["items"]] and listed.json["data"]["total"] >= 1
    release = f"/api/admin/billing/incidents/{incident_id}/release"
    assert client.simulate_post(release, json={"resolutionNote": "x"}, headers=industrial.headers).status_code == 403
    assert client.simulate_post(release, json={}, headers=admin).status_code == 400
    released = client.simulate_post(release, json={"resolutionNote": "Meuble posé le 3 décembre"}, headers=admin)
    assert released.status_code == 200, released.json
    incident = released.json["data"]["incident"]
    assert (incident["status"], incident["resolutionNote"]) == ("released", "Meuble posé le 3 décembre")
    assert incident["releasedAt"] is not None and incident["releasedByUserId"]
    twice = client.simulate_post(release, json={"resolutionNote": "encore"}, headers=admin)
    assert twice.status_code == 409 and twice.json["error"]["details"]["reason"] == "incident_released"
    assert client.simulate_post("/api/admin/billing/incidents/nope/release", json={"resolutionNote": "x"},
                                headers=admin).status_code == 404
    audit = AuditEntry.get(AuditEntry.action == "billing.reservation.incident.released")
    assert (audit.reason, audit.reservation_id) == ("Meuble posé le 3 décembre", reservation.id)
    archive = client.simulate_get("/api/admin/billing/incidents?status=released&limit=1&offset=0", headers=admin)
    assert [i["id"] for i in archive.json["data"]["items"]] == [incident_id]
    assert archive.json["data"]["limit"] == 1
    open_now = client.simulate_get("/api/admin/billing/incidents", headers=admin).json["data"]["items"]
    assert incident_id not in [i["id"] for i in open_now]
    assert client.simulate_get("/api/admin/billing/incidents?status=closed", headers=admin).status_code == 400
    # Released, a new incident may be declared in the window.
    with clock.frozen_at(DURING):
        assert declare(client, reservation, industrial.headers).status_code == 201


def test_the_partial_unique_index_holds_without_the_guard(world):
    industrial, _, reservation = world
    with clock.frozen_at(DURING):
        incidents.declare(reservation_id=reservation.id, industrial_organization_id=industrial.organization.id,
                          user_id=industrial.user.id, reason="premier")
        with pytest.raises(Conflict):
            incidents.declare(reservation_id=reservation.id, industrial_organization_id=industrial.organization.id,
                              user_id=industrial.user.id, reason="second")
    from peewee import IntegrityError

    from backend.db import transaction

    with pytest.raises(IntegrityError), transaction():
        ReservationIncident.create(reservation_id=reservation.id, organization_id=industrial.organization.id,
                                   reason="contourné", declared_by_user_id=industrial.user.id, declared_at=DURING)


@pytest.mark.committed
def test_two_concurrent_declarations_open_one_incident():
    import threading

    from backend.db import database, transaction

    with database.connection_context(), transaction():
        industrial = Party("industrial")
        reservation = Market().reservation(industrial.organization, Party("distributor").organization)
    start = threading.Barrier(2)
    outcomes: list[str] = []

    def declare_once(reason: str) -> None:
        with database.connection_context():
            start.wait(timeout=30)
            try:
                incidents.declare(reservation_id=reservation.id, industrial_organization_id=industrial.organization.id,
                                  user_id=industrial.user.id, reason=reason)
                outcomes.append("declared")
            except Conflict as exc:
                outcomes.append(exc.details["reason"])

    with clock.frozen_at(DURING):
        threads = [threading.Thread(target=declare_once, args=(f"incident {n}",)) for n in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
    assert sorted(outcomes) == ["declared", "incident_open"]
    with database.connection_context():
        assert ReservationIncident.select().where(ReservationIncident.reservation_id == reservation.id).count() == 1
