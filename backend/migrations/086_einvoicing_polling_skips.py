"""E-invoicing: polling passes (the last one tells when the next may start; at most one runs at a
time, enforced by a unique partial index) and the invoices deliberately given no transmission
(e-reporting flows), which the reconciliation must not count as missing."""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        CREATE TABLE einvoicing_polling_pass (
            id              bigserial PRIMARY KEY,
            started_at      timestamptz NOT NULL DEFAULT now(),
            finished_at     timestamptz,
            outcome         varchar(20) NOT NULL DEFAULT 'running'
                            CHECK (outcome IN ('running', 'completed', 'abandoned')),
            loaded          integer NOT NULL DEFAULT 0 CHECK (loaded >= 0),
            acknowledged    integer NOT NULL DEFAULT 0 CHECK (acknowledged >= 0),
            rejected        integer NOT NULL DEFAULT 0 CHECK (rejected >= 0),
            sent            integer NOT NULL DEFAULT 0 CHECK (sent >= 0),
            unchanged       integer NOT NULL DEFAULT 0 CHECK (unchanged >= 0),
            failed          integer NOT NULL DEFAULT 0 CHECK (failed >= 0),
            errors          integer NOT NULL DEFAULT 0 CHECK (errors >= 0),
            CONSTRAINT einvoicing_polling_pass_finished CHECK ((outcome = 'running') = (finished_at IS NULL))
        )
        """
    )
    migrator.sql(
        "CREATE UNIQUE INDEX einvoicing_polling_pass_one_running ON einvoicing_polling_pass ((true)) "
        "WHERE outcome = 'running'"
    )
    migrator.sql("CREATE INDEX einvoicing_polling_pass_started ON einvoicing_polling_pass (started_at DESC)")
    migrator.sql(
        """
        CREATE TABLE einvoice_transmission_skip (
            invoice_number  varchar(80) PRIMARY KEY,
            flow_type       varchar(20) NOT NULL CHECK (flow_type IN ('eu_intra_b2b', 'export_b2b')),
            reason          varchar(40) NOT NULL,
            created_at      timestamptz NOT NULL DEFAULT now()
        )
        """
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP TABLE einvoice_transmission_skip, einvoicing_polling_pass")
