"""Onboarding: the e-signature envelopes, their webhook, KYB documents and reviews, the company
registry cache."""

from __future__ import annotations

from api.access import Route
from api.onboarding import envelopes, registry, webhook


def routes(deps) -> list[Route]:
    return [*webhook.routes(deps), *envelopes.routes(deps), *registry.routes(deps)]
