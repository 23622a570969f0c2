"""SIREN, SIRET, VAT number, IBAN and phone checks against published examples."""

from __future__ import annotations

import pytest

from backend.errors import ValidationError
from backend.identity.french_ids import (
    check_siret,
    check_vat_number,
    is_valid_iban,
    is_valid_siren,
    is_valid_siret,
    luhn_valid,
    to_e164,
    vat_number_for,
)


def test_siren_and_siret_luhn_keys():
    assert is_valid_siren("552100554") and is_valid_siren("303265045")
    assert not is_valid_siren("552100555") and not is_valid_siren("55210055a")
    assert is_valid_siret("55210055400013") and not is_valid_siret("55210055400014")


def test_la_poste_establishments_use_the_digit_sum_rule():
    assert not luhn_valid("35600000000001")
    assert is_valid_siret("35600000000001")  # digits sum to 15
    assert not is_valid_siret("35600000000002")


def test_siret_must_belong_to_the_siren():
    assert check_siret("55210055400013", siren="552100554") == "55210055400013"
    with pytest.raises(ValidationError):
        check_siret("55210055400013", siren="303265045")


def test_french_vat_number_key():
    assert vat_number_for("303265045") == "FR40303265045"  # a commonly cited example
    assert check_vat_number("fr 40 303 265 045", siren="303265045") == "FR40303265045"
    with pytest.raises(ValidationError):
        check_vat_number("FR41303265045", siren="303265045")


def test_iban_mod_97():
    assert is_valid_iban("GB82WEST12345698765432") and is_valid_iban("FR7630006000011234567890189")
    assert not is_valid_iban("FR7630006000011234567890188")


@pytest.mark.parametrize(("raw", "e164"), [("06 12 34 56 78", "+33612345678"), ("+33 1 42 68 53 00", "+33142685300"),
                                          ("0033612345678", "+33612345678")])
def test_phones_are_kept_in_e164(raw, e164):
    assert to_e164(raw) == e164


@pytest.mark.parametrize("raw", ["12", "not a number", "+33 6 12"])
def test_invalid_phones_are_refused(raw):
    with pytest.raises(ValidationError):
        to_e164(raw)
