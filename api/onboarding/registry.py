"""Admin routes of the company registry cache (Specification A's "registry cache" list)."""

from __future__ import annotations

from api.access import ADMIN, Route
from api.operations import operation
from backend.listing import ListParams
from backend.onboarding import registry_cache, registry_check
from schemas.onboarding.registry import RegistryCachePage, RegistryCacheQuery, RegistryCompanyData

TAGS = ("admin-onboarding",)


class AdminRegistryCache:
    def __init__(self, registry) -> None:
        self.registry = registry

    @operation(
        "Registry cache (admin)",
        description=("Each SIREN's last answer from the company registry with its fetch time and age, "
                     "server-paginated; search on SIREN and legal name; filter by state; sortBy fetchedAt "
                     "(default), age, siren, legalName, state, representativesCount."),
        tags=TAGS, query=RegistryCacheQuery, answer=RegistryCachePage, answer_description="a page",
        errors={400: "VALIDATION_ERROR"},
    )
    def on_get(self, req, resp, query: dict):
        return registry_cache.list_registry_cache(ListParams.from_query(query), state=query["state"])

    @operation(
        "Refresh a SIREN from the registry (admin)",
        description=("Ask the company registry now and store its answer; the latest onboarding envelope of "
                     "each organization of that SIREN not approved yet is checked again (which can lift, or "
                     "impose, the delegation documents). Audited as registry.company.refreshed."),
        tags=TAGS, answer=RegistryCompanyData, answer_description="the stored answer",
        errors={400: "VALIDATION_ERROR: not a valid SIREN",
                503: "REGISTRY_UNAVAILABLE: the registry could not answer (nothing changed)"},
    )
    def on_post_refresh(self, req, resp, siren: str) -> dict:
        return {"company": registry_check.refresh_company(siren=siren, registry=self.registry,
                                                          actor_user_id=req.context.principal.user_id)}


def routes(deps) -> list[Route]:
    cache = AdminRegistryCache(deps.registry)
    return [
        Route("/api/admin/registry-cache", cache, ADMIN),
        Route("/api/admin/registry-cache/{siren}/refresh", cache, ADMIN, suffix="refresh"),
    ]
