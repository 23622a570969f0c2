"""E-invoicing after the deposit (issue 31).

- `einvoice_transmission` gains the frozen buyer it was routed by (`buyer_siren`, `buyer_country`),
  the XP Z12-013 processing rule (`B2B` domestic, `B2BInt` e-reporting of international B2B), the
  latest lifecycle status (`lifecycle_code`, `lifecycle_at`, kept by a trigger from the lifecycle
  rows) and `next_dispatch_at` (a dispatch the operator throttled, run again automatically).
- `einvoice_lifecycle_event`: the reform's lifecycle statuses of a transmission, one row per
  (code, date): a status the operator reports twice is stored once.
- `einvoice_payment_report`: the platform's own 212 "Encaissée" per payment order, once per
  idempotency key `<invoiceNumber>:212:<paymentOrderId>`; a refund's is negative.
- `einvoice_directory_entry`: the operator directory's answer per SIREN, cached for a day.
- `einvoicing_polling_pass` records the latest `updatedAt` its search saw (where the next search
  starts), its searches and the lifecycle statuses it stored.
"""

LIFECYCLE_CODES = "200, 202, 203, 204, 205, 206, 207, 208, 210, 211, 212, 213"


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        ALTER TABLE einvoice_transmission
            ADD COLUMN buyer_siren       varchar(9) CHECK (buyer_siren ~ '^[0-9]{9}$'),
            ADD COLUMN buyer_country     varchar(2),
            ADD COLUMN processing_rule   varchar(10) NOT NULL DEFAULT 'B2B'
                                         CHECK (processing_rule IN ('B2B', 'B2BInt')),
            ADD COLUMN lifecycle_code    smallint,
            ADD COLUMN lifecycle_at      timestamptz,
            ADD COLUMN next_dispatch_at  timestamptz,
            ADD CONSTRAINT einvoice_transmission_rule_follows_flow CHECK (
                (flow_type = 'fr_domestic_b2b') = (processing_rule = 'B2B'))
        """
    )
    migrator.sql(
        "CREATE INDEX einvoice_transmission_lifecycle ON einvoice_transmission (lifecycle_code) "
        "WHERE lifecycle_code IN (207, 208, 210, 213)"
    )
    migrator.sql(
        "CREATE INDEX einvoice_transmission_due_retry ON einvoice_transmission (next_dispatch_at) "
        "WHERE status = 'failed' AND next_dispatch_at IS NOT NULL"
    )
    migrator.sql("CREATE INDEX einvoice_transmission_open ON einvoice_transmission (created_at) "
                 "WHERE status IN ('sent', 'acknowledged')")
    migrator.sql(
        f"""
        CREATE TABLE einvoice_lifecycle_event (
            id               bigserial PRIMARY KEY,
            transmission_id  varchar(36) NOT NULL REFERENCES einvoice_transmission (id) ON DELETE CASCADE,
            code             smallint NOT NULL CHECK (code IN ({LIFECYCLE_CODES})),
            at               timestamptz NOT NULL,
            reason           text,
            received_at      timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT einvoice_lifecycle_event_once UNIQUE (transmission_id, code, at)
        )
        """
    )
    # The transmission shows its latest status (by date, then arrival): the attention list and
    # the reconciliation filter on it without reading the history.
    migrator.sql(
        """
        CREATE FUNCTION einvoice_lifecycle_latest() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE einvoice_transmission
               SET lifecycle_code = NEW.code, lifecycle_at = NEW.at
             WHERE id = NEW.transmission_id AND (lifecycle_at IS NULL OR lifecycle_at <= NEW.at);
            RETURN NULL;
        END;
        $$
        """
    )
    migrator.sql(
        """
        CREATE TRIGGER einvoice_lifecycle_latest AFTER INSERT ON einvoice_lifecycle_event
            FOR EACH ROW EXECUTE FUNCTION einvoice_lifecycle_latest()
        """
    )
    migrator.sql(
        """
        CREATE TABLE einvoice_payment_report (
            id                 varchar(36) PRIMARY KEY,
            idempotency_key    varchar(200) NOT NULL UNIQUE,
            invoice_number     varchar(80) NOT NULL,
            payment_order_id   varchar(36) NOT NULL,
            amount_cents       bigint NOT NULL CHECK (amount_cents <> 0),
            amounts            jsonb NOT NULL,
            paid_on            date NOT NULL,
            status             varchar(10) NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
            provider_flow_id   varchar(120),
            attempts           integer NOT NULL DEFAULT 0,
            last_error_message text,
            created_at         timestamptz NOT NULL DEFAULT now(),
            sent_at            timestamptz,
            CONSTRAINT einvoice_payment_report_key_shape
                CHECK (idempotency_key = invoice_number || ':212:' || payment_order_id),
            CONSTRAINT einvoice_payment_report_sent_has_flow CHECK ((status = 'sent') = (provider_flow_id IS NOT NULL))
        )
        """
    )
    migrator.sql(
        """
        CREATE TABLE einvoice_directory_entry (
            siren       varchar(9) PRIMARY KEY,
            registered  boolean NOT NULL,
            checked_at  timestamptz NOT NULL
        )
        """
    )
    migrator.sql(
        """
        ALTER TABLE einvoicing_polling_pass
            ADD COLUMN updated_after  timestamptz,
            ADD COLUMN searches       integer NOT NULL DEFAULT 0 CHECK (searches >= 0),
            ADD COLUMN lifecycle      integer NOT NULL DEFAULT 0 CHECK (lifecycle >= 0)
        """
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("ALTER TABLE einvoicing_polling_pass DROP COLUMN updated_after, DROP COLUMN searches, "
                 "DROP COLUMN lifecycle")
    migrator.sql("DROP TABLE einvoice_directory_entry, einvoice_payment_report, einvoice_lifecycle_event")
    migrator.sql("DROP FUNCTION einvoice_lifecycle_latest()")
    migrator.sql(
        "ALTER TABLE einvoice_transmission DROP CONSTRAINT einvoice_transmission_rule_follows_flow, "
        "DROP COLUMN buyer_siren, DROP COLUMN buyer_country, DROP COLUMN processing_rule, "
        "DROP COLUMN lifecycle_code, DROP COLUMN lifecycle_at, DROP COLUMN next_dispatch_at"
    )
