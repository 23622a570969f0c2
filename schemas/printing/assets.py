"""Printing (spec B): the visual library."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from backend.files import ACCEPTED_TYPES
from backend.printing.assets import SORTS
from schemas.common import ComputedString, PageQuery, UtcDateTime, sort_by


class PrintAssetListQuery(PageQuery):
    sortBy = sort_by(SORTS, "createdAt")


class PrintAssetUpload(Schema):
    """The multipart form of an upload (the file is streamed to storage)."""

    file = fields.Raw(required=True, metadata={"type": "string", "format": "binary"})


class PrintAssetOut(Schema):
    id = fields.String(required=True)
    originalName = fields.String(attribute="original_name", required=True,
                                 metadata={"description": "the name the file was uploaded with"})
    technicalName = fields.String(
        attribute="technical_name", required=True,
        metadata={"description": "ASCII name used in download archives, extension of the detected type",
                  "example": "affiche-ete.pdf"},
    )
    contentType = fields.String(attribute="content_type", required=True, validate=validate.OneOf(ACCEPTED_TYPES),
                                metadata={"description": "detected from the content, never from the name"})
    sizeBytes = fields.Integer(attribute="size_bytes", required=True)
    sha256 = fields.String(required=True, metadata={"description": "hex SHA-256 of the content"})
    uploadedByUserId = fields.String(attribute="uploaded_by_user_id", allow_none=True, required=True)
    createdAt = UtcDateTime(attribute="created_at", required=True)
    contentUrl = ComputedString(lambda asset: f"/api/print-assets/{asset.id}/content", required=True,
                                metadata={"example": "/api/print-assets/{id}/content"})


class PrintAssetDeletedOut(Schema):
    id = fields.String(required=True)
    deleted = fields.Boolean(required=True, metadata={"example": True})
