"""Admin back-office: document templates and the PDF style (Specification A, `kyb.review`).

The markdown templates live under `/api/admin/document-templates/{templateKey}/...`; the PDF style
(kind `pdf_css`) under `/api/admin/document-templates/pdf-style/...` shares the same resources,
built for its fixed key.
"""

from __future__ import annotations

from api.access import KYB_REVIEWER, Route
from api.operations import Answer, operation
from backend.documents import rendering, versions
from backend.documents.catalog import FRAME_KEYS, PDF_STYLE_KEY, load_catalog
from backend.documents.models import Kind
from schemas.documents.templates import (
    CatalogOut,
    DeletedOut,
    DeleteDraftIn,
    DeleteVersionIn,
    DraftIn,
    HistoryOut,
    PreviewIn,
    PreviewQuery,
    StyleSourceOut,
    TemplateListOut,
    VersionOut,
    VersionPath,
)

BASE = "/api/admin/document-templates"
TAGS = ("document-templates",)


def _actor(req) -> str:
    return req.context.principal.user_id  # set by the policy middleware on every admin route


class Catalog:
    @operation("The template catalog (titles, categories, typed variables)", tags=TAGS, answer=CatalogOut,
               answer_description="every catalog entry")
    def on_get(self, req, resp) -> dict:
        return {"templates": [entry.describe() for entry in load_catalog().values()], "frameKeys": list(FRAME_KEYS)}


class Templates:
    @operation("Templates with their status, current version and draft", tags=TAGS, answer=TemplateListOut,
               answer_description="one summary per catalog template, and the PDF style")
    def on_get(self, req, resp) -> dict:
        templates, pdf_style = versions.template_summaries()
        return {"templates": templates, "pdfStyle": pdf_style}


class History:
    def __init__(self, storage, kind: Kind) -> None:
        self.storage, self.kind = storage, kind

    @operation("The draft and the published versions (newest first), with their content", tags=TAGS,
               answer=HistoryOut, answer_description="history")
    def on_get(self, req, resp, templateKey: str = PDF_STYLE_KEY) -> dict:
        draft, published = versions.history_with_content(self.storage, templateKey, self.kind)
        return {"templateKey": templateKey, "kind": self.kind.value, "draft": draft, "versions": published}


class Draft:
    def __init__(self, storage, kind: Kind) -> None:
        self.storage, self.kind = storage, kind

    @operation("Create (201) or update (200) the draft; markdown is checked against the catalog", tags=TAGS,
               body=DraftIn, answer=VersionOut, status=201, answer_description="draft created",
               other_answers={200: (VersionOut, "draft updated")})
    def on_post(self, req, resp, body: dict, templateKey: str = PDF_STYLE_KEY) -> Answer:
        row, created = versions.save_draft(template_key=templateKey, kind=self.kind, content=body["content"],
                                           actor_user_id=_actor(req), storage=self.storage)
        return Answer(versions.with_content(self.storage, row), 201 if created else 200)

    @operation("Delete the current draft (journaled; the body and its reason are optional)", tags=TAGS,
               body=DeleteDraftIn, body_required=False, answer=DeletedOut, answer_description="draft deleted")
    def on_delete(self, req, resp, body: dict, templateKey: str = PDF_STYLE_KEY):
        return versions.delete_draft(template_key=templateKey, kind=self.kind, actor_user_id=_actor(req),
                                     storage=self.storage, reason=body["reason"])


class Publish:
    def __init__(self, storage, kind: Kind) -> None:
        self.storage, self.kind = storage, kind

    @operation("Publish the current draft as the next version (immutable); 404 without a draft", tags=TAGS,
               answer=VersionOut, status=201, answer_description="the new published version")
    def on_post(self, req, resp, templateKey: str = PDF_STYLE_KEY) -> versions.VersionView:
        row = versions.publish(template_key=templateKey, kind=self.kind, actor_user_id=_actor(req))
        return versions.with_content(self.storage, row)


class PublishedVersion:
    @operation("Delete a published version; a reason is required (400), never the last one (409)", tags=TAGS,
               path=VersionPath, body=DeleteVersionIn, answer=DeletedOut,
               answer_description="version deleted and journaled")
    def on_delete(self, req, resp, templateKey: str, version: int, body: dict):
        return versions.delete_version(template_key=templateKey, kind=Kind.MARKDOWN, version=version,
                                       reason=body["reason"], actor_user_id=_actor(req))


class Preview:
    def __init__(self, storage, config) -> None:
        self.storage, self.config = storage, config

    @operation("PDF preview of the draft (default) or of a published version, with test values", tags=TAGS,
               body=PreviewIn, query=PreviewQuery, produces="application/pdf",
               answer_description="the rendered PDF")
    def on_post(self, req, resp, templateKey: str, body: dict, query: dict) -> None:
        pdf, label = rendering.render_preview(
            templateKey, context=body["context"], version=query["version"],
            style_draft=query["style"] == "draft", storage=self.storage, config=self.config,
        )
        resp.content_type = "application/pdf"
        resp.set_header("Content-Disposition", f'inline; filename="{templateKey}-{label}-preview.pdf"')
        resp.data = pdf


class StyleSource:
    def __init__(self, storage) -> None:
        self.storage = storage

    @operation("The CSS of the published PDF style (the built-in default before any publication)", tags=TAGS,
               answer=StyleSourceOut, answer_description="the style documents are rendered with")
    def on_get(self, req, resp) -> versions.StyleSource:
        return versions.style_source(self.storage)


def routes(deps) -> list[Route]:
    load_catalog()  # a malformed catalog stops boot here, with the file and the problem named
    storage = deps.storage
    style = f"{BASE}/pdf-style"
    item = f"{BASE}/{{templateKey}}"
    return [
        Route(f"{BASE}/catalog", Catalog(), KYB_REVIEWER),
        Route(BASE, Templates(), KYB_REVIEWER),
        Route(f"{style}/versions", History(storage, Kind.PDF_CSS), KYB_REVIEWER),
        Route(f"{style}/draft", Draft(storage, Kind.PDF_CSS), KYB_REVIEWER),
        Route(f"{style}/publish", Publish(storage, Kind.PDF_CSS), KYB_REVIEWER),
        Route(f"{style}/source", StyleSource(storage), KYB_REVIEWER),
        Route(f"{item}/versions", History(storage, Kind.MARKDOWN), KYB_REVIEWER),
        Route(f"{item}/draft", Draft(storage, Kind.MARKDOWN), KYB_REVIEWER),
        Route(f"{item}/publish", Publish(storage, Kind.MARKDOWN), KYB_REVIEWER),
        Route(f"{item}/versions/{{version}}", PublishedVersion(), KYB_REVIEWER),
        Route(f"{item}/preview", Preview(storage, deps.config), KYB_REVIEWER),
    ]
