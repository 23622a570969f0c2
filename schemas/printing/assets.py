"""Printing (spec B): the visual library."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from backend.clock import iso
from backend.files import ACCEPTED_TYPES
from backend.printing.assets import SORTS
from backend.printing.models import PrintAsset
from schemas.common import PageQuery


class PrintAssetListQuery(PageQuery):
    sortBy = fields.String(
        load_default=None,
        metadata={"enum": list(SORTS), "description": "default `createdAt`; another value is a VALIDATION_ERROR"},
    )


class PrintAssetOut(Schema):
    id = fields.String(required=True)
    originalName = fields.String(required=True, metadata={"description": "the name the file was uploaded with"})
    technicalName = fields.String(
        required=True,
        metadata={"description": "ASCII name used in download archives, extension of the detected type",
                  "example": "affiche-ete.pdf"},
    )
    contentType = fields.String(required=True, validate=validate.OneOf(ACCEPTED_TYPES),
                                metadata={"description": "detected from the content, never from the name"})
    sizeBytes = fields.Integer(required=True)
    sha256 = fields.String(required=True, metadata={"description": "hex SHA-256 of the content"})
    uploadedByUserId = fields.String(allow_none=True, required=True)
    createdAt = fields.String(required=True, metadata={"format": "date-time"})
    contentUrl = fields.String(required=True, metadata={"example": "/api/print-assets/{id}/content"})


class PrintAssetEnvelope(Schema):
    ok = fields.Boolean(required=True)
    data = fields.Nested(PrintAssetOut, required=True)


class PrintAssetPageOut(Schema):
    items = fields.List(fields.Nested(PrintAssetOut), required=True)
    total = fields.Integer(required=True)
    page = fields.Integer(required=True)
    pageSize = fields.Integer(required=True)


class PrintAssetPageEnvelope(Schema):
    ok = fields.Boolean(required=True)
    data = fields.Nested(PrintAssetPageOut, required=True)


class PrintAssetDeletedOut(Schema):
    id = fields.String(required=True)
    deleted = fields.Boolean(required=True, metadata={"example": True})


class PrintAssetDeletedEnvelope(Schema):
    ok = fields.Boolean(required=True)
    data = fields.Nested(PrintAssetDeletedOut, required=True)


def asset_out(asset: PrintAsset) -> dict:
    return {
        "id": asset.id,
        "originalName": asset.original_name,
        "technicalName": asset.technical_name,
        "contentType": asset.content_type,
        "sizeBytes": asset.size_bytes,
        "sha256": asset.sha256,
        "uploadedByUserId": asset.uploaded_by_user_id,
        "createdAt": iso(asset.created_at),
        "contentUrl": f"/api/print-assets/{asset.id}/content",
    }
