"""The distributor's decision on a self-billed invoice as the reform's lifecycle status the platform
sends for it (205 Approuvée, 210 Refusée; `backend/einvoicing/decision_reports.py`): once per
invoice and code, posted by the polling pass like the 212s."""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        CREATE TABLE einvoice_decision_report (
            id                 varchar(36) PRIMARY KEY,
            idempotency_key    varchar(200) NOT NULL UNIQUE,
            invoice_number     varchar(80) NOT NULL,
            code               smallint NOT NULL CHECK (code IN (205, 210)),
            reason             text CHECK (char_length(reason) <= 2000),
            decided_at         timestamptz NOT NULL,
            status             varchar(10) NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
            provider_flow_id   varchar(120),
            attempts           integer NOT NULL DEFAULT 0,
            last_error_message text,
            created_at         timestamptz NOT NULL DEFAULT now(),
            sent_at            timestamptz
        )
        """
    )
    migrator.sql("CREATE INDEX einvoice_decision_report_pending ON einvoice_decision_report (created_at)"
                 " WHERE status = 'pending'")


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP TABLE einvoice_decision_report")
