"""The base of every peewee model, and the helpers models share."""

from __future__ import annotations

from enum import StrEnum

from peewee import SQL, CharField, Model
from playhouse.postgres_ext import DateTimeTZField

from backend.db import database


class BaseModel(Model):
    class Meta:
        database = database
        legacy_table_names = False


def status_field(enum: type[StrEnum], **kwargs) -> CharField:
    """A CharField holding one value of `enum`; the migration adds the matching CHECK."""
    return CharField(max_length=40, choices=[(v.value, v.value) for v in enum], **kwargs)


def created_at_field() -> DateTimeTZField:
    return DateTimeTZField(constraints=[SQL("DEFAULT now()")])
