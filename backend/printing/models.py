"""Printing tables. Migrations 050-051 hold the constraints (CHECKs, foreign keys to the identity
and marketplace tables, the one-active-order-per-reservation index) that these models mirror.

Organization, user, reservation and zone references are plain columns here, so this module
imports neither the identity nor the marketplace area; queries scope on them explicitly.
"""

from __future__ import annotations

from enum import StrEnum

import orjson
from peewee import BigAutoField, BigIntegerField, CharField, ForeignKeyField, IntegerField, TextField
from playhouse.postgres_ext import ArrayField, DateTimeTZField, JSONField

from backend.model import BaseModel, created_at_field, id_field, status_field
from backend.printing.status import PrintOrderStatus


class ImpressionStatus(StrEnum):
    """The deposit status of a reservation (`reservation.impression_status`)."""

    TO_DEPOSIT = "to_deposit"
    IN_REVIEW = "in_review"
    VALIDATED = "validated"
    IN_STOCK = "in_stock"
    LOCKED = "locked"


class DeliveryTarget(StrEnum):
    STORE = "store"
    SINGLE_ADDRESS = "single_address"
    NONE = "none"


class PrintAsset(BaseModel):
    """A visual of an organization's library: the blob lives in the `print-assets` context."""

    id = id_field()
    organization_id = CharField(max_length=60)
    uploaded_by_user_id = CharField(max_length=36, null=True)
    original_name = CharField(max_length=255)
    technical_name = CharField(max_length=120)
    content_type = CharField(max_length=40)
    size_bytes = BigIntegerField()
    sha256 = CharField(max_length=64)
    crc32 = BigIntegerField(null=True)  # the ZIP entry checksum; None for visuals uploaded before migration 064
    storage_key = CharField(max_length=200)
    created_at = created_at_field()
    deleted_at = DateTimeTZField(null=True)


class PrintOrder(BaseModel):
    id = id_field()
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
    delivery_target = status_field(DeliveryTarget, default=DeliveryTarget.STORE)
    recipient_name = CharField(max_length=200, null=True)
    recipient_street = CharField(max_length=200, null=True)
    recipient_postal_code = CharField(max_length=20, null=True)
    recipient_city = CharField(max_length=120, null=True)
    recipient_country = CharField(max_length=2, null=True)
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


class PrintPreflight(BaseModel):
    """A file attached to a deposit slot (zone, face; a null face is the whole zone) of a
    reservation or of a batch, before the deposit is confirmed."""

    id = id_field()
    reservation_id = CharField(max_length=36, null=True)
    batch_id = CharField(max_length=36, null=True)
    zone_id = CharField(max_length=36)
    face_index = IntegerField(null=True)
    asset_id = CharField(max_length=36)
    created_by_user_id = CharField(max_length=36, null=True)
    created_at = created_at_field()


class PrintReusedFace(BaseModel):
    """A face whose support is already in stock, one row per face."""

    id = BigAutoField()
    reservation_id = CharField(max_length=36)
    zone_id = CharField(max_length=36)
    face_index = IntegerField()
    batch_id = CharField(max_length=36, null=True)
    created_at = created_at_field()


class PrintOrderBatch(BaseModel):
    """A batch deposit: many reservations of one campaign sharing a furniture type. Stored status
    `draft` or `sent` only; what a reader sees is derived from the orders (`batch_state.derived_status`)."""

    id = id_field()
    code = CharField(max_length=20, null=True)
    organization_id = CharField(max_length=60)
    campaign_id = CharField(max_length=36)
    promo_furniture_type_id = CharField(max_length=36)
    furniture_type_version_id = CharField(max_length=36)
    printer_organization_id = CharField(max_length=60, null=True)
    status = CharField(max_length=20, default="draft")
    delivery_target = status_field(DeliveryTarget, default=DeliveryTarget.STORE)
    created_by_user_id = CharField(max_length=36, null=True)
    created_at = created_at_field()
    updated_at = created_at_field()
    sent_at = DateTimeTZField(null=True)
    # The summary the confirmation answered, as its text (`json`, not `jsonb`: a replay answers
    # the same bytes); written by orjson (the same text as the standard library's encoder, without
    # spaces, in a fraction of its time for a large batch).
    confirmation = JSONField(null=True, dumps=lambda value: orjson.dumps(value).decode())

    class Meta:
        table_name = "print_order_batch"


class PrintBatchStatusRun(BaseModel):
    """One batch status advance; its counters are what the runs' messages wrote."""

    id = id_field()
    batch_id = CharField(max_length=36)
    next_status = CharField(max_length=40)
    actor_user_id = CharField(max_length=36, null=True)
    group_size = IntegerField()
    groups_total = IntegerField()
    current_group = IntegerField(default=0)
    status = CharField(max_length=20, default="running")
    advanced = IntegerField(default=0)
    skipped = IntegerField(default=0)
    failed = IntegerField(default=0)
    created_at = created_at_field()
    progressed_at = created_at_field()  # the last settled order or group start (the clock resumes stalls)
    finished_at = DateTimeTZField(null=True)

    class Meta:
        table_name = "print_batch_status_run"


class PrintBatchStatusRunItem(BaseModel):
    """One order of a run: its group and, once settled, its outcome."""

    id = BigAutoField()
    run_id = CharField(max_length=36)
    order_id = CharField(max_length=36)
    group_index = IntegerField()
    outcome = CharField(max_length=20, null=True)
    error_code = CharField(max_length=60, null=True)
    error_message = TextField(null=True)
    settled_at = DateTimeTZField(null=True)

    class Meta:
        table_name = "print_batch_status_run_item"


class AdSpaceFace(BaseModel):
    """One face of one ad space (the view `ad_space_face`, migration 117): a zone of its furniture
    type's current version and a face index from 1 to the zone's face quantity. Read only."""

    id = CharField(primary_key=True)  # <adSpaceId>/<zoneId>/<face index on 4 digits>
    sort_key = TextField()  # <adSpaceId>/<zone position>/<zoneId>/<face index>: the list's tiebreaker
    ad_space_id = CharField(max_length=36)
    store_id = CharField(max_length=36)
    furniture_type_version_id = CharField(max_length=36)
    zone_id = CharField(max_length=36)
    face_index = IntegerField()

    class Meta:
        table_name = "ad_space_face"
