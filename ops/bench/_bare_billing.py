"""The bare reference of `vitrine bench billing` (issue 36): `POST /api/billing/reservations/{id}/collect`
by hand, served from `ops.bench.bare_app` with the same gunicorn settings as Vitrine.

It sends the very statements Vitrine's collection sends, prepared once per connection as Vitrine's
are: the session lookup, then in one transaction the key's hold with everything read
(`collection_sql.READ`), the writes (`collection_sql.WRITE`: the financial status, the payment
order, the two entries, the key's answer, the `invoice.issued` outbox rows) and the numbered
invoice with the COMMIT in the same round trip; after the commit the outbox rows are pushed to
Redis (a queue no worker reads) and marked sent. The values are the same too: they come from the
functions that name each statement's parameters (`..._values`), and the invoice's parties and
lines are the same JSON. What it leaves out is Vitrine's framework: middleware, access rules,
schemas, the ORM, the idempotency claim's replay paths, logging, error mapping. It checks only
what the bench needs (a session, an approved reservation still due); any other case is a 409.
"""

from __future__ import annotations

import hashlib
import json
import weakref
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import falcon
from psycopg2.extras import Json

from backend.billing import collection_sql, idempotency, numbering, records
from backend.billing.accounting import ledger
from backend.billing.collection import COLLECT_ROUTE, COLLECTABLE, PRINCIPAL_SELLER, collect_path
from backend.billing.invoicing.invoices import _INSERT_NUMBERED, _NUMBERED
from backend.billing.invoicing.parties import PROFILE_COLUMNS, party_of, platform_party
from backend.billing.models import FinancialStatus, InvoiceKind
from backend.billing.reservations import label_of
from backend.billing.vat import amount_incl_tax_cents, vat_amount_cents, vat_rate_bps
from backend.config import load_config
from backend.events import INVOICE_ISSUED, SUBSCRIBERS, part_names
from backend.identity.sessions import SESSION_STATEMENTS
from backend.model import new_id

SESSION_LOOKUP = SESSION_STATEMENTS[False]
STATEMENTS = (SESSION_LOOKUP, collection_sql.READ, collection_sql.WRITE, _INSERT_NUMBERED, _NUMBERED)
_PREPARED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
PARIS = ZoneInfo("Europe/Paris")
EVENT_PARTS = part_names(INVOICE_ISSUED)
SENT = "UPDATE outbox_message SET sent_at = %s WHERE id = ANY(%s)"


class Collect:
    """`pools`: the bare app's (`ops.bench.bare_app.pools`: connections and the broker);
    `session_cookie`: the cookie's name."""

    def __init__(self, pools, session_cookie: str) -> None:
        self.pools, self.session_cookie = pools, session_cookie
        config = load_config()
        self.rate_bps = vat_rate_bps(config.platform_vat_rate_percent)
        self.platform = platform_party(config)

    def on_post(self, req: falcon.Request, resp: falcon.Response, reservation_id: str) -> None:
        token, key = req.cookies.get(self.session_cookie), req.get_header("Idempotency-Key")
        method = json.loads(req.bounded_stream.read())["paymentMethod"]
        if not token or not key:
            raise falcon.HTTPUnauthorized()
        conn = self.pools.connection()
        try:
            with conn.cursor() as cursor:
                if conn not in _PREPARED:
                    for statement in STATEMENTS:
                        cursor.execute(statement.prepare_sql)
                    _PREPARED[conn] = True
                now = datetime.now(UTC)
                cursor.execute(SESSION_LOOKUP.execute_sql, {"token_hash": hashlib.sha256(token.encode()).hexdigest(),
                                                            "now": now})
                session = cursor.fetchone()
                if session is None:
                    raise falcon.HTTPUnauthorized()
                org, user_id = session[1], session[5]
                held = idempotency.Key(org, COLLECT_ROUTE, key, idempotency.fingerprint(
                    "POST", collect_path(reservation_id), {"paymentMethod": method}))
                # Round trip 1: BEGIN, the key's hold and everything read.
                cursor.execute(f"BEGIN; {idempotency.HOLD}; {collection_sql.READ.execute_sql}", {
                    **records.open_collectable_values(reservation_id, org, PRINCIPAL_SELLER,
                                                      FinancialStatus.RESERVATION_TOTAL_DUE, COLLECTABLE),
                    **held.read_values()})
                row = dict(zip((c.name for c in cursor.description), cursor.fetchone(), strict=True))
                if row["kyb_status"] != "approved" or row["status"] not in COLLECTABLE \
                        or row["financial_status"] != FinancialStatus.RESERVATION_TOTAL_DUE or row["key_hash"]:
                    cursor.execute("ROLLBACK")
                    raise falcon.HTTPConflict()
                invoice_id, order_id, total = new_id(), new_id(), row["total_cents"]
                customer = party_of(organization_id=org, legal_name=row["organization_legal_name"], siren=row["siren"],
                                    profile={c: row[c] for c in PROFILE_COLUMNS} if row["has_profile"] else None)
                answer = {"reservation_id": reservation_id, "payment_order_id": order_id, "invoice_id": invoice_id,
                          "financial_status": "reservation_total_paid", "payment_status": "paid"}
                event = {f"{name}_{field}": value for actor, name in zip(SUBSCRIBERS[INVOICE_ISSUED], EVENT_PARTS,
                                                                           strict=True)
                         for field, value in (("actor", actor), ("args", json.dumps([invoice_id])),
                                              ("request", None), ("created", now))}
                # Round trip 2: the writes.
                cursor.execute(collection_sql.WRITE.execute_sql, {
                    **records.settle_values(reservation_id, FinancialStatus.RESERVATION_TOTAL_DUE,
                                            FinancialStatus.RESERVATION_TOTAL_PAID, now),
                    "org": org, "order": order_id, "invoice": invoice_id, "kind": "reservation_total",
                    "method": method, "paid": "paid", "user": user_id, "mandate": row["mandate_ref"],
                    "amount": amount_incl_tax_cents(total, self.rate_bps),
                    **ledger.collection_values(
                        invoice_id=invoice_id, customer=customer, excl_cents=total,
                        vat_cents=vat_amount_cents(total, self.rate_bps), payment_order_id=order_id,
                        day=now.astimezone(PARIS).date(), reservation_id=reservation_id),
                    **held.store_values(answer), **event})
                written, *outbox_ids = cursor.fetchone()
                if not written:
                    cursor.execute("ROLLBACK")
                    raise falcon.HTTPConflict()
                # Round trip 3: the numbered invoice, the COMMIT, its number read back.
                series = numbering.series_name(InvoiceKind.PLATFORM_SALE, year=now.astimezone(PARIS).year)
                space = label_of(row["space_name"], row["store_name"], row["starts_at"], row["ends_at"])
                lines = [{"label": label, "quantity": 1, "unitPriceCents": cents, "totalCents": cents}
                         for label, cents in ((space, row["store_base_cents"]),
                                              ("Commission de la plateforme", row["commission_cents"]))]
                cursor.execute(f"{_INSERT_NUMBERED.execute_sql}; COMMIT; {_NUMBERED.execute_sql}", {
                    "id": invoice_id, "kind": "platform_sale", "status": "paid", "reservation_id": reservation_id,
                    "issuer_organization_id": None, "customer_organization_id": org, "issuer": Json(self.platform),
                    "customer": Json(customer), "lines": Json(lines), "amount_excl_tax_cents": total,
                    "tax_amount_cents": 0, "currency": "EUR", "vat_rate_bps": self.rate_bps,
                    "service_starts_at": row["starts_at"], "service_ends_at": row["ends_at"],
                    "credited_invoice_id": None, "credited_before_cents": None, "reason": None,
                    "created_by_user_id": user_id, **numbering.next_number_values(series, now),
                    "due_in_days": 0, "paid": True})
                number = cursor.fetchone()[0]
                for outbox_id in outbox_ids:
                    self.pools.enqueue([outbox_id])
                cursor.execute(SENT, (datetime.now(UTC), outbox_ids))
        finally:
            self.pools.give_back(conn)
        resp.media = {"ok": True, "data": {"reservationId": reservation_id, "paymentOrderId": order_id,
                                           "invoiceNumber": number, "financialStatus": answer["financial_status"],
                                           "paymentStatus": "paid", "idempotent": False}}

