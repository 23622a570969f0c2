"""SIREN, SIRET, VAT number, IBAN and phone checks (python-stdnum behind the platform's stable
errors) against published examples."""

from __future__ import annotations

import pytest

from backend.errors import ValidationError
from backend.identity.french_ids import (
    check_iban,
    check_siren,
    check_siret,
    check_vat_number,
    to_e164,
    vat_number_for,
)


def _refusal(check, *args, **kwargs) -> tuple[str, dict]:
    with pytest.raises(ValidationError) as refused:
        check(*args, **kwargs)
    return refused.value.message, refused.value.details["fields"]


@pytest.mark.parametrize("siren", ["552100554", "303265045", "356000000"])
def test_valid_sirens_are_kept(siren):
    assert check_siren(siren) == siren


@pytest.mark.parametrize("siren", ["552100555", "55210055a", "55210055", "5521005540", "552 100 554", "",
                                   "\uff15\uff15\uff12100554"])  # full-width digits
def test_invalid_sirens_are_refused_with_the_stable_error(siren):
    assert _refusal(check_siren, siren) == ("invalid SIREN", {"siren": ["must be 9 digits with a valid check key"]})


def test_a_siret_with_a_luhn_key_is_kept_and_a_wrong_key_refused():
    assert check_siret("55210055400013", siren="552100554") == "55210055400013"
    assert _refusal(check_siret, "55210055400014", siren="552100554") == (
        "invalid SIRET", {"siret": ["must be 14 digits with a valid check key"]})
    assert _refusal(check_siret, "5521005540001", siren="552100554")[0] == "invalid SIRET"


def test_la_poste_establishments_use_the_digit_sum_rule():
    """La Poste's establishments share the SIREN 356000000 and break the Luhn rule: INSEE's
    published exception is that their SIRET digits sum to a multiple of 5."""
    assert check_siret("35600000000001", siren="356000000") == "35600000000001"  # digits sum to 15, not Luhn
    assert check_siret("35600000000899", siren="356000000") == "35600000000899"  # digits sum to 40
    assert _refusal(check_siret, "35600000000002", siren="356000000")[0] == "invalid SIRET"  # sum 16


def test_siret_must_belong_to_the_siren():
    assert _refusal(check_siret, "55210055400013", siren="303265045") == (
        "SIRET of another company", {"siret": ["must start with the SIREN 303265045"]})


def test_french_vat_number_key():
    assert vat_number_for("303265045") == "FR40303265045"  # a commonly cited example
    assert check_vat_number("fr 40 303 265 045", siren="303265045") == "FR40303265045"
    assert check_vat_number("FR40.303.265-045", siren="303265045") == "FR40303265045"
    for wrong in ("FR41303265045", "40303265045", "FR40552100554", "XX40303265045"):
        assert _refusal(check_vat_number, wrong, siren="303265045") == (
            "invalid VAT number", {"vatNumber": ["must be the French VAT number of SIREN 303265045"]})


def test_iban_check_digits_and_structure():
    assert check_iban("GB82WEST12345698765432") == "GB82WEST12345698765432"
    assert check_iban("fr76 3000 6000 0112 3456 7890 189") == "FR7630006000011234567890189"
    for wrong in ("FR7630006000011234567890188", "FR76300060000112345678901", "ZZ7630006000011234567890189", ""):
        assert _refusal(check_iban, wrong) == ("invalid IBAN", {"iban": ["not a valid IBAN"]})


@pytest.mark.parametrize(("raw", "e164"), [("06 12 34 56 78", "+33612345678"), ("+33 1 42 68 53 00", "+33142685300"),
                                          ("0033612345678", "+33612345678")])
def test_phones_are_kept_in_e164(raw, e164):
    assert to_e164(raw) == e164


@pytest.mark.parametrize("raw", ["12", "not a number", "+33 6 12"])
def test_invalid_phones_are_refused(raw):
    with pytest.raises(ValidationError):
        to_e164(raw)
