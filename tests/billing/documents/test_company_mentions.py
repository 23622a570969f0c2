"""The company mentions (legal form, share capital, registration): a billing profile's, checked
and optional in the API, shown missing to the KYB reviewer; the platform's, checked at boot."""

from __future__ import annotations

import pytest

from backend.config import ConfigError, load_config
from backend.identity.models import KybStatus
from tests.factories import add_member, make_organization, make_user, signed_in, siret_for
from tests.production_settings import PRODUCTION

ADMIN = ["admin"]


def _body(siren: str, **mentions) -> dict:
    return {"legalName": "Laiterie Test SA", "siret": siret_for(siren), "vatNumber": None,
            "address": {"street": "1 rue de la Paix", "postalCode": "75002", "city": "Paris", "country": "FR"},
            "iban": None, "signer": {"firstName": "Inès", "lastName": "Martin", "email": "ines@example.com",
                                     "phone": "0612345678", "onRegistryExtract": True}, **mentions}


def _spaced(siren: str) -> str:
    return f"{siren[:3]} {siren[3:6]} {siren[6:]}"


def test_a_billing_profile_takes_its_company_mentions_checked_and_optional(client):
    user, organization = make_user(), make_organization("distributor", kyb_status=KybStatus.SUBMITTED)
    add_member(user, organization)
    path, headers = f"/api/organizations/{organization.id}/billing-profile", signed_in(user)
    siren = organization.siren
    first = client.simulate_put(path, headers=headers, json=_body(siren, legalForm=" SAS ", shareCapitalCents=5_000_000,
                                                                  registration=f"rcs  Annecy {siren}"))
    assert first.status_code == 200, first.json
    profile = first.json["data"]["billingProfile"]
    assert (profile["legalForm"], profile["shareCapitalCents"], profile["registration"]) == \
        ("SAS", 5_000_000, f"RCS Annecy {_spaced(siren)}")
    kept = client.simulate_put(path, headers=headers, json=_body(siren)).json["data"]["billingProfile"]
    assert (kept["legalForm"], kept["registration"]) == ("SAS", f"RCS Annecy {_spaced(siren)}")  # left out: kept
    for mentions in ({"shareCapitalCents": 0}, {"registration": "RCS Paris 732 829 320", "legalForm": "1 SAS"}):
        wrong = client.simulate_put(path, headers=headers, json=_body(siren, **mentions))
        assert wrong.status_code == 400 and wrong.json["error"]["code"] == "VALIDATION_ERROR"
        assert set(wrong.json["error"]["details"]["fields"]) == set(mentions)
    cleared = client.simulate_put(path, headers=headers, json=_body(siren, registration=None, shareCapitalCents=None))
    assert cleared.json["data"]["billingProfile"]["registration"] is None

    admin = signed_in(make_user(roles=ADMIN))
    pending = client.simulate_get("/api/admin/approvals/pending", headers=admin, params={"search": siren}).json["data"]
    (item,) = [item for item in pending["items"] if item["id"] == organization.id]
    assert item["companyMentionsMissing"] == ["shareCapitalCents", "registration"]


def test_the_platforms_mentions_are_checked_at_boot_and_required_in_production():
    config = load_config({"PLATFORM_LEGAL_SIRET": "73282932000074", "PLATFORM_LEGAL_FORM": "SAS",
                          "PLATFORM_SHARE_CAPITAL_CENTS": "5000000", "PLATFORM_REGISTRATION": "RCS Paris 732829320"})
    assert (config.platform_legal_form, config.platform_share_capital_cents, config.platform_registration) == \
        ("SAS", 5_000_000, "RCS Paris 732 829 320")
    with pytest.raises(ConfigError) as refused:
        load_config({"PLATFORM_LEGAL_SIRET": "73282932000074", "PLATFORM_REGISTRATION": "RCS Paris 901 234 567",
                     "PLATFORM_SHARE_CAPITAL_CENTS": "-1"})
    assert "PLATFORM_REGISTRATION must name the company's SIREN 732829320" in str(refused.value)
    assert "PLATFORM_SHARE_CAPITAL_CENTS must be a positive number of cents" in str(refused.value)
    for name in ("PLATFORM_LEGAL_FORM", "PLATFORM_SHARE_CAPITAL_CENTS", "PLATFORM_REGISTRATION"):
        with pytest.raises(ConfigError) as missing:
            load_config({key: value for key, value in PRODUCTION.items() if key != name})
        assert name in str(missing.value)
