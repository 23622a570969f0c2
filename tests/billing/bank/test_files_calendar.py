"""The dates a file asks for: TARGET2 days around Easter, 1 May and Christmas; and the platform's
bank identifiers checked at boot (a bad creditor identifier stops it)."""

from __future__ import annotations

from datetime import date

import pytest

from backend.billing.bank import calendar
from backend.config import ConfigError, load_config


@pytest.mark.parametrize(("today", "collection", "execution"), [
    (date(2027, 3, 24), date(2027, 3, 25), date(2027, 3, 24)),  # Wednesday before Easter
    (date(2027, 3, 25), date(2027, 3, 30), date(2027, 3, 25)),  # Maundy Thursday: Good Friday, Easter Monday closed
    (date(2027, 3, 26), date(2027, 3, 31), date(2027, 3, 30)),  # Good Friday: handled Tuesday, collected Wednesday
    (date(2027, 3, 29), date(2027, 3, 31), date(2027, 3, 30)),  # Easter Monday
    (date(2026, 4, 30), date(2026, 5, 4), date(2026, 4, 30)),  # Thursday 30 April: Friday 1 May closed
    (date(2026, 5, 1), date(2026, 5, 5), date(2026, 5, 4)),  # 1 May itself
    (date(2026, 5, 8), date(2026, 5, 11), date(2026, 5, 8)),  # 8 May is French, not TARGET2: open
    (date(2026, 12, 24), date(2026, 12, 28), date(2026, 12, 24)),  # Christmas Eve: 25 and 26 December closed
    (date(2027, 12, 24), date(2027, 12, 27), date(2027, 12, 24)),  # 25 and 26 December 2027 are a weekend
    (date(2026, 12, 31), date(2027, 1, 4), date(2026, 12, 31)),  # New Year's Day closed
    (date(2026, 11, 28), date(2026, 12, 1), date(2026, 11, 30)),  # Saturday: handled Monday
])
def test_the_first_dates_target2_allows(today, collection, execution):
    assert (calendar.collection_date(today), calendar.execution_date(today)) == (collection, execution)
    assert calendar.is_target_day(collection) and calendar.is_target_day(execution)


def test_a_creditor_identifier_iban_or_bic_failing_its_check_stops_boot():
    with pytest.raises(ConfigError) as caught:
        load_config({"PLATFORM_SEPA_CREDITOR_ID": "FR12ZZZ123456", "PLATFORM_LEGAL_IBAN": "FR7630006000011234567890188",
                     "PLATFORM_LEGAL_BIC": "AGRIFR"})
    problems = "\n".join(caught.value.args)
    assert ("PLATFORM_SEPA_CREDITOR_ID must be a SEPA creditor identifier (ICS) with valid ISO 7064 check digits, "
            "got 'FR12ZZZ123456'") in problems
    assert "PLATFORM_LEGAL_IBAN must be an IBAN with valid check digits" in problems
    assert "FR7630006000011234567890188" not in problems  # an IBAN is never written out
    assert "PLATFORM_LEGAL_BIC must be a BIC" in problems
    config = load_config({"PLATFORM_SEPA_CREDITOR_ID": "FR72ZZZ123456", "PLATFORM_LEGAL_BIC": "AGRIFRPP"})
    assert (config.platform_sepa_creditor_id, config.platform_legal_bic) == ("FR72ZZZ123456", "AGRIFRPP")
