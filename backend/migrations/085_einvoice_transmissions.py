"""E-invoicing: transmissions of issued invoices to the operator, and the history of their statuses.

The invoice is referenced by its number (the invoice table belongs to billing). The database holds
the lifecycle's invariants: one transmission per idempotency key, the statuses and their allowed
moves (a trigger: terminal statuses never move), a flow identifier on every transmission the
operator has accepted, and a history row for every status change (written by the same trigger, so
no code path can move a status without leaving a trace).
"""

STATUSES = "'pending_dispatch','dispatching','sent','acknowledged','rejected','failed','cancelled'"
PROVIDER_STATUSES = "'processing','accepted','rejected'"
FLOW_TYPES = "'fr_domestic_b2b','eu_intra_b2b','export_b2b'"
DOCUMENT_KINDS = "'invoice','credit_note'"
INVOICE_KINDS = (
    "'platform_sale','platform_credit_note','supplier_self_billed','supplier_credit_note',"
    "'store_deposit','store_balance','platform_commission'"
)


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        f"""
        CREATE TABLE einvoice_transmission (
            id                      varchar(36) PRIMARY KEY,
            idempotency_key         varchar(200) NOT NULL,
            invoice_number          varchar(80) NOT NULL,
            invoice_kind            varchar(40) CHECK (invoice_kind IN ({INVOICE_KINDS})),
            document_kind           varchar(20) NOT NULL CHECK (document_kind IN ({DOCUMENT_KINDS})),
            flow_type               varchar(20) NOT NULL CHECK (flow_type IN ({FLOW_TYPES})),
            status                  varchar(20) NOT NULL DEFAULT 'pending_dispatch'
                                    CHECK (status IN ({STATUSES})),
            provider_status         varchar(20) CHECK (provider_status IN ({PROVIDER_STATUSES})),
            provider_flow_id        varchar(120),
            operator_status         varchar(40),
            document_pdf_key        text,
            amount_incl_tax_cents   bigint NOT NULL CHECK (amount_incl_tax_cents >= 0),
            dispatch_attempts       integer NOT NULL DEFAULT 0 CHECK (dispatch_attempts >= 0),
            dispatch_claimed_at     timestamptz,
            last_error_code         varchar(60),
            last_error_message      text,
            last_synced_at          timestamptz,
            created_at              timestamptz NOT NULL DEFAULT now(),
            updated_at              timestamptz NOT NULL DEFAULT now(),
            status_changed_at       timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT einvoice_transmission_idempotency_key UNIQUE (idempotency_key),
            CONSTRAINT einvoice_transmission_key_shape
                CHECK (idempotency_key = invoice_number || ':' || document_kind || ':' || flow_type),
            CONSTRAINT einvoice_transmission_flow_id UNIQUE (provider_flow_id),
            CONSTRAINT einvoice_transmission_accepted_has_flow
                CHECK (status NOT IN ('sent','acknowledged','rejected') OR provider_flow_id IS NOT NULL),
            CONSTRAINT einvoice_transmission_provider_status CHECK (
                coalesce(provider_status, '') = CASE status
                    WHEN 'sent' THEN 'processing'
                    WHEN 'acknowledged' THEN 'accepted'
                    WHEN 'rejected' THEN 'rejected'
                    ELSE '' END
            )
        )
        """
    )
    migrator.sql("CREATE INDEX einvoice_transmission_invoice ON einvoice_transmission (invoice_number)")
    migrator.sql(
        "CREATE INDEX einvoice_transmission_status ON einvoice_transmission (status, status_changed_at)"
    )
    # The polling pass reads the oldest-synced in-flight transmissions first.
    migrator.sql(
        "CREATE INDEX einvoice_transmission_in_flight ON einvoice_transmission "
        "(last_synced_at NULLS FIRST, created_at) WHERE status IN ('sent','dispatching')"
    )
    migrator.sql(
        f"""
        CREATE TABLE einvoice_transmission_event (
            id                  bigserial PRIMARY KEY,
            transmission_id     varchar(36) NOT NULL REFERENCES einvoice_transmission (id) ON DELETE CASCADE,
            from_status         varchar(20) CHECK (from_status IN ({STATUSES})),
            to_status           varchar(20) NOT NULL CHECK (to_status IN ({STATUSES})),
            provider_status     varchar(20),
            operator_status     varchar(40),
            operator_answer     jsonb,
            error_code          varchar(60),
            error_message       text,
            trigger             varchar(40) NOT NULL,
            actor_user_id       varchar(36),
            occurred_at         timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    migrator.sql(
        "CREATE INDEX einvoice_transmission_event_transmission "
        "ON einvoice_transmission_event (transmission_id, id)"
    )
    # Allowed moves (spec C, plus the decisions of docs/einvoicing.md: `failed` is reached from
    # `dispatching`; `cancelled` from `pending_dispatch` or `failed`; a retry or a resync that
    # finds the flow at the operator moves `pending_dispatch` or `failed` to `dispatching`).
    # Terminal statuses never move. The history row of every change is written by a second
    # trigger, with the operator's answer, trigger and actor the service sets for its transaction
    # (`SET LOCAL vitrine.einvoice_*`).
    migrator.sql(
        """
        CREATE FUNCTION einvoice_transmission_guard() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            allowed boolean;
        BEGIN
            IF TG_OP = 'INSERT' THEN
                IF NEW.status <> 'pending_dispatch' THEN
                    RAISE EXCEPTION 'a transmission starts in pending_dispatch, not %%', NEW.status
                        USING ERRCODE = 'check_violation';
                END IF;
                RETURN NEW;
            END IF;
            IF NEW.idempotency_key <> OLD.idempotency_key OR NEW.invoice_number <> OLD.invoice_number
               OR NEW.document_kind <> OLD.document_kind OR NEW.flow_type <> OLD.flow_type
               OR NEW.amount_incl_tax_cents <> OLD.amount_incl_tax_cents THEN
                RAISE EXCEPTION 'the invoice, kind, flow type and amount of a transmission never change'
                    USING ERRCODE = 'check_violation';
            END IF;
            IF NEW.status = OLD.status THEN
                RETURN NEW;
            END IF;
            allowed := CASE OLD.status
                WHEN 'pending_dispatch' THEN NEW.status IN ('dispatching', 'cancelled')
                WHEN 'dispatching' THEN NEW.status IN ('sent', 'failed')
                WHEN 'sent' THEN NEW.status IN ('acknowledged', 'rejected')
                WHEN 'failed' THEN NEW.status IN ('dispatching', 'cancelled')
                ELSE false
            END;
            IF NOT allowed THEN
                RAISE EXCEPTION 'transmission %% cannot move from %% to %%', OLD.id, OLD.status, NEW.status
                    USING ERRCODE = 'check_violation';
            END IF;
            RETURN NEW;
        END;
        $$
        """
    )
    migrator.sql(
        """
        CREATE TRIGGER einvoice_transmission_guard
            BEFORE INSERT OR UPDATE ON einvoice_transmission
            FOR EACH ROW EXECUTE FUNCTION einvoice_transmission_guard()
        """
    )
    migrator.sql(
        """
        CREATE FUNCTION einvoice_transmission_history() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            answer text := CASE WHEN TG_OP = 'UPDATE'
                THEN nullif(current_setting('vitrine.einvoice_operator_answer', true), '') END;
        BEGIN
            IF TG_OP = 'UPDATE' AND NEW.status = OLD.status THEN
                RETURN NULL;
            END IF;
            INSERT INTO einvoice_transmission_event (
                transmission_id, from_status, to_status, provider_status, operator_status, operator_answer,
                error_code, error_message, trigger, actor_user_id, occurred_at)
            VALUES (
                NEW.id,
                CASE WHEN TG_OP = 'UPDATE' THEN OLD.status END,
                NEW.status, NEW.provider_status, NEW.operator_status, answer::jsonb,
                CASE WHEN NEW.status = 'failed' THEN NEW.last_error_code END,
                CASE WHEN NEW.status IN ('failed', 'rejected') THEN NEW.last_error_message END,
                CASE WHEN TG_OP = 'INSERT' THEN 'draft_created'
                     ELSE coalesce(nullif(current_setting('vitrine.einvoice_trigger', true), ''), 'unspecified') END,
                CASE WHEN TG_OP = 'UPDATE' THEN nullif(current_setting('vitrine.einvoice_actor', true), '') END,
                NEW.status_changed_at);
            RETURN NULL;
        END;
        $$
        """
    )
    migrator.sql(
        """
        CREATE TRIGGER einvoice_transmission_history
            AFTER INSERT OR UPDATE OF status ON einvoice_transmission
            FOR EACH ROW EXECUTE FUNCTION einvoice_transmission_history()
        """
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP TABLE einvoice_transmission_event, einvoice_transmission")
    migrator.sql("DROP FUNCTION einvoice_transmission_history(), einvoice_transmission_guard()")
