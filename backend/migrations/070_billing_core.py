"""Billing core (Specification C): financial records, payment orders, invoices and their per-series
counters, the ledger, SEPA mandates, idempotency records and the billing audit trail.

What the database itself guarantees, whatever the code above it does:
- an issued invoice's number, kind, dates, parties, amounts, VAT rate and credited invoice never
  change (trigger `billing_invoice_immutable`), and no invoice is ever deleted;
- ledger entries and audit entries are append-only (no UPDATE, no DELETE);
- every journal transaction of the ledger balances (sum of debits = sum of credits), checked by a
  deferred constraint trigger at commit (`SET CONSTRAINTS billing_ledger_balanced IMMEDIATE`
  checks earlier);
- one live `reservation_total` payment order per reservation, one active SEPA mandate per
  organization, one number per (series, sequence).
"""

STATUS_CHECKS = {
    "financial": (
        "draft", "deposit_due", "deposit_paid", "balance_due", "balance_paid", "reservation_total_due",
        "reservation_total_paid", "partially_refunded", "fully_refunded", "supplier_settlement_pending",
        "supplier_settlement_paid", "cancelled", "written_off",
    ),
    "invoice_kind": (
        "store_deposit", "store_balance", "platform_commission", "platform_sale", "platform_credit_note",
        "supplier_self_billed", "supplier_credit_note",
    ),
    "invoice_status": ("issued", "partially_paid", "paid", "cancelled", "credited"),
    "payment_kind": ("deposit", "balance", "reservation_total", "refund", "supplier_payout"),
    "payment_method": ("sepa_dd", "bank_transfer"),
    "payment_status": ("pending", "submitted", "processing", "paid", "failed", "cancelled"),
}


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN (" + ", ".join(f"'{v}'" for v in values) + ")"


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        f"""
        CREATE TABLE billing_financial_record (
            reservation_id          varchar(36) PRIMARY KEY REFERENCES reservation (id) ON DELETE RESTRICT,
            billing_model           varchar(40) NOT NULL
                                    CHECK (billing_model IN ('legacy_mandate', 'principal_seller')),
            financial_status        varchar(40) NOT NULL DEFAULT 'draft'
                                    CHECK ({_in("financial_status", STATUS_CHECKS["financial"])}),
            store_base_cents        integer NOT NULL CHECK (store_base_cents >= 0),
            commission_cents        integer NOT NULL CHECK (commission_cents >= 0),
            total_cents             integer NOT NULL,
            commission_rate_bps     integer NOT NULL CHECK (commission_rate_bps BETWEEN 0 AND 10000),
            refunded_excl_tax_cents integer NOT NULL DEFAULT 0 CHECK (refunded_excl_tax_cents >= 0),
            created_at              timestamptz NOT NULL DEFAULT now(),
            updated_at              timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT billing_financial_record_formula CHECK (total_cents = store_base_cents + commission_cents),
            CONSTRAINT billing_financial_record_refund CHECK (refunded_excl_tax_cents <= total_cents)
        )
        """
    )
    migrator.sql(
        """
        CREATE TABLE billing_number_counter (
            series      varchar(80) PRIMARY KEY,
            last_value  integer NOT NULL DEFAULT 0 CHECK (last_value >= 0),
            updated_at  timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    migrator.sql(
        f"""
        CREATE TABLE billing_invoice (
            id                       varchar(36) PRIMARY KEY,
            number                   varchar(80) NOT NULL UNIQUE,
            series                   varchar(80) NOT NULL REFERENCES billing_number_counter (series),
            sequence                 integer NOT NULL CHECK (sequence > 0),
            kind                     varchar(40) NOT NULL CHECK ({_in("kind", STATUS_CHECKS["invoice_kind"])}),
            status                   varchar(40) NOT NULL DEFAULT 'issued'
                                     CHECK ({_in("status", STATUS_CHECKS["invoice_status"])}),
            reservation_id           varchar(36) REFERENCES reservation (id) ON DELETE RESTRICT,
            issuer_organization_id   varchar(64) REFERENCES organization (id) ON DELETE RESTRICT,
            customer_organization_id varchar(64) REFERENCES organization (id) ON DELETE RESTRICT,
            issuer                   jsonb NOT NULL,
            customer                 jsonb NOT NULL,
            lines                    jsonb NOT NULL DEFAULT '[]',
            amount_excl_tax_cents    integer NOT NULL CHECK (amount_excl_tax_cents >= 0),
            tax_amount_cents         integer NOT NULL DEFAULT 0 CHECK (tax_amount_cents = 0),
            vat_rate_bps             integer NOT NULL CHECK (vat_rate_bps BETWEEN 0 AND 10000),
            currency                 varchar(3) NOT NULL DEFAULT 'EUR',
            issued_at                timestamptz NOT NULL,
            due_at                   timestamptz NOT NULL,
            service_starts_at        timestamptz,
            service_ends_at          timestamptz,
            credited_invoice_id      varchar(36) REFERENCES billing_invoice (id) ON DELETE RESTRICT,
            reason                   text,
            created_by_user_id       varchar(36),
            pdf_storage_key          text,
            paid_at                  timestamptz,
            created_at               timestamptz NOT NULL DEFAULT now(),
            updated_at               timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT billing_invoice_series_sequence UNIQUE (series, sequence),
            CONSTRAINT billing_invoice_credit_note_link CHECK (
                (kind IN ('platform_credit_note', 'supplier_credit_note')) = (credited_invoice_id IS NOT NULL)),
            CONSTRAINT billing_invoice_due CHECK (due_at >= issued_at),
            -- one party is the platform (no organization) for every target kind
            CONSTRAINT billing_invoice_parties CHECK (
                issuer_organization_id IS NOT NULL OR customer_organization_id IS NOT NULL)
        )
        """
    )
    migrator.sql("CREATE INDEX billing_invoice_reservation ON billing_invoice (reservation_id, kind)")
    migrator.sql("CREATE INDEX billing_invoice_issuer ON billing_invoice (issuer_organization_id, issued_at DESC)")
    migrator.sql(
        "CREATE INDEX billing_invoice_customer ON billing_invoice (customer_organization_id, issued_at DESC)"
    )
    migrator.sql("CREATE INDEX billing_invoice_issued ON billing_invoice (issued_at DESC, number DESC)")
    migrator.sql("CREATE INDEX billing_invoice_credited ON billing_invoice (credited_invoice_id)")
    migrator.sql(
        """
        CREATE FUNCTION billing_invoice_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'DELETE' THEN
                RAISE EXCEPTION 'billing_invoice %%: an issued invoice is never deleted (issue a credit note)',
                    OLD.number USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            IF (NEW.id, NEW.number, NEW.series, NEW.sequence, NEW.kind, NEW.reservation_id,
                NEW.issuer_organization_id, NEW.customer_organization_id, NEW.issuer, NEW.customer, NEW.lines,
                NEW.amount_excl_tax_cents, NEW.tax_amount_cents, NEW.vat_rate_bps, NEW.currency, NEW.issued_at,
                NEW.due_at, NEW.service_starts_at, NEW.service_ends_at, NEW.credited_invoice_id, NEW.reason,
                NEW.created_by_user_id, NEW.created_at)
               IS DISTINCT FROM
               (OLD.id, OLD.number, OLD.series, OLD.sequence, OLD.kind, OLD.reservation_id,
                OLD.issuer_organization_id, OLD.customer_organization_id, OLD.issuer, OLD.customer, OLD.lines,
                OLD.amount_excl_tax_cents, OLD.tax_amount_cents, OLD.vat_rate_bps, OLD.currency, OLD.issued_at,
                OLD.due_at, OLD.service_starts_at, OLD.service_ends_at, OLD.credited_invoice_id, OLD.reason,
                OLD.created_by_user_id, OLD.created_at) THEN
                RAISE EXCEPTION 'billing_invoice %%: an issued invoice never changes (only status, pdf and payment)',
                    OLD.number USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            RETURN NEW;
        END
        $$
        """
    )
    migrator.sql(
        """
        CREATE TRIGGER billing_invoice_immutable BEFORE UPDATE OR DELETE ON billing_invoice
        FOR EACH ROW EXECUTE FUNCTION billing_invoice_immutable()
        """
    )
    migrator.sql(
        """
        CREATE TABLE billing_sepa_mandate (
            id                   varchar(36) PRIMARY KEY,
            organization_id      varchar(64) NOT NULL REFERENCES organization (id) ON DELETE RESTRICT,
            mandate_ref          varchar(35) NOT NULL UNIQUE,
            iban                 varchar(34) NOT NULL,
            status               varchar(20) NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'ended')),
            signature_request_id varchar(36),
            document_storage_key text,
            signed_at            timestamptz NOT NULL,
            ended_at             timestamptz,
            end_reason           text,
            created_at           timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT billing_sepa_mandate_ended CHECK ((status = 'ended') = (ended_at IS NOT NULL))
        )
        """
    )
    migrator.sql(
        "CREATE UNIQUE INDEX billing_sepa_mandate_one_active ON billing_sepa_mandate (organization_id)"
        " WHERE status = 'active'"
    )
    migrator.sql(
        "CREATE UNIQUE INDEX billing_sepa_mandate_envelope ON billing_sepa_mandate (signature_request_id)"
        " WHERE signature_request_id IS NOT NULL"
    )
    migrator.sql(
        f"""
        CREATE TABLE billing_payment_order (
            id               varchar(36) PRIMARY KEY,
            reservation_id   varchar(36) REFERENCES reservation (id) ON DELETE RESTRICT,
            invoice_id       varchar(36) REFERENCES billing_invoice (id) ON DELETE RESTRICT,
            organization_id  varchar(64) NOT NULL REFERENCES organization (id) ON DELETE RESTRICT,
            kind             varchar(40) NOT NULL CHECK ({_in("kind", STATUS_CHECKS["payment_kind"])}),
            method           varchar(40) NOT NULL CHECK ({_in("method", STATUS_CHECKS["payment_method"])}),
            status           varchar(40) NOT NULL DEFAULT 'pending'
                             CHECK ({_in("status", STATUS_CHECKS["payment_status"])}),
            amount_cents     integer NOT NULL CHECK (amount_cents >= 0),
            currency         varchar(3) NOT NULL DEFAULT 'EUR',
            mandate_ref      varchar(35) REFERENCES billing_sepa_mandate (mandate_ref) ON DELETE RESTRICT,
            failure_code     varchar(80),
            failure_message  text,
            created_by_user_id varchar(36),
            created_at       timestamptz NOT NULL DEFAULT now(),
            updated_at       timestamptz NOT NULL DEFAULT now(),
            paid_at          timestamptz,
            CONSTRAINT billing_payment_order_mandate CHECK (method <> 'sepa_dd' OR mandate_ref IS NOT NULL),
            CONSTRAINT billing_payment_order_paid CHECK ((status = 'paid') = (paid_at IS NOT NULL))
        )
        """
    )
    migrator.sql(
        "CREATE UNIQUE INDEX billing_payment_order_one_collection ON billing_payment_order (reservation_id, kind)"
        " WHERE kind IN ('reservation_total', 'deposit', 'balance') AND status NOT IN ('failed', 'cancelled')"
    )
    migrator.sql("CREATE INDEX billing_payment_order_reservation ON billing_payment_order (reservation_id, created_at)")
    migrator.sql("CREATE INDEX billing_payment_order_invoice ON billing_payment_order (invoice_id)")
    migrator.sql(
        """
        CREATE TABLE billing_ledger_entry (
            id               bigserial PRIMARY KEY,
            journal_id       varchar(36) NOT NULL,
            account          varchar(120) NOT NULL CHECK (btrim(account) <> ''),
            direction        varchar(6) NOT NULL CHECK (direction IN ('debit', 'credit')),
            amount_cents     bigint NOT NULL CHECK (amount_cents >= 0),
            currency         varchar(3) NOT NULL DEFAULT 'EUR',
            reservation_id   varchar(36) REFERENCES reservation (id) ON DELETE RESTRICT,
            invoice_id       varchar(36) REFERENCES billing_invoice (id) ON DELETE RESTRICT,
            payment_order_id varchar(36) REFERENCES billing_payment_order (id) ON DELETE RESTRICT,
            description      text NOT NULL,
            created_at       timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    migrator.sql("CREATE INDEX billing_ledger_entry_journal ON billing_ledger_entry (journal_id)")
    migrator.sql("CREATE INDEX billing_ledger_entry_reservation ON billing_ledger_entry (reservation_id)")
    migrator.sql("CREATE INDEX billing_ledger_entry_account ON billing_ledger_entry (account, created_at)")
    migrator.sql(
        """
        CREATE FUNCTION billing_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION '%% is append-only (no UPDATE, no DELETE)', TG_TABLE_NAME
                USING ERRCODE = 'integrity_constraint_violation';
        END
        $$
        """
    )
    migrator.sql(
        """
        CREATE TRIGGER billing_ledger_entry_append_only BEFORE UPDATE OR DELETE ON billing_ledger_entry
        FOR EACH ROW EXECUTE FUNCTION billing_append_only()
        """
    )
    migrator.sql(
        """
        CREATE FUNCTION billing_ledger_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            imbalance bigint;
        BEGIN
            SELECT coalesce(sum(CASE direction WHEN 'debit' THEN amount_cents ELSE -amount_cents END), 0)
              INTO imbalance FROM billing_ledger_entry WHERE journal_id = NEW.journal_id;
            IF imbalance <> 0 THEN
                RAISE EXCEPTION 'ledger journal %% does not balance (debits - credits = %%)', NEW.journal_id, imbalance
                    USING ERRCODE = 'check_violation';
            END IF;
            RETURN NULL;
        END
        $$
        """
    )
    migrator.sql(
        """
        CREATE CONSTRAINT TRIGGER billing_ledger_balanced AFTER INSERT ON billing_ledger_entry
        DEFERRABLE INITIALLY DEFERRED
        FOR EACH ROW EXECUTE FUNCTION billing_ledger_balanced()
        """
    )
    migrator.sql(
        """
        CREATE TABLE billing_idempotency_record (
            id              bigserial PRIMARY KEY,
            scope           varchar(80) NOT NULL,
            route           varchar(120) NOT NULL,
            key             varchar(255) NOT NULL,
            request_hash    varchar(64) NOT NULL,
            state           varchar(20) NOT NULL DEFAULT 'in_flight' CHECK (state IN ('in_flight', 'completed')),
            response_status integer,
            response_body   jsonb,
            created_at      timestamptz NOT NULL DEFAULT now(),
            expires_at      timestamptz NOT NULL,
            CONSTRAINT billing_idempotency_key UNIQUE (scope, route, key),
            CONSTRAINT billing_idempotency_completed CHECK (
                (state = 'completed') = (response_status IS NOT NULL AND response_body IS NOT NULL))
        )
        """
    )
    migrator.sql("CREATE INDEX billing_idempotency_expires ON billing_idempotency_record (expires_at)")
    migrator.sql(
        """
        CREATE TABLE billing_audit_entry (
            id              bigserial PRIMARY KEY,
            action          varchar(80) NOT NULL,
            actor_user_id   varchar(36),
            reason          text NOT NULL CHECK (btrim(reason) <> ''),
            reservation_id  varchar(36),
            invoice_id      varchar(36),
            payment_order_id varchar(36),
            details         jsonb NOT NULL DEFAULT '{}',
            request_id      varchar(128),
            created_at      timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    migrator.sql("CREATE INDEX billing_audit_entry_invoice ON billing_audit_entry (invoice_id)")
    migrator.sql("CREATE INDEX billing_audit_entry_reservation ON billing_audit_entry (reservation_id)")
    migrator.sql(
        """
        CREATE TRIGGER billing_audit_entry_append_only BEFORE UPDATE OR DELETE ON billing_audit_entry
        FOR EACH ROW EXECUTE FUNCTION billing_append_only()
        """
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql(
        "DROP TABLE billing_audit_entry, billing_idempotency_record, billing_ledger_entry, billing_payment_order,"
        " billing_sepa_mandate, billing_invoice, billing_number_counter, billing_financial_record"
    )
    migrator.sql("DROP FUNCTION billing_ledger_balanced(), billing_append_only(), billing_invoice_immutable()")
