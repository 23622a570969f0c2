"""Document template versions (migration `020_document_templates`). The version counter table
is only ever written by one SQL upsert (`versions.next_version_number`, seeding), so it has no model."""

from __future__ import annotations

from enum import StrEnum

from peewee import CharField, IntegerField
from playhouse.postgres_ext import BinaryJSONField, DateTimeTZField

from backend.model import BaseModel, created_at_field, id_field, status_field


class Kind(StrEnum):
    MARKDOWN = "markdown"
    PDF_CSS = "pdf_css"


class Status(StrEnum):
    DRAFT = "draft"
    PUBLISHED = "published"
    ARCHIVED = "archived"


class TemplateVersion(BaseModel):
    """A draft (no number) or a published version (immutable); the content lives in storage."""

    id = id_field()
    template_key = CharField(max_length=64)
    kind = status_field(Kind)
    status = status_field(Status)
    version = IntegerField(null=True)
    content_key = CharField(max_length=300)
    content_sha256 = CharField(max_length=64)
    title_snapshot = CharField(max_length=200, null=True)
    catalog_version = CharField(max_length=40, null=True)
    variables_snapshot = BinaryJSONField(null=True)
    created_by_user_id = CharField(max_length=36, null=True)
    updated_by_user_id = CharField(max_length=36, null=True)
    created_at = created_at_field()
    updated_at = created_at_field()
    published_at = DateTimeTZField(null=True)

    class Meta:
        table_name = "document_template_version"
