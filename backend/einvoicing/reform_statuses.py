"""The reform's lifecycle statuses (API.md, "E-invoicing after the deposit" and "E-invoicing
statuses"; docs/einvoicing.md "After the deposit: the reform's lifecycle statuses" cites the lists).

Every code of the reform's list is known here, with its label, not only the ones the platform
sends or expects: a status the operator reports is stored as it came, so a later one can clear an
earlier one (209 Complétée after 208 Suspendue; an approval, a refusal or a payment after 207 En
litige). The operator reports them for a flow (code, date, reason); each is stored once as a row of
`einvoice_lifecycle_event` (unique per transmission, code and date, so a status polled twice or a
redelivered page adds nothing), and a trigger keeps the transmission's latest code
(`lifecycle_code`). `acknowledged` stays Specification C's status: these codes come on top.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from backend.db import database
from backend.einvoicing.operator_client import LifecycleStatus
from backend.logs import get_logger

log = get_logger("einvoicing.reform_statuses")

LABELS = {
    200: "Déposée", 201: "Émise par la plateforme", 202: "Reçue par la plateforme", 203: "Mise à disposition",
    204: "Prise en charge", 205: "Approuvée", 206: "Approuvée partiellement", 207: "En litige", 208: "Suspendue",
    209: "Complétée", 210: "Refusée", 211: "Paiement transmis", 212: "Encaissée", 213: "Rejetée", 214: "Visée",
    220: "Annulée", 221: "Erreur de routage", 224: "Demande de paiement direct", 225: "Affacturée",
    226: "Affacturée confidentiel", 227: "Changement de compte à payer", 228: "Non affacturée",
}
DEPOSITED = 200
APPROVED = 205
DISPUTED = 207  # the recipient disputes the invoice; it may still settle
SUSPENDED = 208  # the recipient waits for a supplement
REFUSED = 210  # by the recipient: final, the invoice is replaced
ENCAISSEE = 212
REJECTED = 213  # by a platform: the invoice is deemed not issued
# The statuses that reach the tax administration.
TO_ADMINISTRATION = (DEPOSITED, REFUSED, ENCAISSEE, REJECTED)
# Statuses that must carry a coded reason.
REASON_REQUIRED = frozenset({206, DISPUTED, SUSPENDED, REFUSED, REJECTED, 221})
# The latest code that calls for the admin: refused (replace the invoice) or rejected (correct and
# deposit it again), disputed or suspended (talk to the recipient). A later status of another kind
# (209 after 208, 205 after 207) clears it, being the latest.
ATTENTION = (DISPUTED, SUSPENDED, REFUSED, REJECTED)
REFUSED_OR_REJECTED = (REFUSED, REJECTED)


def label(code: int) -> str:
    return LABELS.get(code, str(code))


def parse_at(value: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def record(rows: Iterable[tuple[str, LifecycleStatus]]) -> int:
    """Store the (transmission id, status) pairs not stored yet, in one statement; returns how many
    were new. A code outside the reform's list or an unreadable date is logged and left out."""
    values: list[tuple[str, int, datetime, str | None]] = []
    for transmission_id, status in rows:
        at = parse_at(status.at)
        if status.code not in LABELS or at is None:
            log.warning("lifecycle status not understood: left out", extra={"fields": {
                "transmissionId": transmission_id, "code": status.code, "at": status.at}})
            continue
        values.append((transmission_id, status.code, at, (status.reason or None) and status.reason[:2000]))
    if not values:
        return 0
    placeholders = ", ".join(["(%s, %s, %s, %s)"] * len(values))
    cursor = database.execute_sql(
        "INSERT INTO einvoice_lifecycle_event (transmission_id, code, at, reason) "  # noqa: S608 (placeholders)
        f"VALUES {placeholders} ON CONFLICT ON CONSTRAINT einvoice_lifecycle_event_once DO NOTHING",
        [item for row in values for item in row])
    return cursor.rowcount
