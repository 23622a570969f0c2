"""The books carried over: the entries of everything already issued and paid before migration 140
(docs/accounting.md, "Postings"), so that the books start complete.

Written in SQL here, not through the application's posting code, so that this migration does
tomorrow what it does today. The same postings as `backend/billing/accounting/ledger.py`:
invoices (sales, credit notes, self-billed invoices and their credit notes, legacy commissions with
their settlement from the store's funds; a store's own legacy invoices are not the platform's)
at their issue day, paid payment orders (collections, refunds, payouts, legacy deposits and
balances) at their payment day, VAT from the rate frozen on each invoice (half up), in
chronological order, so that the commit validates, numbers and letters them in that order. An
event already posted (its entry exists) is skipped: the migration can run on a database where
some events were posted already. The fiscal year follows `ACCOUNTING_FISCAL_YEAR_END` (default
12-31) as the migration reads it.
"""

import os

_VAT = "((2 * i.amount_excl_tax_cents::bigint * i.vat_rate_bps + 10000) / 20000)"
# A credit note's VAT: the difference of the cumulative VAT of its invoice's credit notes (API.md
# "Money that always balances"; `vat.vat_amount_cents`), from what was credited before it (migration 130).
_CREDIT_VAT = ("((2 * (coalesce(i.credited_before_cents, 0) + i.amount_excl_tax_cents)::bigint * i.vat_rate_bps"
               " + 10000) / 20000 - (2 * coalesce(i.credited_before_cents, 0)::bigint * i.vat_rate_bps + 10000)"
               " / 20000)")
_DAY = "(({0}) AT TIME ZONE 'Europe/Paris')::date"

# One row per entry: (rank, at, event, journal, invoice, order, reservation, piece, piece day,
# label) and its lines as a JSON array of [account, aux, aux label, debit, credit, group].
_EVENTS = f"""
SELECT 0 AS rank, i.issued_at AS at, 'sale_invoice' AS event, 'VE' AS journal, i.id AS invoice_id,
       NULL::text AS order_id, i.reservation_id, i.number AS piece, 'Facture ' || i.number AS label,
       jsonb_build_array(
         jsonb_build_array('411', i.customer->>'siren', i.customer->>'legalName',
                           i.amount_excl_tax_cents + {_VAT}, 0, i.id),
         jsonb_build_array('706', NULL, NULL, 0, i.amount_excl_tax_cents, NULL),
         jsonb_build_array('44571', NULL, NULL, 0, {_VAT}, NULL)) AS lines
  FROM billing_invoice i WHERE i.kind = 'platform_sale'
UNION ALL
SELECT 0, i.issued_at, 'commission_invoice', 'VE', i.id, NULL, i.reservation_id, i.number, 'Facture ' || i.number,
       jsonb_build_array(
         jsonb_build_array('411', i.customer->>'siren', i.customer->>'legalName',
                           i.amount_excl_tax_cents + {_VAT}, 0, i.id),
         jsonb_build_array('706', NULL, NULL, 0, i.amount_excl_tax_cents, NULL),
         jsonb_build_array('44571', NULL, NULL, 0, {_VAT}, NULL))
  FROM billing_invoice i WHERE i.kind = 'platform_commission'
UNION ALL
SELECT 1, i.issued_at, 'commission_settlement', 'OD', i.id, NULL, i.reservation_id, i.number,
       'Commission ' || i.number || ' imputée sur les fonds du magasin',
       jsonb_build_array(
         jsonb_build_array('467', i.customer->>'siren', i.customer->>'legalName',
                           i.amount_excl_tax_cents + {_VAT}, 0, i.reservation_id),
         jsonb_build_array('411', i.customer->>'siren', i.customer->>'legalName',
                           0, i.amount_excl_tax_cents + {_VAT}, i.id))
  FROM billing_invoice i WHERE i.kind = 'platform_commission'
UNION ALL
SELECT 0, i.issued_at, 'customer_credit_note', 'VE', i.id, NULL, i.reservation_id, i.number, 'Avoir ' || i.number,
       jsonb_build_array(
         jsonb_build_array('706', NULL, NULL, i.amount_excl_tax_cents, 0, NULL),
         jsonb_build_array('44571', NULL, NULL, {_CREDIT_VAT}, 0, NULL),
         jsonb_build_array('411', i.customer->>'siren', i.customer->>'legalName',
                           0, i.amount_excl_tax_cents + {_CREDIT_VAT}, i.credited_invoice_id))
  FROM billing_invoice i WHERE i.kind = 'platform_credit_note'
UNION ALL
SELECT 0, i.issued_at, 'self_billed_invoice', 'AC', i.id, NULL, i.reservation_id, i.number,
       'Autofacture ' || i.number,
       jsonb_build_array(
         jsonb_build_array('604', NULL, NULL, i.amount_excl_tax_cents, 0, NULL),
         jsonb_build_array('44566', NULL, NULL, {_VAT}, 0, NULL),
         jsonb_build_array('401', i.issuer->>'siren', i.issuer->>'legalName',
                           0, i.amount_excl_tax_cents + {_VAT}, i.id))
  FROM billing_invoice i WHERE i.kind = 'supplier_self_billed'
UNION ALL
SELECT 0, i.issued_at, 'supplier_credit_note', 'AC', i.id, NULL, i.reservation_id, i.number,
       'Avoir fournisseur ' || i.number,
       jsonb_build_array(
         jsonb_build_array('401', i.issuer->>'siren', i.issuer->>'legalName',
                           i.amount_excl_tax_cents + {_CREDIT_VAT}, 0, i.credited_invoice_id),
         jsonb_build_array('604', NULL, NULL, 0, i.amount_excl_tax_cents, NULL),
         jsonb_build_array('44566', NULL, NULL, 0, {_CREDIT_VAT}, NULL))
  FROM billing_invoice i WHERE i.kind = 'supplier_credit_note'
UNION ALL
SELECT 2, greatest(p.paid_at, i.issued_at),
       CASE p.kind WHEN 'reservation_total' THEN 'collection' WHEN 'refund' THEN 'refund'
                   WHEN 'supplier_payout' THEN 'payout' ELSE 'legacy_collection' END,
       'BQ', i.id, p.id, i.reservation_id, i.number,
       CASE p.kind WHEN 'reservation_total' THEN 'Encaissement ' WHEN 'refund' THEN 'Remboursement '
                   WHEN 'supplier_payout' THEN 'Paiement fournisseur ' ELSE 'Fonds reçus pour le magasin ' END
       || i.number,
       CASE p.kind
         WHEN 'reservation_total' THEN jsonb_build_array(
           jsonb_build_array('512', NULL, NULL, p.amount_cents, 0, NULL),
           jsonb_build_array('411', i.customer->>'siren', i.customer->>'legalName', 0, p.amount_cents, i.id))
         WHEN 'refund' THEN jsonb_build_array(
           jsonb_build_array('411', i.customer->>'siren', i.customer->>'legalName', p.amount_cents, 0,
                             i.credited_invoice_id),
           jsonb_build_array('512', NULL, NULL, 0, p.amount_cents, NULL))
         WHEN 'supplier_payout' THEN jsonb_build_array(
           jsonb_build_array('401', i.issuer->>'siren', i.issuer->>'legalName', p.amount_cents, 0, i.id),
           jsonb_build_array('512', NULL, NULL, 0, p.amount_cents, NULL))
         ELSE jsonb_build_array(
           jsonb_build_array('512', NULL, NULL, p.amount_cents, 0, NULL),
           jsonb_build_array('467', i.issuer->>'siren', i.issuer->>'legalName', 0, p.amount_cents,
                             i.reservation_id))
       END
  FROM billing_payment_order p JOIN billing_invoice i ON i.id = p.invoice_id WHERE p.status = 'paid'
"""  # noqa: S608 (constants only)


def migrate(migrator, database, fake=False, **kwargs):
    month, day = (int(part) for part in (os.environ.get("ACCOUNTING_FISCAL_YEAR_END") or "12-31").split("-"))
    migrator.sql(  # constants and integers only
        f"""
        CREATE TEMPORARY TABLE accounting_carried AS
        SELECT md5(e.event || ':' || e.invoice_id || ':' || coalesce(e.order_id, ''))::uuid::text AS entry_id, e.*,
               {_DAY.format("e.at")} AS day
          FROM ({_EVENTS}) AS e
         WHERE NOT EXISTS (SELECT FROM accounting_entry x WHERE x.event = e.event
                              AND x.invoice_id IS NOT DISTINCT FROM e.invoice_id
                              AND x.payment_order_id IS NOT DISTINCT FROM e.order_id)
           AND (SELECT sum((l->>3)::bigint) FROM jsonb_array_elements(e.lines) AS l) > 0
        """  # noqa: S608
    )
    migrator.sql(
        f"""
        INSERT INTO accounting_entry (id, journal_code, fiscal_year, entry_date, piece_ref, piece_date, label, event,
                                      reservation_id, invoice_id, payment_order_id)
        SELECT entry_id, journal, accounting_fiscal_year(day, {month}, {day}), day, piece, day, label, event,
               reservation_id, invoice_id, order_id
          FROM accounting_carried ORDER BY at, rank, entry_id
        """  # noqa: S608
    )
    migrator.sql(
        """
        INSERT INTO accounting_line (entry_id, line_no, account, aux_account, aux_label, label, debit_cents,
                                     credit_cents, letter_group)
        SELECT c.entry_id, l.n, l.item->>0, l.item->>1,
               CASE WHEN l.item->>1 IS NOT NULL THEN coalesce(l.item->>2, l.item->>1) END,
               c.label, (l.item->>3)::bigint, (l.item->>4)::bigint, l.item->>5
          FROM accounting_carried c, jsonb_array_elements(c.lines) WITH ORDINALITY AS l (item, n)
         WHERE (l.item->>3)::bigint + (l.item->>4)::bigint > 0
        """
    )
    migrator.sql("DROP TABLE accounting_carried")


def rollback(migrator, database, fake=False, **kwargs):
    pass  # the books are append-only: what was carried over stays
