"""The security audit log: append-only (a trigger refuses UPDATE and DELETE)."""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        CREATE TABLE security_audit_event (
            id             bigserial PRIMARY KEY,
            occurred_at    timestamptz NOT NULL DEFAULT now(),
            event          varchar(80) NOT NULL,
            actor_user_id  varchar(36),
            target_type    varchar(40),
            target_id      varchar(120),
            ip             varchar(64),
            user_agent     varchar(400),
            request_id     varchar(128),
            details        jsonb NOT NULL DEFAULT '{}'::jsonb
        )
        """
    )
    migrator.sql("CREATE INDEX security_audit_event_occurred_at ON security_audit_event (occurred_at)")
    migrator.sql("CREATE INDEX security_audit_event_event ON security_audit_event (event varchar_pattern_ops)")
    migrator.sql("CREATE INDEX security_audit_event_actor ON security_audit_event (actor_user_id)")
    migrator.sql("CREATE INDEX security_audit_event_target ON security_audit_event (target_id)")
    migrator.sql(
        """
        CREATE FUNCTION security_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION 'security_audit_event is append-only';
        END
        $$
        """
    )
    migrator.sql(
        """
        CREATE TRIGGER security_audit_event_append_only
        BEFORE UPDATE OR DELETE ON security_audit_event
        FOR EACH ROW EXECUTE FUNCTION security_audit_append_only()
        """
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP TABLE security_audit_event")
    migrator.sql("DROP FUNCTION security_audit_append_only()")
