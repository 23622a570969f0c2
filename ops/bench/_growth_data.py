"""The databases of `vitrine bench growth`: a platform's history written in bulk, built once per
bench data directory and kept (`persisted`), a copy of one measured per run.

What a database of `Sizes` holds, beside the printing world of `_printing.build_world` (the
industrial, distributor and printer `_printing` names, their users, a furniture type of the
printer, a campaign, 100 stores):
- `organizations` industrial organizations (the `_printing.INDUSTRIAL` one and `organizations - 1`
  others), each KYB approved with a billing profile and a campaign;
- `reservations` approved `principal_seller` reservations, one week each on an ad space (an ad
  space carries 50 consecutive weeks), the first 60 of `_printing.INDUSTRIAL`, the others spread
  over the other industrials;
- `invoices` of them collected as a collection leaves them (spec C "Collection flow", the rows
  `collection_sql` writes): the financial record `reservation_total_paid` (opened
  `reservation_total_due`, then settled: the transition trigger checks both steps), the paid
  `reservation_total` payment order, the `platform_sale` invoice numbered in the series
  `FAC-RES-2026` (numbers 1..invoices, issue order = number order, the counter row at the last),
  the sale's `VE` entry (411 / 706 / 44571) and the payment's `BQ` entry (512 / 411), the two 411
  lines lettered together. Their services start from January 2027 (paid in advance), except the
  last `DUE` ones, whose service ended in October 2026: the self-billing pass's due reservations;
- `orders` print orders of the printer on the first reservations, three lines each;
- `transmissions` e-invoicing transmissions `sent` (created `pending_dispatch`, then moved on by
  the guard's transitions, the history trigger writing their events) of the last invoices.

Nothing goes through the API, and no trigger or constraint is set aside: every row is inserted by
set-based SQL on the server (`INSERT ... SELECT ... FROM generate_series`: COPY's speed, without
shipping the rows from a client), in transactions of `BATCH` collections, so that the books' deferred
validation (migration 140/156: balance, gapless number per journal and fiscal year, in validation
order) runs at each commit on every entry as it does for the platform's, and the counters' rows
are not updated a million times in one transaction.

`persisted` keeps each built database on the bench's PostgreSQL server with a marker (the
database's comment: this module's `BUILD_VERSION`, the sizes, the migrations applied): a database
whose marker differs only by migrations added since is migrated forward (as production's data
is), any other difference builds it again. It is built (or migrated) in the bench database, then
copied under its name, the marker written last: an interrupted build leaves nothing a later run
would take for built.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

from ops.bench import _printing

BUILD_VERSION = 1  # raise when what a build writes changes: the kept databases are built again
BATCH = 1_000  # collections per transaction (the journals' counter rows are updated twice per collection)
DUE = 100  # collected reservations whose service has ended: the self-billing pass's due ones
OWN_INVOICES = 60  # the measured organization's (`_printing.INDUSTRIAL`) invoices
WEEKS_PER_SPACE = 50
SERIES = "FAC-RES-2026"
FISCAL_YEAR = 2026


@dataclass(frozen=True)
class Sizes:
    organizations: int
    reservations: int
    invoices: int
    orders: int
    transmissions: int

    def __post_init__(self) -> None:
        if not (OWN_INVOICES + DUE <= self.invoices <= self.reservations and self.orders <= self.reservations
                and self.transmissions <= self.invoices and self.organizations >= 2):
            raise ValueError(f"inconsistent sizes: {self}")


def build(sizes: Sizes, *, platform: dict) -> None:
    """Write the database of `sizes` into the current (freshly migrated) database; `platform`
    is the issuer of the sale invoices (`parties.platform_party`)."""
    from backend.db import database, transaction

    with transaction():
        world = _printing.build_world(stores=100, zones=list(_printing.GROWTH_ZONES))
        _organizations(sizes, world)
        spaces = -(-sizes.reservations // WEEKS_PER_SPACE)
        database.execute_sql(_AD_SPACES, {"spaces": spaces, "store_ids": world.store_ids,
                                          "kind": world.furniture_type_id, "universe": _universe()})
    params = {"own": _printing.INDUSTRIAL, "own_count": OWN_INVOICES, "others": sizes.organizations - 1,
              "spaces": spaces, "weeks": WEEKS_PER_SPACE, "version": world.version_id,
              "distributor": _printing.DISTRIBUTOR, "invoices": sizes.invoices, "due": DUE,
              "platform": json.dumps(platform), "series": SERIES, "fiscal_year": FISCAL_YEAR,
              "own_campaign": world.campaign_id}
    with transaction():  # the series' counter, which the invoices reference, moved on batch by batch
        database.execute_sql(_COUNTER, {"series": SERIES})
    for first in range(1, sizes.reservations + 1, BATCH):
        last = min(first + BATCH - 1, sizes.reservations)
        with transaction():
            database.execute_sql(_RESERVATIONS, {**params, "first": first, "last": last})
            if first <= sizes.invoices:
                collected = {**params, "first": first, "last": min(last, sizes.invoices)}
                for statement in (_NUMBERED, *_COLLECTIONS):
                    database.execute_sql(statement, collected)
    with transaction():
        database.execute_sql(_ORDERS, {"orders": sizes.orders, "printer": _printing.PRINTER,
                                       "zones": [zone.id for zone in world.zones[:2]]})
        database.execute_sql("SELECT setval('print_order_code_seq', %s)", (sizes.orders + 1,))
        for statement in _TRANSMISSIONS:
            database.execute_sql(statement, {"first": sizes.invoices - sizes.transmissions + 1,
                                             "last": sizes.invoices})


def reservation_id(n: int) -> str:
    """The id of the n-th reservation (1-based) of a built database."""
    return str(_uuid(f"res{n}"))


def invoice_number(n: int) -> str:
    return f"{SERIES}-{n:06d}"


def own_invoice_numbers() -> list[str]:
    """The numbers of the measured organization's invoices (the first `OWN_INVOICES`)."""
    return [invoice_number(n) for n in range(1, OWN_INVOICES + 1)]


def flow_id(n: int) -> str:
    """The operator's flow id of the transmission of the n-th invoice."""
    return f"flow-growth-{n:07d}"


def _uuid(text: str):
    import uuid

    return uuid.UUID(hashlib.md5(text.encode()).hexdigest())  # noqa: S324 (an id, not a secret)


def _universe() -> str:
    from backend.marketplace import store_zones

    return store_zones.create_universe(label="Univers croissance").id


def _organizations(sizes: Sizes, world) -> None:
    from backend.db import database

    database.execute_sql(_ORGANIZATIONS, {"others": sizes.organizations - 1, "own": _printing.INDUSTRIAL})


# The industrials after the `_printing` one: SIRENs 700000001.., each with its billing profile and
# a campaign (the `_printing` industrial's is the world's).
_ORGANIZATIONS = """
WITH orgs AS (
    INSERT INTO organization (id, actor_type, siren, legal_name, kyb_status)
    SELECT 'industrial:' || (700000000 + k), 'industrial', (700000000 + k)::text, 'Industriel ' || k, 'approved'
      FROM generate_series(1, %(others)s) k
    RETURNING id, siren, legal_name),
profiles AS (
    INSERT INTO billing_profile (organization_id, legal_name, siret, street, postal_code, city, country,
                                 signer_first_name, signer_last_name, signer_email, signer_phone,
                                 signer_on_registry_extract)
    SELECT id, legal_name || ' SAS', siren || '00013', '1 rue du Commerce', '75001', 'Paris', 'FR', 'A', 'B',
           'signataire@example.com', '+33612345678', true
      FROM orgs UNION ALL
    SELECT id, legal_name || ' SAS', siren || '00013', '1 rue du Commerce', '75001', 'Paris', 'FR', 'A', 'B',
           'signataire@example.com', '+33612345678', true
      FROM organization WHERE id = %(own)s)
INSERT INTO campaign (id, organization_id, name, starts_at, ends_at)
SELECT md5('camp' || id)::uuid::text, id, 'Campagne ' || legal_name, '2026-10-05', '2029-12-31' FROM orgs
"""

_AD_SPACES = """
INSERT INTO ad_space (id, store_id, name, promo_furniture_type_id, placement_universe_id, price_cents)
SELECT md5('space' || a)::uuid::text, (%(store_ids)s::text[])[1 + a %% cardinality(%(store_ids)s::text[])],
       'Emplacement ' || a, %(kind)s, %(universe)s, 10000
  FROM generate_series(0, %(spaces)s - 1) a
"""

# Reservation n: ad space (n - 1) % spaces, week (n - 1) / spaces from 2027-01-04; the d-th due one
# (the last `due` collected) ad space d % spaces, week d / spaces from 2026-06-01 instead.
# Industrial: the measured one for the first `own_count`, else one of the others in turn.
_RESERVATIONS = """
INSERT INTO reservation (id, industrial_organization_id, distributor_organization_id, campaign_id, ad_space_id,
                         furniture_type_version_id, starts_at, ends_at, status, billing_model, base_amount_cents,
                         commission_amount_cents, total_amount_cents, commission_rate_bps, impression_status,
                         created_at, updated_at, approved_at)
SELECT md5('res' || n)::uuid::text, org, %(distributor)s,
       CASE WHEN org = %(own)s THEN %(own_campaign)s ELSE md5('camp' || org)::uuid::text END,
       md5('space' || space)::uuid::text, %(version)s, starts, starts + interval '7 days',
       'approved', 'principal_seller', base, (base * 2000 + 5000) / 10000, base + (base * 2000 + 5000) / 10000, 2000,
       'locked', created, created, created
  FROM (SELECT n, 10000 + (n %% 97) * 10 AS base,
               CASE WHEN n <= %(own_count)s THEN %(own)s
                    ELSE 'industrial:' || (700000001 + (n - %(own_count)s - 1) %% %(others)s) END AS org,
               CASE WHEN due THEN d %% %(spaces)s ELSE (n - 1) %% %(spaces)s END AS space,
               CASE WHEN due THEN timestamptz '2026-06-01 00:00+00' + (d / %(spaces)s) * interval '7 days'
                    ELSE timestamptz '2027-01-04 00:00+00' + ((n - 1) / %(spaces)s) * interval '7 days' END AS starts,
               timestamptz '2025-12-01 00:00+00' + n * interval '5 seconds' AS created
          FROM generate_series(%(first)s, %(last)s) n,
               LATERAL (SELECT n > %(invoices)s - %(due)s AND n <= %(invoices)s AS due,
                               n - (%(invoices)s - %(due)s) - 1 AS d) k) r
"""

# What a collection writes for reservations first..last, issued 10 s apart from 2026-01-02 in
# number order (spec C: VAT 20 %%, the invoice's total = the payment = the 411 lines).
_SALE = """
SELECT n, md5('res' || n)::uuid::text AS reservation, md5('inv' || n)::uuid::text AS invoice,
       md5('po' || n)::uuid::text AS payment, r.industrial_organization_id AS org, r.total_amount_cents AS excl,
       (r.total_amount_cents * 2000 + 5000) / 10000 AS vat, r.base_amount_cents AS base,
       r.commission_amount_cents AS commission, r.starts_at, r.ends_at,
       timestamptz '2026-01-02 08:00+00' + n * interval '10 seconds' AS issued, p.legal_name, o.siren,
       p.siret, p.street, p.postal_code, p.city
  FROM generate_series(%(first)s, %(last)s) n
  JOIN reservation r ON r.id = md5('res' || n)::uuid::text
  JOIN organization o ON o.id = r.industrial_organization_id
  JOIN billing_profile p ON p.organization_id = o.id
"""
_COLLECTIONS = (
    f"""
    INSERT INTO billing_financial_record (reservation_id, billing_model, financial_status, store_base_cents,
                                          commission_cents, total_cents, commission_rate_bps, created_at, updated_at)
    SELECT reservation, 'principal_seller', 'reservation_total_due', base, commission, excl, 2000, issued, issued
      FROM ({_SALE}) s
    """,  # noqa: S608 (constants only)
    """
    UPDATE billing_financial_record SET financial_status = 'reservation_total_paid'
     WHERE reservation_id IN (SELECT md5('res' || n)::uuid::text FROM generate_series(%(first)s, %(last)s) n)
    """,
    f"""
    INSERT INTO billing_invoice (id, number, series, sequence, kind, status, reservation_id, customer_organization_id,
                                 issuer, customer, lines, amount_excl_tax_cents, vat_rate_bps, issued_at, due_at,
                                 service_starts_at, service_ends_at, paid_at, created_at, updated_at)
    SELECT invoice, %(series)s || '-' || lpad(n::text, greatest(6, length(n::text)), '0'), %(series)s, n,
           'platform_sale', 'paid', reservation, org, %(platform)s::jsonb,
           jsonb_build_object('organizationId', org, 'legalName', legal_name, 'siren', siren, 'siret', siret,
                              'vatNumber', null, 'street', street, 'postalCode', postal_code, 'city', city,
                              'country', 'FR', 'email', null, 'iban', null, 'complete', true),
           jsonb_build_array(
               jsonb_build_object('label', 'Emplacement, du ' || to_char(starts_at, 'DD/MM/YYYY') || ' au '
                                           || to_char(ends_at, 'DD/MM/YYYY'),
                                  'quantity', 1, 'unitPriceCents', base, 'totalCents', base),
               jsonb_build_object('label', 'Commission de la plateforme', 'quantity', 1,
                                  'unitPriceCents', commission, 'totalCents', commission)),
           excl, 2000, issued, issued, starts_at, ends_at, issued, issued, issued
      FROM ({_SALE}) s ORDER BY n
    """,  # noqa: S608 (constants only)
    f"""
    INSERT INTO billing_payment_order (id, reservation_id, invoice_id, organization_id, kind, method, status,
                                       amount_cents, created_at, updated_at, paid_at)
    SELECT payment, reservation, invoice, org, 'reservation_total', 'bank_transfer', 'paid', excl + vat,
           issued, issued, issued
      FROM ({_SALE}) s
    """,  # noqa: S608 (constants only)
    # The two entries of each sale in its order (the sale's, then the payment's): the validation
    # at the commit numbers them in that order.
    f"""
    INSERT INTO accounting_entry (id, journal_code, fiscal_year, entry_date, piece_ref, piece_date, label, event,
                                  reservation_id, invoice_id, payment_order_id, created_at)
    SELECT md5(j.code || n)::uuid::text, j.code, %(fiscal_year)s, (issued AT TIME ZONE 'Europe/Paris')::date,
           %(series)s || '-' || lpad(n::text, greatest(6, length(n::text)), '0'),
           (issued AT TIME ZONE 'Europe/Paris')::date, j.label || legal_name, j.event, reservation, invoice,
           CASE WHEN j.code = 'BQ' THEN payment END, issued
      FROM ({_SALE}) s
     CROSS JOIN (VALUES (1, 'VE', 'Facture ', 'sale_invoice'), (2, 'BQ', 'Encaissement ', 'collection'))
                AS j(position, code, label, event)
     ORDER BY n, j.position
    """,  # noqa: S608 (constants only)
    f"""
    INSERT INTO accounting_line (entry_id, line_no, account, aux_account, aux_label, label, debit_cents, credit_cents,
                                 letter_group)
    SELECT md5(l.code || n)::uuid::text, l.line_no, l.account,
           CASE WHEN l.account = '411' THEN siren END, CASE WHEN l.account = '411' THEN legal_name END,
           l.label || legal_name,
           CASE l.side WHEN 'debit' THEN l.share ELSE 0 END, CASE l.side WHEN 'credit' THEN l.share ELSE 0 END,
           CASE WHEN l.account = '411' THEN invoice END
      FROM (SELECT s.*, v.*, CASE v.amount WHEN 'incl' THEN excl + vat WHEN 'excl' THEN excl ELSE vat END AS share
              FROM ({_SALE}) s
             CROSS JOIN (VALUES ('VE', 1, '411', 'debit', 'incl', 'Facture '),
                                ('VE', 2, '706', 'credit', 'excl', 'Facture '),
                                ('VE', 3, '44571', 'credit', 'vat', 'Facture '),
                                ('BQ', 1, '512', 'debit', 'incl', 'Encaissement '),
                                ('BQ', 2, '411', 'credit', 'incl', 'Encaissement '))
                        AS v(code, line_no, account, side, amount, label)) l
     ORDER BY n, l.code DESC, l.line_no
    """,  # noqa: S608 (constants only)
    # The sale's receivable lettered with its payment before the commit, as the collection does
    # (`entries.own_lettering_fragment`): a code and an id drawn from the lettering sequence.
    f"""
    WITH lettering AS (
        SELECT invoice, (issued AT TIME ZONE 'Europe/Paris')::date AS day,
               accounting_letter_code(nextval('accounting_lettering_id_seq')) AS code,
               nextval('accounting_lettering_id_seq') AS id
          FROM ({_SALE}) s ORDER BY n),
    letterings AS (INSERT INTO accounting_lettering (id, code, lettered_on) SELECT id, code, day FROM lettering)
    INSERT INTO accounting_lettered_line (line_id, lettering_id)
    SELECT l.id, g.id FROM lettering g JOIN accounting_line l ON l.letter_group = g.invoice AND l.account = '411'
    """,  # noqa: S608 (constants only)
)
# The series' counter, at the last number a batch issues, as its collections leave it.
_COUNTER = "INSERT INTO billing_number_counter (series, last_value) VALUES (%(series)s, 0)"
_NUMBERED = """
UPDATE billing_number_counter SET last_value = %(last)s,
       updated_at = timestamptz '2026-01-02 08:00+00' + %(last)s * interval '10 seconds'
 WHERE series = %(series)s
"""
# Print orders of the printer on the first reservations, statuses in turn (as the printer's
# status changes write them), three lines each (a zone's two faces together, the other zone face by face).
_ORDERS = """
WITH orders AS (
    INSERT INTO print_order (id, code, reservation_id, printer_organization_id, industrial_organization_id, status,
                             cancel_reason, delivery_target, created_at, updated_at)
    SELECT md5('order' || n)::uuid::text, 'PM-' || lpad(n::text, greatest(5, length(n::text)), '0'), r.id,
           %(printer)s, r.industrial_organization_id, s.status,
           CASE WHEN s.status = 'cancelled' THEN 'bench' END, 'none', moment, moment
      FROM generate_series(1, %(orders)s) n
      JOIN reservation r ON r.id = md5('res' || n)::uuid::text
      JOIN (VALUES (0, 'pending'), (1, 'sent'), (2, 'in_production'), (3, 'produced'), (4, 'delivered'),
                   (5, 'cancelled')) AS s(k, status) ON s.k = n %% 6
     CROSS JOIN LATERAL (SELECT timestamptz '2026-03-02 00:00+00' + n * interval '1 minute' AS moment) m
    RETURNING id)
INSERT INTO print_order_line (order_id, position, zone_id, face_index, quantity, qualifiers)
SELECT o.id, l.position, (%(zones)s::text[])[l.zone], l.face_index, l.quantity, l.qualifiers
  FROM orders o
 CROSS JOIN (VALUES (0, 1, NULL::int, 2, ARRAY['face 1', 'face 2']), (1, 2, 0, 1, ARRAY['face 1']),
                    (2, 2, 1, 1, ARRAY['face 2'])) AS l(position, zone, face_index, quantity, qualifiers)
"""
# Transmissions of invoices first..last, through the guard's transitions to `sent`.
_TRANSMISSIONS = (
    """
    INSERT INTO einvoice_transmission (id, idempotency_key, invoice_number, invoice_kind, document_kind, flow_type,
                                       document_pdf_key, amount_incl_tax_cents, buyer_siren, buyer_country,
                                       created_at, updated_at, status_changed_at)
    SELECT md5('tx' || i.sequence)::uuid::text, i.number || ':invoice:fr_domestic_b2b', i.number, 'platform_sale',
           'invoice', 'fr_domestic_b2b', 'billing/invoices/' || i.number || '.pdf',
           i.amount_excl_tax_cents + (i.amount_excl_tax_cents * 2000 + 5000) / 10000,
           i.customer->>'siren', 'FR', now() - interval '1 hour', now() - interval '1 hour', now() - interval '1 hour'
      FROM billing_invoice i WHERE i.series = 'FAC-RES-2026' AND i.sequence BETWEEN %(first)s AND %(last)s
    """,
    """
    UPDATE einvoice_transmission SET status = 'dispatching', dispatch_claimed_at = now() - interval '1 hour',
           dispatch_attempts = 1
     WHERE id IN (SELECT md5('tx' || n)::uuid::text FROM generate_series(%(first)s, %(last)s) n)
    """,
    """
    UPDATE einvoice_transmission SET status = 'sent', provider_status = 'processing', operator_status = 'Pending',
           provider_flow_id = 'flow-growth-' || lpad(substr(invoice_number, 14), 7, '0'),
           dispatch_claimed_at = NULL, last_synced_at = now() - interval '1 hour'
     WHERE id IN (SELECT md5('tx' || n)::uuid::text FROM generate_series(%(first)s, %(last)s) n)
    """,
)


def marker(sizes: Sizes) -> str:
    """What a kept database was built from: this module's version, the sizes, the migrations."""
    from backend.db import database

    migrations = [name for (name,) in database.execute_sql("SELECT name FROM migratehistory ORDER BY name")]
    return json.dumps({"build": BUILD_VERSION, "sizes": asdict(sizes), "migrations": migrations}, sort_keys=True)


def persisted(admin_url: str, name: str, wanted: str, *, work: str, fresh: Callable[[], None],
              fill: Callable[[], None], migrate: Callable[[], None]) -> tuple[str, float] | None:
    """Make the database `name` hold what `fill` writes, marked `wanted` (`marker`): kept as it is
    when its marker is `wanted` (None returned); migrated forward when only migrations were added
    since it was built (`migrate()` on a copy in `work`: as production's data would be); else built
    (`fresh()` empties the database `work` this process uses, `fill()` writes into it). Then `work`
    is copied as `name`, its marker written last; ("migrated" or "built", seconds) is returned."""
    kept = _marker_of(admin_url, name)
    if kept == wanted:
        return None
    began = time.monotonic()
    if kept is not None and _older_schema(json.loads(kept), json.loads(wanted)):
        done = "migrated"
        copy_into(admin_url, name, work)
        migrate()
    else:
        done = "built"
        fresh()
        fill()
    _close_connections()
    drop(admin_url, name)
    _admin(admin_url, "CREATE DATABASE {} TEMPLATE {} STRATEGY FILE_COPY", name, work)
    _admin(admin_url, "COMMENT ON DATABASE {} IS %s", name, params=(wanted,))
    return done, time.monotonic() - began


def _older_schema(kept: dict, wanted: dict) -> bool:
    """The same build and sizes, its migrations among those wanted: the missing ones are applied
    forward, whatever their numbers (a branch's migration merged after a later-numbered one, as
    peewee-migrate applies every migration a database has not run)."""
    migrations = kept.get("migrations") or []
    return (kept.get("build"), kept.get("sizes")) == (wanted["build"], wanted["sizes"]) and \
        set(migrations) <= set(wanted["migrations"])


def copy_into(admin_url: str, name: str, work: str) -> float:
    """The database `work` (this process's) replaced by a copy of `name`; the seconds it took."""
    began = time.monotonic()
    _close_connections()
    drop(admin_url, work)
    _admin(admin_url, "CREATE DATABASE {} TEMPLATE {} STRATEGY FILE_COPY", work, name)
    return time.monotonic() - began


def drop(admin_url: str, name: str) -> None:
    _admin(admin_url, "DROP DATABASE IF EXISTS {} WITH (FORCE)", name)


def _marker_of(admin_url: str, name: str) -> str | None:
    import psycopg2

    with psycopg2.connect(admin_url) as conn, conn.cursor() as cur:
        cur.execute("SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s", (name,))
        row = cur.fetchone()
    conn.close()
    return row[0] if row else None


def _admin(admin_url: str, statement: str, *names: str, params: tuple = ()) -> None:
    import psycopg2
    from psycopg2 import sql

    conn = psycopg2.connect(admin_url)
    conn.autocommit = True
    try:
        with conn.cursor() as cur:
            cur.execute(sql.SQL(statement).format(*(sql.Identifier(n) for n in names)), params or None)
    finally:
        conn.close()


def _close_connections() -> None:
    from backend.db import database

    if database.obj is not None:
        database.close_all()
