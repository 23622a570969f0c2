"""Document templates: the admin editor of versioned templates and their previews."""

from __future__ import annotations

from api.access import Route
from api.documents import templates


def routes(deps) -> list[Route]:
    return templates.routes(deps)
