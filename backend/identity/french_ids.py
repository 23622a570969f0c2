"""French company identifiers and contact details: SIREN, SIRET, VAT number, IBAN, phone."""

from __future__ import annotations

import re

import phonenumbers

from backend.errors import ValidationError

# La Poste's establishments share one SIREN and break the Luhn rule; INSEE's published exception
# is that their SIRET digits sum to a multiple of 5.
LA_POSTE_SIREN = "356000000"


def luhn_valid(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char) * (2 if index % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def luhn_check_digit(prefix: str) -> str:
    """The digit that makes `prefix + digit` Luhn-valid."""
    return next(d for d in "0123456789" if luhn_valid(prefix + d))


def is_valid_siren(siren: str) -> bool:
    return bool(re.fullmatch(r"\d{9}", siren)) and luhn_valid(siren)


def is_valid_siret(siret: str) -> bool:
    if not re.fullmatch(r"\d{14}", siret):
        return False
    if siret.startswith(LA_POSTE_SIREN):
        return sum(int(c) for c in siret) % 5 == 0
    return luhn_valid(siret)


def vat_number_for(siren: str) -> str:
    """The French VAT number of a SIREN: FR + a two-digit key + the SIREN."""
    key = (12 + 3 * (int(siren) % 97)) % 97
    return f"FR{key:02d}{siren}"


def is_valid_iban(iban: str) -> bool:
    if not re.fullmatch(r"[A-Z]{2}\d{2}[A-Z0-9]{10,30}", iban):
        return False
    rearranged = iban[4:] + iban[:4]
    return int("".join(str(int(c, 36)) for c in rearranged)) % 97 == 1


def check_siren(siren: str) -> str:
    if not is_valid_siren(siren):
        raise ValidationError("invalid SIREN", fields={"siren": ["must be 9 digits with a valid check key"]})
    return siren


def check_siret(siret: str, *, siren: str) -> str:
    if not is_valid_siret(siret):
        raise ValidationError("invalid SIRET", fields={"siret": ["must be 14 digits with a valid check key"]})
    if siret[:9] != siren:
        raise ValidationError("SIRET of another company", fields={"siret": [f"must start with the SIREN {siren}"]})
    return siret


def check_vat_number(vat_number: str, *, siren: str) -> str:
    """A French VAT number whose key is right and whose SIREN is the organization's."""
    normalized = re.sub(r"[\s.-]", "", vat_number).upper()
    if normalized != vat_number_for(siren):
        raise ValidationError(
            "invalid VAT number", fields={"vatNumber": [f"must be the French VAT number of SIREN {siren}"]}
        )
    return normalized


def check_iban(iban: str) -> str:
    normalized = re.sub(r"\s", "", iban).upper()
    if not is_valid_iban(normalized):
        raise ValidationError("invalid IBAN", fields={"iban": ["not a valid IBAN"]})
    return normalized


def to_e164(phone: str, *, field: str = "phone", region: str = "FR") -> str:
    """The number in E.164 (+33...); a national number is read in `region`."""
    try:
        number = phonenumbers.parse(phone, region)
    except phonenumbers.NumberParseException:
        number = None
    if number is None or not phonenumbers.is_valid_number(number):
        raise ValidationError("invalid phone number", fields={field: ["not a valid phone number"]})
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
