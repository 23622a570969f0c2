"""The billing profile of a company established in another member state: its VAT number is one of
that state (the number its reverse-charged invoices carry), checked by the state's own rules; a
number of another state, or a wrong one, is 400 `VALIDATION_ERROR` on `vatNumber`."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from backend.billing import vat
from tests.factories import add_member, make_organization, make_user, signed_in
from tests.identity.test_organizations import billing_body

BRUSSELS = {"street": "10 rue Neuve", "postalCode": "1000", "city": "Bruxelles", "country": "be"}


def put_profile(client, **overrides):
    user, organization = make_user(), make_organization("industrial")
    add_member(user, organization)
    return client.simulate_put(f"/api/organizations/{organization.id}/billing-profile", headers=signed_in(user),
                               json=billing_body(organization.siren, **overrides))


def test_a_vat_number_of_the_member_state_of_the_address_is_stored_compact(client):
    answer = put_profile(client, address=BRUSSELS, vatNumber="be 0403.019.261")
    assert answer.status_code == 200, answer.json
    profile = answer.json["data"]["billingProfile"]
    assert (profile["vatNumber"], profile["address"]["country"]) == ("BE0403019261", "BE")


def test_the_longest_vat_numbers_of_a_member_state_fit(client):
    amsterdam = {**BRUSSELS, "postalCode": "1012 AB", "city": "Amsterdam", "country": "NL"}
    answer = put_profile(client, address=amsterdam, vatNumber="NL004495445B01")
    assert answer.status_code == 200, answer.json
    assert answer.json["data"]["billingProfile"]["vatNumber"] == "NL004495445B01"


@pytest.mark.parametrize("number", [
    "BE0403019262",  # a wrong check digit
    "NL004495445B01",  # valid, but of another member state than the address's
    "FR40303265045",  # a French one, for an address in Belgium
])
def test_an_invalid_vat_number_for_the_address_is_refused(client, number):
    answer = put_profile(client, address=BRUSSELS, vatNumber=number)
    assert answer.status_code == 400
    error = answer.json["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert error["details"]["fields"]["vatNumber"] == [
        "must be a valid VAT number of BE, the country of the billing address"]


MEMBER_NUMBERS = {"BE": "BE0403019261", "NL": "NL004495445B01", "DE": "DE136695976", "FR": "FR40303265045"}


@given(seller=st.sampled_from(["FR", "BE", "DE"]),
       buyer=st.sampled_from(["FR", "BE", "NL", "DE", "CH", "US"]),
       number=st.sampled_from([*MEMBER_NUMBERS.values(), "BE0403019262", "CHE116281710", None]),
       rate_bps=st.integers(min_value=1, max_value=10_000))
def test_a_sale_is_reverse_charged_exactly_to_a_buyer_with_a_valid_number_of_another_member_state(
        seller, buyer, number, rate_bps):
    expected = buyer != seller and buyer in MEMBER_NUMBERS and number == MEMBER_NUMBERS[buyer]
    seller_party, buyer_party = {"country": seller}, {"country": buyer, "vatNumber": number}
    rate = vat.rate_bps_between(seller_party, buyer_party, rate_bps=rate_bps)
    assert rate == (0 if expected else rate_bps)
    assert vat.reverse_charged_invoice(rate_bps=rate, seller=seller_party, buyer=buyer_party) is expected
