"""The company registry client against the registry simulator over real HTTP, faults included."""

from __future__ import annotations

import pytest
import requests

from backend.onboarding.registry import CompanyState, RegistryUnavailable, Representative
from backend.onboarding.registry_client import LOGGED_BODY_CHARS, RegistryClient
from ops.simulators.registry import RegistrySimulator
from tests.factories import random_siren


@pytest.fixture
def simulator():
    with RegistrySimulator() as simulator:
        yield simulator


def fast(simulator, **options) -> RegistryClient:
    return RegistryClient(simulator.url, backoff_seconds=0.01, max_backoff_seconds=0.02, **options)


def company(siren: str, **overrides) -> dict:
    return {"siren": siren, "legalName": "Fromagerie du Lac SAS", "state": "active", "nafCode": "10.51C",
            "address": {"street": "3 rue du Lac", "postalCode": "74000", "city": "Annecy"},
            "representatives": [{"firstName": "Jean-Marc", "lastName": "Dupont", "role": "Président de SAS"}],
            **overrides}


def test_an_extract_is_read_from_the_directory_shape(simulator):
    siren = random_siren()
    created = requests.post(f"{simulator.url}/_control/companies", json=company(siren), timeout=5)
    assert created.status_code == 201
    raw = requests.get(f"{simulator.url}/search", params={"q": siren}, timeout=5).json()
    assert raw["total_results"] == 1 and raw["results"][0]["dirigeants"][0] == {
        "nom": "DUPONT", "prenoms": "JEAN-MARC", "qualite": "Président de SAS", "type_dirigeant": "personne physique"}
    extract = fast(simulator).lookup(siren)
    assert (extract.siren, extract.legal_name, extract.state, extract.naf_code) == (
        siren, "FROMAGERIE DU LAC SAS", CompanyState.ACTIVE, "10.51C")
    assert (extract.street, extract.postal_code, extract.city) == ("3 RUE DU LAC", "74000", "ANNECY")
    assert extract.representatives == (Representative("JEAN-MARC", "DUPONT", "Président de SAS"),)
    assert extract.updated_on == "2026-01-15"


def test_the_same_siren_again_replaces_the_company_and_bad_bodies_are_refused(simulator):
    siren = random_siren()
    simulator.add_company(company(siren))
    replaced = requests.post(f"{simulator.url}/_control/companies", timeout=5,
                             json=company(siren, legalName="Autre Nom", representatives=[]))
    assert replaced.status_code == 201
    assert fast(simulator).lookup(siren).representatives == ()
    assert requests.post(f"{simulator.url}/_control/companies", json={"siren": "12"}, timeout=5).status_code == 400


def test_a_legal_person_among_the_representatives_is_left_out(simulator, monkeypatch):
    siren = random_siren()
    simulator.add_company(company(siren))
    from ops.simulators import registry as module

    original = module.directory_result

    def with_holding(found, **kwargs):
        result = original(found, **kwargs)
        result["dirigeants"].append({"siren": "378159818", "denomination": "HOLDING", "qualite": "Président",
                                     "type_dirigeant": "personne morale"})
        return result

    monkeypatch.setattr(module, "directory_result", with_holding)
    assert [r.last_name for r in fast(simulator).lookup(siren).representatives] == ["DUPONT"]


def test_unknown_and_ceased_switches(simulator):
    siren = random_siren()
    client = fast(simulator)
    assert client.lookup(siren) is None  # never registered
    simulator.add_company(company(siren))
    requests.post(f"{simulator.url}/_control/faults", json={"ceased": [siren]}, timeout=5)
    assert client.lookup(siren).state == CompanyState.CEASED
    simulator.set_faults(unknown=[siren])
    assert client.lookup(siren) is None
    requests.post(f"{simulator.url}/_control/reset", timeout=5)
    assert client.lookup(siren) is None and client.lookup("552100554").state == CompanyState.ACTIVE  # demo only


def test_429_and_503_are_retried_then_answered(simulator):
    siren = random_siren()
    simulator.add_company(company(siren))
    simulator.set_faults(rateLimited=1, unavailable=1, retryAfterSeconds=0)
    assert fast(simulator, attempts=3).lookup(siren).siren == siren
    assert requests.get(f"{simulator.url}/_control/state", timeout=5).json()["searches"] == 3


def test_a_registry_that_stays_down_or_too_slow_is_unavailable(simulator):
    simulator.set_faults(unavailable=5)
    with pytest.raises(RegistryUnavailable, match="HTTP 503"):
        fast(simulator, attempts=2).lookup("552100554")
    simulator.clear_faults()
    simulator.set_faults(delaySeconds=0.5)
    with pytest.raises(RegistryUnavailable, match="ReadTimeout"):
        fast(simulator, attempts=2, read_timeout=0.1).lookup("552100554")


def test_an_answer_of_another_shape_is_logged_size_limited_and_unavailable(simulator, log_lines):
    simulator.set_faults(malformed=1)
    with pytest.raises(RegistryUnavailable) as raised:
        fast(simulator).lookup("552100554")
    assert raised.value.code == "REGISTRY_UNAVAILABLE"
    [line] = [line for line in log_lines() if line["message"] == "company registry answer not understood"]
    assert line["siren"] == "552100554" and len(line["body"]) <= LOGGED_BODY_CHARS
