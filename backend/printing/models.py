"""Printing tables. Migrations 050-051 hold the constraints (CHECKs, foreign keys to the identity
and marketplace tables, the one-active-order-per-reservation index) that these models mirror.

Organization, user, reservation and zone references are plain columns here, so this module
imports neither the identity nor the marketplace area; queries scope on them explicitly.
"""

from __future__ import annotations

import uuid

from peewee import BigAutoField, BigIntegerField, CharField, ForeignKeyField, IntegerField, TextField
from playhouse.postgres_ext import ArrayField, DateTimeTZField

from backend.model import BaseModel, created_at_field, status_field
from backend.printing.status import PrintOrderStatus


def _id_field() -> CharField:
    return CharField(primary_key=True, max_length=36, default=lambda: str(uuid.uuid4()))


class PrintAsset(BaseModel):
    """A visual of an organization's library: the blob lives in the `print-assets` context."""

    id = _id_field()
    organization_id = CharField(max_length=60)
    uploaded_by_user_id = CharField(max_length=36, null=True)
    original_name = CharField(max_length=255)
    technical_name = CharField(max_length=120)
    content_type = CharField(max_length=40)
    size_bytes = BigIntegerField()
    sha256 = CharField(max_length=64)
    storage_key = CharField(max_length=200)
    created_at = created_at_field()
    deleted_at = DateTimeTZField(null=True)


class PrintOrder(BaseModel):
    id = _id_field()
    code = CharField(max_length=20)
    reservation_id = CharField(max_length=36)
    printer_organization_id = CharField(max_length=60)
    industrial_organization_id = CharField(max_length=60)
    batch_id = CharField(max_length=36, null=True)
    status = status_field(PrintOrderStatus, default=PrintOrderStatus.DRAFT)
    carrier = CharField(max_length=120, null=True)
    tracking_number = CharField(max_length=120, null=True)
    tracking_url = CharField(max_length=2000, null=True)
    cancel_reason = TextField(null=True)
    created_at = created_at_field()
    updated_at = created_at_field()


class PrintOrderLine(BaseModel):
    """A manufacturing line; `quantity` is frozen when the order is made (spec B)."""

    id = BigAutoField()
    order = ForeignKeyField(PrintOrder, backref="lines", on_delete="CASCADE")
    position = IntegerField()
    zone_id = CharField(max_length=36)
    face_index = IntegerField(null=True)
    quantity = IntegerField()
    asset_id = CharField(max_length=36, null=True)
    qualifiers = ArrayField(TextField, default=list)


class PrintOrderStatusChange(BaseModel):
    id = BigAutoField()
    order = ForeignKeyField(PrintOrder, backref="status_changes", on_delete="CASCADE")
    from_status = status_field(PrintOrderStatus)
    to_status = status_field(PrintOrderStatus)
    actor_user_id = CharField(max_length=36, null=True)
    changed_at = created_at_field()
