"""Self-billing scheduler passes (spec C "Self-billing scheduler"): the last pass tells when the
next may start (API.md interval handling); at most one runs at a time (unique partial index);
each keeps the counters it logged. Plus the index the pass's selection reads."""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        CREATE TABLE billing_self_billing_pass (
            id                     bigserial PRIMARY KEY,
            started_at             timestamptz NOT NULL DEFAULT now(),
            finished_at            timestamptz,
            outcome                varchar(20) NOT NULL DEFAULT 'running'
                                   CHECK (outcome IN ('running', 'completed', 'abandoned')),
            eligible               integer NOT NULL DEFAULT 0 CHECK (eligible >= 0),
            issued                 integer NOT NULL DEFAULT 0 CHECK (issued >= 0),
            skipped_no_mandate     integer NOT NULL DEFAULT 0 CHECK (skipped_no_mandate >= 0),
            skipped_open_incident  integer NOT NULL DEFAULT 0 CHECK (skipped_open_incident >= 0),
            skipped_not_due        integer NOT NULL DEFAULT 0 CHECK (skipped_not_due >= 0),
            failed                 integer NOT NULL DEFAULT 0 CHECK (failed >= 0),
            CONSTRAINT billing_self_billing_pass_finished CHECK ((outcome = 'running') = (finished_at IS NULL))
        )
        """
    )
    migrator.sql(
        "CREATE UNIQUE INDEX billing_self_billing_pass_one_running ON billing_self_billing_pass ((true))"
        " WHERE outcome = 'running'"
    )
    migrator.sql("CREATE INDEX billing_self_billing_pass_started ON billing_self_billing_pass (started_at DESC)")
    migrator.sql(
        "CREATE INDEX billing_financial_record_status ON billing_financial_record (financial_status, billing_model)"
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP INDEX billing_financial_record_status")
    migrator.sql("DROP TABLE billing_self_billing_pass")
