"""The accounts a bank file names: the platform's (`PLATFORM_LEGAL_IBAN`, `PLATFORM_LEGAL_BIC`,
`PLATFORM_SEPA_CREDITOR_ID`, the name `PLATFORM_LEGAL_COMPANY_NAME`) and a debtor's name from its
billing profile (a creditor's account is the one its payment order recorded: `transfers`)."""

from __future__ import annotations

from dataclasses import dataclass

from peewee import JOIN

from backend.billing.bank import checks
from backend.config import Config
from backend.errors import Conflict
from backend.identity.models import BillingProfile, Organization


@dataclass(frozen=True)
class PlatformAccount:
    name: str
    iban: str
    bic: str | None
    creditor_id: str | None  # direct debits only

    def sepaxml_settings(self) -> dict:
        """The `sepaxml` configuration of a message naming this account (one batch per date and type)."""
        settings = {"name": self.name, "IBAN": self.iban, "batch": True, "currency": "EUR"}
        if self.bic:
            settings["BIC"] = self.bic
        return settings


def platform_account(config: Config, *, creditor: bool) -> PlatformAccount:
    """The platform's account from the settings; 409 `bank_not_configured` naming what is missing
    or fails its check (boot refuses a bad value it is given; this also covers an unset one)."""
    values = {"PLATFORM_LEGAL_IBAN": (config.platform_legal_iban, checks.iban_problem)}
    if config.platform_legal_bic:
        values["PLATFORM_LEGAL_BIC"] = (config.platform_legal_bic, checks.bic_problem)
    if creditor:
        values["PLATFORM_SEPA_CREDITOR_ID"] = (config.platform_sepa_creditor_id, checks.creditor_id_problem)
    problems = {name: problem for name, (value, check) in values.items() if (problem := check(value))}
    if problems:
        raise Conflict("the platform's bank account is not configured: " + ", ".join(
            f"{name} {problem}" for name, problem in problems.items()), reason="bank_not_configured",
            settings=problems)
    return PlatformAccount(
        name=config.platform_legal_company_name or config.platform_name,
        iban=checks.compact_iban(config.platform_legal_iban),
        bic=checks.compact_bic(config.platform_legal_bic) if config.platform_legal_bic else None,
        creditor_id=checks.compact_creditor_id(config.platform_sepa_creditor_id) if creditor else None,
    )


def holder_names(organization_ids: set[str]) -> dict[str, str]:
    """Each organization's billing-profile legal name (else the organization's): a debtor's name."""
    rows = (Organization.select(Organization.id, Organization.legal_name,
                                BillingProfile.legal_name.alias("profile_name"))
            .join(BillingProfile, JOIN.LEFT_OUTER, on=BillingProfile.organization == Organization.id)
            .where(Organization.id.in_(list(organization_ids)))
            .dicts())
    return {row["id"]: row["profile_name"] or row["legal_name"] for row in rows}
