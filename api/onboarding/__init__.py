"""Onboarding: the e-signature envelopes, their webhook, KYB documents and reviews."""

from __future__ import annotations

from api.access import Route
from api.onboarding import envelopes, webhook


def routes(deps) -> list[Route]:
    return [*webhook.routes(deps), *envelopes.routes(deps)]
