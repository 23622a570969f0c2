"""Document templates and PDF style (Specification A, admin back-office)."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from backend.documents.catalog import VARIABLE_TYPES
from schemas.common import ComputedBoolean, UtcDateTime


class DraftIn(Schema):
    content = fields.String(required=True, validate=validate.Length(min=1, max=200_000),
                            metadata={"description": "markdown (templates) or CSS (PDF style)"})


class DeleteVersionIn(Schema):
    reason = fields.String(required=True, validate=validate.Length(min=1, max=1000),
                           metadata={"description": "why the version is deleted (journaled)"})


class DeleteDraftIn(Schema):
    reason = fields.String(load_default=None, validate=validate.Length(max=1000),
                           metadata={"description": "optional; journaled with the deletion"})


class PreviewIn(Schema):
    context = fields.Dict(load_default=dict, metadata={
        "description": "test values; each declared variable missing here takes its catalog example. "
                       "Frame keys: headerLines, footerTextLine1, footerTextLine2, headerOnFirstPage"})


class PreviewQuery(Schema):
    version = fields.Integer(load_default=None, validate=validate.Range(min=1),
                             metadata={"description": "a published version; default: the draft, "
                                                      "else the current version"})
    style = fields.String(load_default="published", validate=validate.OneOf(["published", "draft"]),
                          metadata={"description": "`draft` previews with the PDF style draft"})


class VersionPath(Schema):
    templateKey = fields.String(required=True)
    version = fields.Integer(required=True, validate=validate.Range(min=1),
                             metadata={"description": "a published version number"})


class VariableOut(Schema):
    name = fields.String(required=True)
    type = fields.String(required=True, validate=validate.OneOf(VARIABLE_TYPES))
    label = fields.String(required=True)
    required = fields.Boolean(required=True)
    example = fields.Raw(required=True)
    description = fields.String()


class CatalogEntryOut(Schema):
    templateKey = fields.String(required=True)
    title = fields.String(required=True)
    description = fields.String(allow_none=True)
    category = fields.String(required=True)
    variables = fields.List(fields.Nested(VariableOut), required=True)
    isRequiredForKyb = fields.Boolean(required=True)
    renderContext = fields.String(required=True)
    catalogVersion = fields.String(required=True)


class CatalogOut(Schema):
    templates = fields.List(fields.Nested(CatalogEntryOut), required=True)
    frameKeys = fields.List(fields.String(), required=True,
                            metadata={"description": "context keys of the common frame, valid in every template"})


class TemplateSummaryOut(Schema):
    """`backend.documents.versions.TemplateSummary`."""

    templateKey = fields.String(attribute="template_key", required=True)
    kind = fields.String(required=True, validate=validate.OneOf(["markdown", "pdf_css"]))
    title = fields.String(required=True)
    category = fields.String(allow_none=True)
    status = fields.String(allow_none=True, validate=validate.OneOf(["published", "draft"]), metadata={
        "description": "`published` once a version is published, else `draft` when only a draft exists"})
    currentVersion = fields.Integer(attribute="current_version", allow_none=True)
    lastPublishedAt = UtcDateTime(attribute="last_published_at", allow_none=True)
    hasDraft = fields.Boolean(attribute="has_draft", required=True)
    draftUpdatedAt = UtcDateTime(attribute="draft_updated_at", allow_none=True)


class TemplateListOut(Schema):
    templates = fields.List(fields.Nested(TemplateSummaryOut), required=True)
    pdfStyle = fields.Nested(TemplateSummaryOut, required=True)


class VersionOut(Schema):
    """A version with its content (`backend.documents.versions.VersionView`)."""

    id = fields.String(attribute="row.id", required=True)
    templateKey = fields.String(attribute="row.template_key", required=True)
    kind = fields.String(attribute="row.kind", required=True)
    status = fields.String(attribute="row.status", required=True,
                           validate=validate.OneOf(["draft", "published", "archived"]))
    version = fields.Integer(attribute="row.version", allow_none=True, metadata={"description": "null for a draft"})
    titleSnapshot = fields.String(attribute="row.title_snapshot", allow_none=True)
    catalogVersion = fields.String(attribute="row.catalog_version", allow_none=True)
    variablesSnapshot = fields.List(fields.Nested(VariableOut), attribute="row.variables_snapshot", allow_none=True)
    content = fields.String(required=True)
    contentSha256 = fields.String(attribute="row.content_sha256", required=True)
    createdByUserId = fields.String(attribute="row.created_by_user_id", allow_none=True)
    updatedByUserId = fields.String(attribute="row.updated_by_user_id", allow_none=True)
    createdAt = UtcDateTime(attribute="row.created_at", required=True)
    updatedAt = UtcDateTime(attribute="row.updated_at", required=True)
    publishedAt = UtcDateTime(attribute="row.published_at", allow_none=True)


class HistoryOut(Schema):
    templateKey = fields.String(required=True)
    kind = fields.String(required=True)
    draft = fields.Nested(VersionOut, allow_none=True)
    versions = fields.List(fields.Nested(VersionOut), required=True,
                           metadata={"description": "published versions, newest first"})


class DeletedOut(Schema):
    """The removed `TemplateVersion` row."""

    templateKey = fields.String(attribute="template_key", required=True)
    kind = fields.String(required=True)
    status = fields.String(required=True, metadata={"description": "status of the removed row",
                                                    "enum": ["draft", "published", "archived"]})
    version = fields.Integer(allow_none=True)
    deleted = ComputedBoolean(lambda row: True, required=True)


class StyleSourceOut(Schema):
    """`backend.documents.versions.StyleSource`."""

    version = fields.Integer(allow_none=True, metadata={"description": "null: the built-in default style"})
    publishedAt = UtcDateTime(attribute="published_at", allow_none=True)
    content = fields.String(required=True)
