"""The directory check before dispatch: the buyer's electronic address (BT-49, its SIREN) must be
registered in the operator's directory, or the invoice would only be rejected days later.

Answers are cached in `einvoice_directory_entry` for `CACHE_FOR` (a day), registered or not, so a
batch of invoices to one buyer asks the operator once a day; an operator that cannot answer raises
`OperatorError` (the dispatch fails and is retried like any other operator outage).
"""

from __future__ import annotations

from datetime import timedelta

from backend import clock
from backend.einvoicing.models import DirectoryEntry
from backend.einvoicing.operator_client import OperatorClient

CACHE_FOR = timedelta(days=1)


def registered(siren: str, *, client: OperatorClient) -> bool:
    now = clock.now()
    cached = DirectoryEntry.get_or_none(DirectoryEntry.siren == siren)
    if cached is not None and now - cached.checked_at < CACHE_FOR:
        return cached.registered
    answer = client.recipient_registered(siren)
    (DirectoryEntry.insert(siren=siren, registered=answer, checked_at=now)
     .on_conflict(conflict_target=[DirectoryEntry.siren],
                  update={DirectoryEntry.registered: answer, DirectoryEntry.checked_at: now})
     .execute())
    return answer
