"""The admin "faces" list of Specification A: what is printed where."""

from __future__ import annotations

from api.access import ADMIN, Route
from api.operations import operation
from backend.listing import ListParams
from backend.printing import faces
from schemas.printing.faces import FacesPage, FacesQuery


class AdminFaces:
    @operation(
        "Faces of every ad space (admin)",
        description=(
            "Every face of every ad space (its furniture type's current zones, each face from 1 to the "
            "zone's face quantity) with the reservation running now (else the next one) and the visual "
            "deposited for it, server-paginated. Filters `storeId` and `deposited`; `search` on store, "
            "city, ad space, furniture type, zone code and label, visual name; sortBy store (default), "
            "city, adSpace, furnitureType, zone, faceIndex."
        ),
        tags=("admin printing",), query=FacesQuery, answer=FacesPage, answer_description="a page of faces",
        errors={400: "VALIDATION_ERROR"},
    )
    def on_get(self, req, resp, query: dict):
        return faces.list_faces(ListParams.from_query(query), store_id=query["storeId"],
                                deposited=query["deposited"])


def routes(deps) -> list[Route]:
    return [Route("/api/admin/faces", AdminFaces(), ADMIN)]
