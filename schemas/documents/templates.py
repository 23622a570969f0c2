"""Document templates and PDF style (Specification A, admin back-office)."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from backend.documents.catalog import VARIABLE_TYPES


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
    templateKey = fields.String(required=True)
    kind = fields.String(required=True, validate=validate.OneOf(["markdown", "pdf_css"]))
    title = fields.String(required=True)
    category = fields.String(allow_none=True)
    status = fields.String(allow_none=True, metadata={
        "description": "`published` once a version is published, else `draft` when only a draft exists"})
    currentVersion = fields.Integer(allow_none=True)
    lastPublishedAt = fields.String(allow_none=True)
    hasDraft = fields.Boolean(required=True)
    draftUpdatedAt = fields.String(allow_none=True)


class TemplateListOut(Schema):
    templates = fields.List(fields.Nested(TemplateSummaryOut), required=True)
    pdfStyle = fields.Nested(TemplateSummaryOut, required=True)


class VersionOut(Schema):
    id = fields.String(required=True)
    templateKey = fields.String(required=True)
    kind = fields.String(required=True)
    status = fields.String(required=True, validate=validate.OneOf(["draft", "published", "archived"]))
    version = fields.Integer(allow_none=True, metadata={"description": "null for a draft"})
    titleSnapshot = fields.String(allow_none=True)
    catalogVersion = fields.String(allow_none=True)
    variablesSnapshot = fields.List(fields.Nested(VariableOut), allow_none=True)
    content = fields.String(required=True)
    contentSha256 = fields.String(required=True)
    createdByUserId = fields.String(allow_none=True)
    updatedByUserId = fields.String(allow_none=True)
    createdAt = fields.String(required=True)
    updatedAt = fields.String(required=True)
    publishedAt = fields.String(allow_none=True)


class HistoryOut(Schema):
    templateKey = fields.String(required=True)
    kind = fields.String(required=True)
    draft = fields.Nested(VersionOut, allow_none=True)
    versions = fields.List(fields.Nested(VersionOut), required=True,
                           metadata={"description": "published versions, newest first"})


class DeletedOut(Schema):
    templateKey = fields.String(required=True)
    kind = fields.String(required=True)
    status = fields.String(required=True, metadata={"description": "status of the removed row"})
    version = fields.Integer(allow_none=True)
    deleted = fields.Boolean(required=True)


class StyleSourceOut(Schema):
    version = fields.Integer(allow_none=True, metadata={"description": "null: the built-in default style"})
    publishedAt = fields.String(allow_none=True)
    content = fields.String(required=True)


def _envelope(name: str, payload: type[Schema]) -> type[Schema]:
    return type(name, (Schema,), {"ok": fields.Boolean(required=True), "data": fields.Nested(payload, required=True)})


CatalogEnvelope = _envelope("CatalogEnvelope", CatalogOut)
TemplateListEnvelope = _envelope("TemplateListEnvelope", TemplateListOut)
HistoryEnvelope = _envelope("HistoryEnvelope", HistoryOut)
VersionEnvelope = _envelope("VersionEnvelope", VersionOut)
DeletedEnvelope = _envelope("DeletedEnvelope", DeletedOut)
StyleSourceEnvelope = _envelope("StyleSourceEnvelope", StyleSourceOut)
