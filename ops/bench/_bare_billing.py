"""The bare reference of `vitrine bench billing`: `POST /api/billing/reservations/{id}/collect` by
hand (`create_app()`, with `ops.bench.bare_app`'s pools and health route), served with the same
gunicorn settings as Vitrine.

It writes what Vitrine's collection writes (`backend.billing.collection.collect`), in one
transaction of plain SQL: the key held and read, everything the steps read, the financial status
moved, the payment order, the numbered invoice, its sale entry, the key's answer and the
`invoice.issued` outbox rows; after the commit the outbox rows are pushed to Redis (a queue no
worker reads) and marked sent. The values are the same: the invoice's parties and lines are the
same JSON, the entries the ones `backend.billing.accounting.ledger` builds. What it leaves out is
Vitrine's framework: middleware, access rules, schemas, the ORM, the idempotency claim's replay
paths, logging, error mapping. It checks only what the bench needs (a session, an approved
reservation still due); any other case is a 409.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import falcon
from psycopg2.extras import Json

from backend.billing import idempotency
from backend.billing.accounting import ledger
from backend.billing.accounting.entries import fiscal_year_bounds
from backend.billing.collection.collect import COLLECT_ROUTE, PRINCIPAL_SELLER, collect_path
from backend.billing.invoicing import numbering
from backend.billing.invoicing.parties import PROFILE_COLUMNS, party_of, platform_party
from backend.billing.models import InvoiceKind
from backend.billing.reservations import COLLECTABLE, label_of
from backend.billing.vat import amount_incl_tax_cents, vat_amount_cents, vat_rate_bps
from backend.config import load_config
from backend.events import INVOICE_ISSUED, SUBSCRIBERS
from backend.identity.sessions import SESSION_STATEMENTS
from backend.model import new_id

SESSION_LOOKUP = SESSION_STATEMENTS[False]
PARIS = ZoneInfo("Europe/Paris")
SENT = "UPDATE outbox_message SET sent_at = %s WHERE id = ANY(%s)"
HOLD = "SELECT pg_try_advisory_xact_lock(%(lock)s)"
KEY = "SELECT 1 FROM billing_idempotency_record WHERE scope = %(org)s AND route = %(route)s AND key = %(key)s"
OPEN = ("INSERT INTO billing_financial_record (reservation_id, billing_model, financial_status, store_base_cents,"
        " commission_cents, total_cents, commission_rate_bps) SELECT id, billing_model, 'reservation_total_due',"
        " base_amount_cents, commission_amount_cents, total_amount_cents, commission_rate_bps FROM reservation"
        " WHERE id = %(id)s AND industrial_organization_id = %(org)s AND status = ANY(%(collectable)s)"
        " AND billing_model = %(model)s ON CONFLICT (reservation_id) DO NOTHING")
READ = (
    "SELECT r.status, r.starts_at, r.ends_at, a.name AS space_name, s.name AS store_name, o.kyb_status,"  # noqa: S608
    " o.legal_name AS organization_legal_name, o.siren, bp.organization_id IS NOT NULL AS has_profile, "
    + ", ".join(f"bp.{column}" for column in PROFILE_COLUMNS)
    + ", f.financial_status, f.store_base_cents, f.commission_cents, f.total_cents"
    " FROM reservation r JOIN organization o ON o.id = r.industrial_organization_id"
    " JOIN ad_space a ON a.id = r.ad_space_id JOIN store s ON s.id = a.store_id"
    " LEFT JOIN billing_profile bp ON bp.organization_id = o.id"
    " JOIN billing_financial_record f ON f.reservation_id = r.id"
    " WHERE r.id = %(id)s AND r.industrial_organization_id = %(org)s FOR UPDATE OF r, f FOR SHARE OF o")
WRITE = (
    "UPDATE billing_financial_record SET financial_status = 'reservation_total_paid', updated_at = %(now)s"
    " WHERE reservation_id = %(id)s;"
    " INSERT INTO billing_payment_order (id, reservation_id, invoice_id, organization_id, kind, method, status,"
    " amount_cents, created_by_user_id, created_at, updated_at, paid_at) VALUES (%(order)s, %(id)s, %(invoice)s,"
    " %(org)s, 'reservation_total', %(method)s, 'paid', %(amount)s, %(user)s, %(now)s, %(now)s, %(now)s);"
    " INSERT INTO billing_number_counter AS c (series, last_value, updated_at) VALUES (%(series)s, 1, %(now)s)"
    " ON CONFLICT (series) DO UPDATE SET last_value = c.last_value + 1,"
    " updated_at = GREATEST(EXCLUDED.updated_at, c.updated_at);"
    " INSERT INTO billing_invoice (id, kind, status, reservation_id, customer_organization_id, issuer, customer,"
    " lines, amount_excl_tax_cents, tax_amount_cents, vat_rate_bps, currency, service_starts_at, service_ends_at,"
    " created_by_user_id, number, series, sequence, issued_at, due_at, paid_at, created_at, updated_at)"
    " SELECT %(invoice)s, 'platform_sale', 'paid', %(id)s, %(org)s, %(issuer)s, %(customer)s, %(lines)s,"
    " %(excl)s, 0, %(rate)s, 'EUR', %(starts)s, %(ends)s, %(user)s,"
    " c.series || '-' || lpad(c.last_value::text, greatest(6, length(c.last_value::text)), '0'),"
    " c.series, c.last_value, c.updated_at, c.updated_at, c.updated_at, c.updated_at, c.updated_at"
    " FROM billing_number_counter c WHERE c.series = %(series)s;"
    " INSERT INTO billing_idempotency_record (scope, route, key, request_hash, state, response_status,"
    " response_body, created_at, expires_at) VALUES (%(org)s, %(route)s, %(key)s, %(hash)s, 'completed', 200,"
    " %(answer)s, %(now)s, %(expires)s)")
ENTRY = ("INSERT INTO accounting_entry (id, journal_code, fiscal_year, entry_date, label, event, reservation_id,"
         " invoice_id, payment_order_id)"
         " SELECT %s, %s, accounting_fiscal_year(d.day, %s, %s), d.day, %s, %s, %s, %s, %s"
         " FROM (SELECT greatest(%s::date, accounting_first_open_day()) AS day) d")
LINE = ("INSERT INTO accounting_line (entry_id, line_no, account, aux_account, aux_label, label, debit_cents,"
        " credit_cents, letter_group) SELECT %s, %s, %s, %s, %s, label, %s, %s, %s FROM accounting_entry WHERE id = %s")
OUTBOX = ("INSERT INTO outbox_message (actor_name, args, request_id, created_at, attempts)"
          " VALUES (%s, %s, NULL, %s, 0) RETURNING id")
NUMBER = "SELECT number FROM billing_invoice WHERE id = %s"


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
                now = datetime.now(UTC)
                cursor.execute(SESSION_LOOKUP, {"token_hash": hashlib.sha256(token.encode()).hexdigest(),
                                                    "now": now})
                session = cursor.fetchone()
                if session is None:
                    raise falcon.HTTPUnauthorized()
                org, user_id = session[1], session[5]
                values = {"id": reservation_id, "org": org, "route": COLLECT_ROUTE, "key": key,
                          "lock": idempotency.lock_id(org, COLLECT_ROUTE, key), "collectable": sorted(COLLECTABLE),
                          "model": PRINCIPAL_SELLER.value}
                cursor.execute(f"BEGIN; {HOLD}", values)
                held = cursor.fetchone()[0]
                cursor.execute(KEY, values)
                if not held or cursor.fetchone() is not None:
                    cursor.execute("ROLLBACK")
                    raise falcon.HTTPConflict()
                cursor.execute(f"{OPEN}; {READ}", values)
                found = cursor.fetchone()
                row = dict(zip((c.name for c in cursor.description), found, strict=True)) if found else None
                if row is None or row["kyb_status"] != "approved" or row["financial_status"] != "reservation_total_due":
                    cursor.execute("ROLLBACK")
                    raise falcon.HTTPConflict()
                invoice_id, order_id, total = new_id(), new_id(), row["total_cents"]
                customer = party_of(organization_id=org, legal_name=row["organization_legal_name"], siren=row["siren"],
                                    profile={c: row[c] for c in PROFILE_COLUMNS} if row["has_profile"] else None)
                answer = {"reservation_id": reservation_id, "payment_order_id": order_id, "invoice_id": invoice_id,
                          "financial_status": "reservation_total_paid", "payment_status": "paid"}
                space = label_of(row["space_name"], row["store_name"], row["starts_at"], row["ends_at"])
                lines = [{"label": label, "quantity": 1, "unitPriceCents": cents, "totalCents": cents}
                         for label, cents in ((space, row["store_base_cents"]),
                                              ("Commission de la plateforme", row["commission_cents"]))]
                amount = amount_incl_tax_cents(total, self.rate_bps)
                cursor.execute(WRITE, {
                    **values, "now": now, "order": order_id, "invoice": invoice_id, "method": method, "amount": amount,
                    "user": user_id, "series": numbering.series_name(InvoiceKind.PLATFORM_SALE,
                                                                     year=now.astimezone(PARIS).year),
                    "issuer": Json(self.platform), "customer": Json(customer), "lines": Json(lines), "excl": total,
                    "rate": self.rate_bps, "starts": row["starts_at"], "ends": row["ends_at"],
                    "hash": idempotency.fingerprint("POST", collect_path(reservation_id), {"paymentMethod": method}),
                    "answer": Json(answer), "expires": now + idempotency.TTL})
                self._entries(cursor, customer, invoice_id, reservation_id, total, amount, now)
                outbox_ids = []
                for actor in SUBSCRIBERS[INVOICE_ISSUED]:
                    cursor.execute(OUTBOX, (actor, json.dumps([invoice_id]), now))
                    outbox_ids.append(cursor.fetchone()[0])
                cursor.execute(f"COMMIT; {NUMBER}", (invoice_id,))
                number = cursor.fetchone()[0]
                for outbox_id in outbox_ids:
                    self.pools.enqueue([outbox_id])
                cursor.execute(SENT, (datetime.now(UTC), outbox_ids))
        finally:
            self.pools.give_back(conn)
        resp.media = {"ok": True, "data": {"reservationId": reservation_id, "paymentOrderId": order_id,
                                           "invoiceNumber": number, "financialStatus": answer["financial_status"],
                                           "paymentStatus": "paid", "idempotent": False}}

    def _entries(self, cursor, customer: dict, invoice_id: str, reservation_id: str, total: int,
                 amount: int, now: datetime) -> None:
        """The sale's entry, as `ledger.post_sale_issued` writes it (the payment posts when the bank
        books it, not at the collection)."""
        party, day = ledger.party_of(customer), now.astimezone(PARIS).date()
        year_end = fiscal_year_bounds(day.year)[1]
        vat = vat_amount_cents(total, self.rate_bps)
        lines = (("411", amount, 0), ("706", 0, total), ("44574", 0, vat))  # VAT due when paid
        entry_id = new_id()
        cursor.execute(ENTRY, (entry_id, "VE", year_end.month, year_end.day, f"Facture {party.name}", "sale_invoice",
                               reservation_id, invoice_id, None, day))
        for line_no, (account, debit, credit) in enumerate(lines, start=1):
            if debit or credit:
                third = account == "411"
                cursor.execute(LINE, (entry_id, line_no, account, party.siren if third else None,
                                      party.name if third else None, debit, credit,
                                      invoice_id if account in ("411", "44574") else None, entry_id))


def create_app() -> falcon.App:
    """The collection by hand, and `GET /api/health` (what `stack.serve` waits for)."""
    from ops.bench.bare_app import SESSION_COOKIE, Health, pools

    app = falcon.App()
    app.add_route("/api/health", Health())
    app.add_route("/api/billing/reservations/{reservation_id}/collect", Collect(pools, SESSION_COOKIE))
    return app
