"""The base of every peewee model, and the helpers models share."""

from __future__ import annotations

import uuid
from enum import StrEnum

from peewee import SQL, CharField, Model
from playhouse.postgres_ext import DateTimeTZField

from backend import clock
from backend.db import database


class BaseModel(Model):
    class Meta:
        database = database
        legacy_table_names = False


def status_field(enum: type[StrEnum], **kwargs) -> CharField:
    """A CharField holding one value of `enum`; the migration adds the matching CHECK."""
    return CharField(max_length=40, choices=[(v.value, v.value) for v in enum], **kwargs)


def new_id() -> str:
    return str(uuid.uuid4())


def id_field() -> CharField:
    """A UUID primary key, made by the application so a new row knows its id before the insert."""
    return CharField(primary_key=True, max_length=36, default=new_id)


def created_at_field() -> DateTimeTZField:
    """A creation (or update) time from the application clock (`backend.clock.now()`, which tests
    freeze), set when the row object is built so a created row answers its time at once; the
    column's `DEFAULT now()` serves rows inserted by SQL alone."""
    return DateTimeTZField(default=clock.now, constraints=[SQL("DEFAULT now()")])
