"""The callbacks of an AFNOR XP Z12-013 platform: authenticate, store once, hand over, apply.

XP Z12-013 annex A (Flow Service 1.1.0, `components.callbacks.WebhookCallback`) defines what a PA
posts to a subscriber when a flow changes: `WebhookCallbackContent`, `{"flowInfo": <Flow>}`, to a
URL given at subscription. The standard leaves the subscription and the callback's
authentication to the PA; Vitrine holds it to the rule of every inbound webhook
(`backend.webhook_signature`): `X-Webhook-Signature-256` is `sha256=<hex HMAC-SHA256 of the raw
body>` keyed with `AFNOR_WEBHOOK_SECRET`, `X-Webhook-Issued-At` (Unix seconds) lies within 300 s
of now, else 401 `AUTH_SIGNATURE_WEBHOOK_INVALID` and nothing is written.

`POST /api/webhooks/afnor` stores the callback once per flow state (its key: the flow's id and its
`updatedAt`; the same state delivered again inserts nothing, `ON CONFLICT DO NOTHING`) with its
processing queued in the same transaction (`outbox`), and answers at once. The actor
(`process_callback`) never believes the body: it reads the flow from the PA
(`AfnorClient.changes_of`, `GET /v1/flows/{flowId}`) and applies it through the code a polling
page goes through (`polling.apply_flows`), whose moves are conditional, so a callback processed
twice, or after polling applied the same change, moves nothing. Polling stays the safety net: a
callback lost, refused or never configured is caught up by the next pass.
"""

from __future__ import annotations

from collections import Counter

from psycopg2.extras import Json

from backend import clock, json_input, outbox, webhook_signature
from backend.db import database, transaction
from backend.einvoicing import polling
from backend.einvoicing.afnor_client import AfnorClient
from backend.einvoicing.operator_client import OperatorClient
from backend.errors import ValidationError
from backend.logs import log_event

SCOPE = "einvoicing.callback"
PROCESSING_ACTOR = "process_platform_callback"
SIGNATURE_HEADER = "X-Webhook-Signature-256"
ISSUED_AT_HEADER = "X-Webhook-Issued-At"
KEY_MAX = 200
NOTHING_TO_APPLY = "a flow the platform does not know, or a status of an invoice not deposited here"
INSERT_CALLBACK = (
    "INSERT INTO einvoice_platform_callback (event_key, flow_id, payload, processing_status, received_at)"
    " VALUES (%s, %s, %s, 'received', %s) ON CONFLICT (event_key) DO NOTHING RETURNING id"
)


def parse_callback(body: bytes) -> dict:
    """The callback's `flowInfo` (the standard's `Flow`); ValidationError when the body is not a
    `WebhookCallbackContent` naming a flow (`flowInfo.flowId`, a non-empty string)."""
    content = json_input.loads(body, what="the callback body")
    flow = content.get("flowInfo") if isinstance(content, dict) else None
    flow_id = flow.get("flowId") if isinstance(flow, dict) else None
    if not isinstance(flow_id, str) or not flow_id.strip() or len(flow_id) > KEY_MAX // 2:
        raise ValidationError("the callback is malformed", fields={
            "flowInfo.flowId": [f"required, a non-empty string of at most {KEY_MAX // 2} characters"]})
    return flow


def event_key(flow: dict) -> str:
    """One state of one flow: its id and its `updatedAt` (a new state is a new callback)."""
    return f"{flow['flowId']}@{str(flow.get('updatedAt') or '')[:KEY_MAX // 2 - 1]}"


def receive_callback(*, body: bytes, signature: str | None, issued_at: str | None, secret: str | None) -> dict:
    """Verify, store once with its processing queued, acknowledge: `{received: true, duplicate}`."""
    webhook_signature.verify(body=body, signature=signature, issued_at=issued_at, secret=secret, scope=SCOPE)
    flow = parse_callback(body)
    key = event_key(flow)
    with transaction():
        inserted = database.execute_sql(INSERT_CALLBACK, (key, flow["flowId"], Json(flow), clock.now())).fetchone()
        if inserted is not None:
            outbox.enqueue(PROCESSING_ACTOR, key)
    log_event(SCOPE, "callback received", flowId=flow["flowId"], updatedAt=flow.get("updatedAt"),
              duplicate=inserted is None)
    return {"received": True, "duplicate": inserted is None}


def process_callback(key: str, *, client: OperatorClient) -> str | None:
    """Apply the flow a stored callback names, read from the platform; the callback's outcome
    (`processed`, or `ignored` when the platform is not an XP Z12-013 one or no longer knows the
    flow), None when it was processed already or is unknown. An error reading the platform
    propagates (the actor retries; polling catches up in any case)."""
    row = database.execute_sql("SELECT flow_id FROM einvoice_platform_callback"
                               " WHERE event_key = %s AND processing_status = 'received'", (key,)).fetchone()
    if row is None:
        return None
    counters: Counter[str] = Counter()
    if not isinstance(client, AfnorClient):
        outcome, note = "ignored", "the platform configured is not an XP Z12-013 one (EINVOICING_OPERATOR)"
    else:
        flows = client.changes_of(row[0])
        polling.apply_flows(flows, counters, trigger="callback")
        outcome, note = ("processed", None) if flows else ("ignored", NOTHING_TO_APPLY)
    with transaction():
        database.execute_sql(
            "UPDATE einvoice_platform_callback SET processing_status = %s, processing_note = %s, processed_at = %s"
            " WHERE event_key = %s AND processing_status = 'received'", (outcome, note, clock.now(), key))
    log_event(SCOPE, "callback processed", flowId=row[0], outcome=outcome,
              **{name: counters[name] for name in ("acknowledged", "rejected", "lifecycle")})
    return outcome
