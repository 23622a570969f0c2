"""The company registry cache: each SIREN's last answer with its fetch time.

An extract fetched less than `REGISTRY_CACHE_DAYS` ago is reused; an older one, or none, is asked
of the registry again and stored (one row per SIREN, replaced). A SIREN the registry answered as
unknown is stored too (state `unknown`, so admins see the lookup) but never reused: a company
created this week may reach the directory tomorrow. When the registry cannot answer, nothing is
stored and `RegistryUnavailable` goes up to the caller, which decides (onboarding falls back to
the delegation documents; the admin refresh answers 503 `REGISTRY_UNAVAILABLE`).

Callers ask before opening their own transaction, so a slow registry never holds a lock.
"""

from __future__ import annotations

from datetime import date, timedelta

from peewee import fn

from backend import clock
from backend.identity.french_ids import check_siren
from backend.listing import ListParams, Page, paginate
from backend.logs import get_logger
from backend.onboarding.models import RegistryCompany
from backend.onboarding.registry import CompanyExtract, CompanyRegistry, CompanyState, Representative

log = get_logger("registry")

REGISTRY_CACHE_SORTS = {
    "siren": RegistryCompany.siren, "legalName": RegistryCompany.legal_name, "state": RegistryCompany.state,
    "representativesCount": fn.jsonb_array_length(RegistryCompany.representatives),
    "fetchedAt": RegistryCompany.fetched_at, "age": fn.age(RegistryCompany.fetched_at),  # the reverse of fetchedAt
}


def company_extract(siren: str, *, registry: CompanyRegistry, cache_days: int) -> RegistryCompany:
    """The cached answer about `siren` when still fresh, else the registry's (stored)."""
    cached = RegistryCompany.get_or_none(RegistryCompany.siren == siren)
    if cached is not None and cached.state != CompanyState.UNKNOWN and (
            clock.now() - cached.fetched_at < timedelta(days=cache_days)):
        return cached
    return fetch_company(siren, registry=registry)


def fetch_company(siren: str, *, registry: CompanyRegistry) -> RegistryCompany:
    """Ask the registry now and store its answer (RegistryUnavailable when it cannot answer)."""
    extract = registry.lookup(check_siren(siren))
    values = _row(siren, extract)
    RegistryCompany.insert(siren=siren, **values).on_conflict(
        conflict_target=[RegistryCompany.siren], update=values).execute()
    log.info("company registry extract stored", extra={"fields": {
        "siren": siren, "state": values["state"], "representatives": len(values["representatives"])}})
    return RegistryCompany.get_by_id(siren)


def _row(siren: str, extract: CompanyExtract | None) -> dict:
    fetched_at = clock.now()
    if extract is None:
        return {"state": CompanyState.UNKNOWN, "legal_name": None, "naf_code": None, "street": None,
                "postal_code": None, "city": None, "representatives": [], "registry_updated_on": None,
                "legal_category": None, "fetched_at": fetched_at}
    return {"state": extract.state, "legal_name": extract.legal_name, "naf_code": extract.naf_code,
            "street": extract.street, "postal_code": extract.postal_code, "city": extract.city,
            "representatives": extract.representatives_json(),
            "registry_updated_on": date.fromisoformat(extract.updated_on) if extract.updated_on else None,
            "legal_category": extract.legal_category, "fetched_at": fetched_at}


def representatives_of(company: RegistryCompany) -> tuple[Representative, ...]:
    return tuple(Representative(**r) for r in company.representatives)


def list_registry_cache(params: ListParams, *, state: str | None = None) -> Page:
    """The admin list "registry cache" (Specification A): search on SIREN and legal name."""
    query = RegistryCompany.select()
    if state:
        query = query.where(RegistryCompany.state == state)
    return paginate(query, params, sorts=REGISTRY_CACHE_SORTS, default_sort="fetchedAt",
                    tiebreaker=RegistryCompany.siren,
                    search_columns=(RegistryCompany.siren, RegistryCompany.legal_name))
