"""The SQL of a collection (spec C "Collection flow"): its first two round trips, each one
statement; the third is the invoice's (`invoices.issue_invoice`, sent with the COMMIT).

The pieces another module owns are embedded as that module writes them elsewhere: the key's hold,
read and stored answer (`idempotency`), the financial record's opening and move (`records`), the
journal (`ledger`), the outbox rows of `invoice.issued` (`outbox`, `events`), the billing-profile
columns of a party (`parties`). Each is a `prepared.Fragment` (the one convention for a piece of
SQL another statement embeds): a text with named `%(...)s` values, which the owning module's
`..._values` function gives, checked against the text.
"""

from __future__ import annotations

from backend import events, outbox, prepared
from backend.billing import idempotency, records
from backend.billing.accounting import ledger
from backend.billing.parties import PROFILE_COLUMNS

RECORD = ("financial_status", "store_base_cents", "commission_cents", "total_cents")

# Round trip 1 (after `idempotency.HOLD`, sent before it): everything the seven steps read.
READ = prepared.Statement("billing_collection_read", (
    # The financial record opened `reservation_total_due` when absent (`records.OPEN_COLLECTABLE`):
    # it comes from the table, or from this INSERT (which the statement's read cannot see).
    f"WITH opened AS ({records.OPEN_COLLECTABLE} RETURNING {', '.join(RECORD)})"  # noqa: S608 (constants only)
    # Steps 1 and 2: the reservation's status and billing model, locked for the collection; the
    # invoice's line (ad space, store, dates) and customer (the industrial organization, shared-
    # locked so a KYB review cannot commit before this transaction, with its billing profile).
    " SELECT r.status, r.billing_model, r.distributor_organization_id, r.starts_at, r.ends_at,"
    " a.name AS space_name, s.name AS store_name, o.kyb_status, o.legal_name AS organization_legal_name, o.siren,"
    " bp.organization_id IS NOT NULL AS has_profile, "
    + ", ".join(f"bp.{column}" for column in PROFILE_COLUMNS) + ", "
    # Step 5: the record's status; steps 4, 6 and 7: its frozen amounts.
    + ", ".join(f"coalesce(f.{column}, opened.{column}) AS {column}" for column in RECORD)
    # Step 3: the industrial's active SEPA mandate.
    + ", (SELECT m.mandate_ref FROM billing_sepa_mandate m WHERE m.organization_id = o.id AND m.status = 'active'"  # noqa: S608
    " LIMIT 1) AS mandate_ref,"
    # A sale whose direct debit the bank returned: its invoice is collected again (`collection_again`).
    " (SELECT po.id FROM billing_payment_order po JOIN billing_invoice i ON i.id = po.invoice_id"
    " WHERE po.reservation_id = r.id AND po.kind = 'reservation_total' AND po.settlement = 'returned'"
    " AND i.kind = 'platform_sale' ORDER BY po.returned_on DESC, po.created_at DESC LIMIT 1) AS returned_order_id,"
    # The key's record (held by the statement before: it shows what the key's last holder committed).
    f" {idempotency.READ_COLUMNS}"
    " FROM reservation r JOIN organization o ON o.id = r.industrial_organization_id"
    " JOIN ad_space a ON a.id = r.ad_space_id JOIN store s ON s.id = a.store_id"
    " LEFT JOIN billing_profile bp ON bp.organization_id = o.id"
    " LEFT JOIN billing_financial_record f ON f.reservation_id = r.id LEFT JOIN opened ON true"
    f" {idempotency.READ_JOIN}"
    " WHERE r.id = %(id)s AND r.industrial_organization_id = %(org)s FOR UPDATE OF r FOR SHARE OF o"
))

_EVENT_PARTS = events.part_names(events.INVOICE_ISSUED)
# Round trip 2: steps 5, 4 and 7, the key's answer and the outbox rows of step 6's
# `invoice.issued`. When the record is no longer due, nothing is written.
WRITE = prepared.Statement("billing_collection_writes", (
    # Step 5: `reservation_total_due` -> `reservation_total_paid` (`records.SETTLE`, which locks it).
    f"WITH settled AS ({records.SETTLE}),"  # noqa: S608 (constants only)
    # Step 4: the `reservation_total` payment order, `paid` at once (no payment service provider is
    # called, so its `pending` state would never be seen outside the transaction).
    " paid AS (INSERT INTO billing_payment_order (id, reservation_id, invoice_id, organization_id, kind, method,"
    " status, amount_cents, mandate_ref, created_by_user_id, created_at, updated_at, paid_at)"
    " SELECT %(order)s, %(id)s, %(invoice)s, %(org)s, %(kind)s, %(method)s, %(paid)s, %(amount)s::bigint,"
    " %(mandate)s, %(user)s, %(now)s::timestamptz, %(now)s, %(now)s FROM settled RETURNING id),"
    # Step 7: the sale's and the payment's entries, naming the invoice issued next (validated,
    # balanced and numbered at the commit).
    f" {ledger.collection_fragment(when='EXISTS (SELECT FROM paid)')},"
    # The key's answer, stored with the effects.
    f" stored AS ({idempotency.STORE})"
    # Step 6's `invoice.issued`: one outbox row per subscriber.
    + "".join(f", {name} AS ({outbox.part_fragment(name)})" for name in _EVENT_PARTS)
    + " SELECT (SELECT count(*) FROM paid)" + "".join(f", (SELECT id FROM {name})" for name in _EVENT_PARTS)  # noqa: S608
))
