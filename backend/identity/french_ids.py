"""French company identifiers and contact details: SIREN, SIRET, VAT number, IBAN, phone.

The checks are python-stdnum's (`stdnum.fr.siren`, `stdnum.fr.siret`, `stdnum.fr.tva`,
`stdnum.eu.vat` for the VAT number of a company established in another member state,
`stdnum.iban`), which follow INSEE's and the banks' published rules, La Poste's SIRET exception
included; this module only turns their verdict into the platform's stable errors (VALIDATION_ERROR
with the field that is wrong) and keeps the normalized form that is stored.
"""

from __future__ import annotations

import re

import phonenumbers
from stdnum import iban as stdnum_iban
from stdnum.eu import vat as stdnum_eu_vat
from stdnum.fr import siren as stdnum_siren
from stdnum.fr import siret as stdnum_siret
from stdnum.fr import tva as stdnum_tva

from backend.errors import ValidationError


def vat_number_for(siren: str) -> str:
    """The French VAT number of a SIREN: FR + a two-digit key + the SIREN."""
    return "FR" + stdnum_siren.to_tva(siren)


def check_siren(siren: str) -> str:
    if not (siren.isascii() and siren.isdigit() and stdnum_siren.is_valid(siren)):
        raise ValidationError("invalid SIREN", fields={"siren": ["must be 9 digits with a valid check key"]})
    return siren


def check_siret(siret: str, *, siren: str) -> str:
    if not (siret.isascii() and siret.isdigit() and stdnum_siret.is_valid(siret)):
        raise ValidationError("invalid SIRET", fields={"siret": ["must be 14 digits with a valid check key"]})
    if siret[:9] != siren:
        raise ValidationError("SIRET of another company", fields={"siret": [f"must start with the SIREN {siren}"]})
    return siret


# ISO 3166 codes of the member states, as python-stdnum names their VAT modules (Greece "gr",
# whose VAT numbers start "EL"; Northern Ireland "xi" is not a country of an address).
EU_MEMBER_STATES = frozenset(code.upper() for code in stdnum_eu_vat.MEMBER_STATES) - {"XI"}


def is_vat_number_of(vat_number: str, country: str) -> bool:
    """Whether `vat_number` is a VAT number of the member state `country` (its prefix, "EL" for
    Greece) whose check digits hold, by that state's published rules; whether it is registered is
    VIES's to say (an online check the platform does not make)."""
    country = country.upper()
    try:
        number = stdnum_eu_vat.compact(vat_number)
    except ValueError:  # not even the shape of a VAT number
        return False
    return number[:2] in ({"EL", "GR"} if country == "GR" else {country}) and stdnum_eu_vat.is_valid(number)


def check_vat_number(vat_number: str, *, siren: str, country: str = "FR") -> str:
    """The organization's VAT number, spaces, dots and dashes dropped, upper case: a VAT number of
    the member state of its address when that is not France (its invoices are then reverse
    charged); else the French VAT number of its SIREN, key included."""
    normalized = re.sub(r"[\s.-]", "", vat_number).upper()
    country = country.upper()
    if country != "FR" and country in EU_MEMBER_STATES:
        if not is_vat_number_of(normalized, country):
            raise ValidationError("invalid VAT number", fields={
                "vatNumber": [f"must be a valid VAT number of {country}, the country of the billing address"]})
        return stdnum_eu_vat.compact(normalized)
    if not (stdnum_tva.is_valid(normalized) and normalized == vat_number_for(siren)):
        raise ValidationError(
            "invalid VAT number", fields={"vatNumber": [f"must be the French VAT number of SIREN {siren}"]}
        )
    return normalized


def check_iban(iban: str) -> str:
    """An IBAN whose check digits and national structure are right, without spaces, upper case."""
    if not stdnum_iban.is_valid(iban):
        raise ValidationError("invalid IBAN", fields={"iban": ["not a valid IBAN"]})
    return stdnum_iban.compact(iban)


def to_e164(phone: str, *, field: str = "phone", region: str = "FR") -> str:
    """The number in E.164 (+33...); a national number is read in `region`."""
    try:
        number = phonenumbers.parse(phone, region)
    except phonenumbers.NumberParseException:
        number = None
    if number is None or not phonenumbers.is_valid_number(number):
        raise ValidationError("invalid phone number", fields={field: ["not a valid phone number"]})
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
