"""An XP Z12-013 platform's callback (annex A, `WebhookCallbackContent`) and its acknowledgement."""

from __future__ import annotations

from marshmallow import Schema, fields


class CallbackFlowIn(Schema):
    """The standard's `Flow`, as the callback carries it; only `flowId` is read (the flow itself is
    read again from the platform)."""

    flowId = fields.String(required=True, metadata={"example": "afnor-000001-1a2b3c4d"})
    updatedAt = fields.String(metadata={"description": "the flow's last change (the deduplication key, with flowId)"})
    trackingId = fields.String()
    flowType = fields.String(metadata={"example": "CustomerInvoice"})
    flowDirection = fields.String(metadata={"example": "Out"})
    acknowledgement = fields.Dict(metadata={"description": "`status`: Pending, Ok or Error, and its details"})


class PlatformCallbackIn(Schema):
    """Authenticated by `X-Webhook-Signature-256` over the raw body."""

    flowInfo = fields.Nested(CallbackFlowIn, required=True)


class CallbackAckOut(Schema):
    received = fields.Boolean(required=True, metadata={"example": True})
    duplicate = fields.Boolean(required=True, metadata={
        "description": "true when this state of the flow (flowId and updatedAt) was already received"})
