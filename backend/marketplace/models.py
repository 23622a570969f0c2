"""Marketplace tables (migrations 030-031 hold the constraints these models only mirror).

Organization and user references are plain text columns here (the foreign keys live in the
migrations), so this module does not import the identity area: authorization is written into
queries as `WHERE organization_id = ...`.
"""

from __future__ import annotations

from enum import StrEnum

from peewee import (
    BigIntegerField,
    BooleanField,
    CharField,
    ForeignKeyField,
    IntegerField,
    IntegrityError,
    TextField,
)
from playhouse.postgres_ext import ArrayField, DateTimeTZField

from backend.model import BaseModel, created_at_field, id_field, status_field


def violated_constraint(exc: IntegrityError) -> str | None:
    """The name of the constraint PostgreSQL refused (psycopg2 diagnostics), if any."""
    diag = getattr(getattr(exc, "orig", None) or exc.__cause__, "diag", None)
    return getattr(diag, "constraint_name", None)


class Universe(BaseModel):
    id = id_field()
    code = CharField(max_length=60)
    label = CharField(max_length=120)
    normalized_label = CharField(max_length=120)
    sort_order = IntegerField()
    is_transversal = BooleanField(default=False)
    archived_at = DateTimeTZField(null=True)
    created_at = created_at_field()
    updated_at = created_at_field()


class Rayon(BaseModel):
    id = id_field()
    universe = ForeignKeyField(Universe, backref="rayons", on_delete="RESTRICT")
    code = CharField(max_length=60)
    label = CharField(max_length=120)
    normalized_label = CharField(max_length=120)
    sort_order = IntegerField()
    archived_at = DateTimeTZField(null=True)
    created_at = created_at_field()
    updated_at = created_at_field()


class FurnitureType(BaseModel):
    """The stable identity of a type; its configuration lives in immutable versions."""

    id = id_field()
    current_version = IntegerField(default=1)
    created_at = created_at_field()


class FurnitureTypeVersion(BaseModel):
    id = id_field()
    furniture_type = ForeignKeyField(FurnitureType, backref="versions", on_delete="CASCADE")
    version = IntegerField()
    name = CharField(max_length=120)
    printer_organization_id = CharField(max_length=64, null=True)
    created_by_user_id = CharField(max_length=64, null=True)
    created_at = created_at_field()


class FurnitureZone(BaseModel):
    id = id_field()
    furniture_type_version = ForeignKeyField(FurnitureTypeVersion, backref="zones", on_delete="CASCADE")
    position = IntegerField()
    code = CharField(max_length=60)
    label = CharField(max_length=120)
    face_quantity = IntegerField()
    printable = BooleanField()
    width_mm = IntegerField()
    height_mm = IntegerField()


class Store(BaseModel):
    id = id_field()
    organization_id = CharField(max_length=64)
    name = CharField(max_length=160)
    street = CharField(max_length=200)
    postal_code = CharField(max_length=20)
    city = CharField(max_length=120)
    country = CharField(max_length=2)
    created_at = created_at_field()


class AdSpace(BaseModel):
    id = id_field()
    store = ForeignKeyField(Store, backref="ad_spaces", on_delete="RESTRICT")
    name = CharField(max_length=160)
    promo_furniture_type = ForeignKeyField(FurnitureType, on_delete="RESTRICT")
    placement_universe = ForeignKeyField(Universe, on_delete="RESTRICT")
    placement_rayon = ForeignKeyField(Rayon, null=True, on_delete="RESTRICT")
    price_cents = IntegerField()
    created_at = created_at_field()

    class Meta:
        table_name = "ad_space"


class Campaign(BaseModel):
    id = id_field()
    organization_id = CharField(max_length=64)
    name = CharField(max_length=160)
    starts_at = DateTimeTZField()
    ends_at = DateTimeTZField()
    universe_ids = ArrayField(TextField, default=list)
    rayon_ids = ArrayField(TextField, default=list)
    created_by_user_id = CharField(max_length=64, null=True)
    created_at = created_at_field()


class CartItem(BaseModel):
    id = id_field()
    organization_id = CharField(max_length=64)
    campaign = ForeignKeyField(Campaign, on_delete="CASCADE")
    ad_space = ForeignKeyField(AdSpace, on_delete="CASCADE")
    added_by_user_id = CharField(max_length=64, null=True)
    created_at = created_at_field()

    class Meta:
        table_name = "cart_item"


class ReservationStatus(StrEnum):
    PENDING_REVIEW = "pending_review"
    COUNTER_PROPOSED = "counter_proposed"
    APPROVED = "approved"
    REJECTED = "rejected"
    CANCELLED = "cancelled"
    COMPLETED = "completed"


class Reservation(BaseModel):
    """One ad space for one campaign's dates, with its pricing frozen at checkout (and again at
    the acceptance of a counter-proposal) and the furniture configuration version it was sold
    with, so editing the type or the rate later never rewrites it."""

    id = id_field()
    industrial_organization_id = CharField(max_length=64)
    distributor_organization_id = CharField(max_length=64)
    campaign = ForeignKeyField(Campaign, on_delete="RESTRICT")
    ad_space = ForeignKeyField(AdSpace, on_delete="RESTRICT")
    furniture_type_version = ForeignKeyField(FurnitureTypeVersion, on_delete="RESTRICT")
    starts_at = DateTimeTZField()
    ends_at = DateTimeTZField()
    status = status_field(ReservationStatus, default=ReservationStatus.PENDING_REVIEW)
    billing_model = CharField(max_length=40, null=True)
    base_amount_cents = BigIntegerField()
    commission_amount_cents = BigIntegerField()
    total_amount_cents = BigIntegerField()
    commission_rate_bps = IntegerField()
    counter_price_cents = BigIntegerField(null=True)
    review_note = TextField(null=True)
    impression_status = CharField(max_length=40, null=True)  # spec B deposit status (printing area)
    print_support_mode = CharField(max_length=20, null=True)  # print | hybrid | reuse_all (printing area)
    created_by_user_id = CharField(max_length=64, null=True)
    created_at = created_at_field()
    updated_at = created_at_field()
    approved_at = DateTimeTZField(null=True)
