"""The figures `/api/metrics` exposes that live in the database, read in one round trip each.

Plain values (no metrics library here): the outbox backlog, the times the broker's Redis lost
data, signature webhook events by processing status, invoices issued by kind, e-invoice transmissions by status.
"""

from __future__ import annotations

from backend import broker_epoch, outbox
from backend.db import database

_COUNTS = {
    "webhook_events": "SELECT processing_status, count(*) FROM esign_webhook_event GROUP BY 1",
    "invoices": "SELECT kind, count(*) FROM billing_invoice GROUP BY 1",
    "transmissions": "SELECT status, count(*) FROM einvoice_transmission GROUP BY 1",
}


def figures() -> dict:
    result: dict = {"outbox": outbox.backlog(), "redis_data_lost": broker_epoch.losses()}
    for name, statement in _COUNTS.items():
        result[name] = dict(database.execute_sql(statement).fetchall())
    return result
