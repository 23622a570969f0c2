"""Admin back-office: document templates and the PDF style (Specification A, `kyb.review`).

The markdown templates live under `/api/admin/document-templates/{templateKey}/...`; the PDF style
(kind `pdf_css`) under `/api/admin/document-templates/pdf-style/...` shares the same resources,
built for its fixed key.
"""

from __future__ import annotations

from api.access import KYB_REVIEWER, Route
from api.requests import load
from api.responses import send
from backend.clock import iso
from backend.documents import rendering, versions
from backend.documents.catalog import FRAME_KEYS, PDF_STYLE_KEY, PDF_STYLE_TITLE, default_style, load_catalog
from backend.documents.models import Kind, TemplateVersion
from schemas.documents.templates import DeleteDraftIn, DeleteVersionIn, DraftIn, PreviewIn, PreviewQuery, VersionPath

BASE = "/api/admin/document-templates"


def _actor(req) -> str:
    return req.context.principal.user_id  # set by the policy middleware on every admin route


def version_out(row: TemplateVersion, storage) -> dict:
    return {
        "id": row.id,
        "templateKey": row.template_key,
        "kind": row.kind,
        "status": row.status,
        "version": row.version,
        "titleSnapshot": row.title_snapshot,
        "catalogVersion": row.catalog_version,
        "variablesSnapshot": row.variables_snapshot,
        "content": versions.read_content(storage, row),
        "contentSha256": row.content_sha256,
        "createdByUserId": row.created_by_user_id,
        "updatedByUserId": row.updated_by_user_id,
        "createdAt": iso(row.created_at),
        "updatedAt": iso(row.updated_at),
        "publishedAt": iso(row.published_at),
    }


def deleted_out(row: TemplateVersion) -> dict:
    return {"templateKey": row.template_key, "kind": row.kind, "status": row.status, "version": row.version,
            "deleted": True}


class Catalog:
    def on_get(self, req, resp) -> None:
        """Template catalog.
        ---
        summary: The template catalog (titles, categories, typed variables)
        tags: [document-templates]
        responses:
          200:
            description: every catalog entry
            content:
              application/json:
                schema: CatalogEnvelope
        """
        templates = [entry.describe() for entry in load_catalog().values()]
        send(resp, {"templates": templates, "frameKeys": list(FRAME_KEYS)})


class Templates:
    def on_get(self, req, resp) -> None:
        """Templates with status and current version.
        ---
        summary: Templates with their status, current version and draft
        tags: [document-templates]
        responses:
          200:
            description: one summary per catalog template, and the PDF style
            content:
              application/json:
                schema: TemplateListEnvelope
        """
        state = versions.summaries()
        templates = [_summary(key, Kind.MARKDOWN, entry.title, entry.category, state)
                     for key, entry in load_catalog().items()]
        send(resp, {"templates": templates,
                    "pdfStyle": _summary(PDF_STYLE_KEY, Kind.PDF_CSS, PDF_STYLE_TITLE, None, state)})


def _summary(key: str, kind: Kind, title: str, category: str | None, state: dict) -> dict:
    found = state.get((key, kind.value), {})
    current, has_draft = found.get("currentVersion"), found.get("hasDraft", False)
    return {
        "templateKey": key, "kind": kind.value, "title": title, "category": category,
        "status": "published" if current else ("draft" if has_draft else None),
        "currentVersion": current, "lastPublishedAt": iso(found.get("lastPublishedAt")),
        "hasDraft": has_draft, "draftUpdatedAt": iso(found.get("draftUpdatedAt")),
    }


class History:
    def __init__(self, storage, kind: Kind) -> None:
        self.storage, self.kind = storage, kind

    def on_get(self, req, resp, templateKey: str = PDF_STYLE_KEY) -> None:
        """Draft and published history.
        ---
        summary: The draft and the published versions (newest first), with their content
        tags: [document-templates]
        responses:
          200:
            description: history
            content:
              application/json:
                schema: HistoryEnvelope
        """
        draft, published = versions.history(templateKey, self.kind)
        send(resp, {
            "templateKey": templateKey, "kind": self.kind.value,
            "draft": version_out(draft, self.storage) if draft else None,
            "versions": [version_out(row, self.storage) for row in published],
        })


class Draft:
    def __init__(self, storage, kind: Kind) -> None:
        self.storage, self.kind = storage, kind

    def on_post(self, req, resp, templateKey: str = PDF_STYLE_KEY) -> None:
        """Create or update the draft.
        ---
        summary: Create (201) or update (200) the draft; markdown is checked against the catalog
        tags: [document-templates]
        requestBody:
          required: true
          content:
            application/json:
              schema: DraftIn
        responses:
          201:
            description: draft created
            content:
              application/json:
                schema: VersionEnvelope
          200:
            description: draft updated
            content:
              application/json:
                schema: VersionEnvelope
        """
        body = load(req, DraftIn())
        row, created = versions.save_draft(template_key=templateKey, kind=self.kind, content=body["content"],
                                           actor_user_id=_actor(req), storage=self.storage)
        send(resp, version_out(row, self.storage), 201 if created else 200)

    def on_delete(self, req, resp, templateKey: str = PDF_STYLE_KEY) -> None:
        """Delete the draft.
        ---
        summary: Delete the current draft (journaled; the body and its reason are optional)
        tags: [document-templates]
        requestBody:
          required: false
          content:
            application/json:
              schema: DeleteDraftIn
        responses:
          200:
            description: draft deleted
            content:
              application/json:
                schema: DeletedEnvelope
        """
        body = load(req, DeleteDraftIn())
        row = versions.delete_draft(template_key=templateKey, kind=self.kind, actor_user_id=_actor(req),
                                    storage=self.storage, reason=body["reason"])
        send(resp, deleted_out(row))


class Publish:
    def __init__(self, storage, kind: Kind) -> None:
        self.storage, self.kind = storage, kind

    def on_post(self, req, resp, templateKey: str = PDF_STYLE_KEY) -> None:
        """Publish the draft.
        ---
        summary: Publish the current draft as the next version (immutable); 404 without a draft
        tags: [document-templates]
        responses:
          201:
            description: the new published version
            content:
              application/json:
                schema: VersionEnvelope
        """
        row = versions.publish(template_key=templateKey, kind=self.kind, actor_user_id=_actor(req))
        send(resp, version_out(row, self.storage), 201)


class PublishedVersion:
    def on_delete(self, req, resp, templateKey: str, version: str) -> None:
        """Delete a published version.
        ---
        summary: Delete a published version; a reason is required (400), never the last one (409)
        tags: [document-templates]
        parameters:
          - in: path
            schema: VersionPath
        requestBody:
          required: true
          content:
            application/json:
              schema: DeleteVersionIn
        responses:
          200:
            description: version deleted and journaled
            content:
              application/json:
                schema: DeletedEnvelope
        """
        number = VersionPath().load({"templateKey": templateKey, "version": version})["version"]
        body = load(req, DeleteVersionIn())
        row = versions.delete_version(template_key=templateKey, kind=Kind.MARKDOWN, version=number,
                                      reason=body["reason"], actor_user_id=_actor(req))
        send(resp, deleted_out(row))


class Preview:
    def __init__(self, storage, config) -> None:
        self.storage, self.config = storage, config

    def on_post(self, req, resp, templateKey: str) -> None:
        """PDF preview.
        ---
        summary: PDF preview of the draft (default) or of a published version, with test values
        tags: [document-templates]
        parameters:
          - in: query
            schema: PreviewQuery
        requestBody:
          required: false
          content:
            application/json:
              schema: PreviewIn
        responses:
          200:
            description: the rendered PDF
            content:
              application/pdf:
                schema:
                  type: string
                  format: binary
        """
        query = PreviewQuery().load(req.params)
        body = load(req, PreviewIn())
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

    def on_get(self, req, resp) -> None:
        """Current CSS source.
        ---
        summary: The CSS of the published PDF style (the built-in default before any publication)
        tags: [document-templates]
        responses:
          200:
            description: the style documents are rendered with
            content:
              application/json:
                schema: StyleSourceEnvelope
        """
        row = versions.current_version(PDF_STYLE_KEY, Kind.PDF_CSS)
        if row is None:
            send(resp, {"version": None, "publishedAt": None, "content": default_style()})
            return
        send(resp, {"version": row.version, "publishedAt": iso(row.published_at),
                    "content": versions.read_content(self.storage, row)})


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
