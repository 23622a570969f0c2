"""Statuses move only along their transition table; what a row is kept for is set once.

- `billing_status_transition` holds the legal moves of `billing_invoice.status` (spec C: an issued
  invoice is paid, in part then in full, or credited; it never goes back to `issued`, and it is
  never cancelled: a correction is a credit note) and of `billing_self_billing_mandate.status`
  (a draft is sent or abandoned, a sent mandate signed or declined, a signed one revoked). The
  trigger `billing_status_move` refuses any other change.
- A self-billing mandate draft whose request failed is marked `abandoned` (with the time), never
  deleted: the runtime role deletes no row of money or legal records.
- An invoice's `pdf_storage_key` is the invoice's own key (`billing/invoices/<number>.pdf`) and is
  set once, so no row can point the download at another invoice's file.
- A signed mandate records the sha256 of its signed file, set once; the download checks it.
"""

_MOVES = (
    ("billing_invoice", "issued", "partially_paid"),
    ("billing_invoice", "issued", "paid"),
    ("billing_invoice", "partially_paid", "paid"),
    ("billing_invoice", "issued", "credited"),
    ("billing_invoice", "partially_paid", "credited"),
    ("billing_invoice", "paid", "credited"),
    ("billing_self_billing_mandate", "draft", "pending_signature"),
    ("billing_self_billing_mandate", "draft", "abandoned"),
    ("billing_self_billing_mandate", "pending_signature", "signed"),
    ("billing_self_billing_mandate", "pending_signature", "declined"),
    ("billing_self_billing_mandate", "signed", "revoked"),
)


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        CREATE TABLE billing_status_transition (
            relation    varchar(63) NOT NULL,
            from_status varchar(40) NOT NULL,
            to_status   varchar(40) NOT NULL,
            PRIMARY KEY (relation, from_status, to_status),
            CHECK (from_status <> to_status)
        )
        """
    )
    values = ", ".join("(%s, %s, %s)" for _ in _MOVES)
    migrator.sql(f"INSERT INTO billing_status_transition VALUES {values}",  # noqa: S608 (placeholders only)
                 *[value for row in _MOVES for value in row])
    migrator.sql(
        """
        CREATE FUNCTION billing_status_move() RETURNS trigger LANGUAGE plpgsql
        SET search_path = pg_catalog, public, pg_temp AS $$
        BEGIN
            IF NEW.status IS DISTINCT FROM OLD.status AND NOT EXISTS (
                SELECT FROM public.billing_status_transition t
                 WHERE t.relation = TG_TABLE_NAME AND t.from_status = OLD.status AND t.to_status = NEW.status) THEN
                RAISE EXCEPTION '%%: status %% cannot move to %%', TG_TABLE_NAME, OLD.status, NEW.status
                    USING ERRCODE = 'check_violation';
            END IF;
            RETURN NEW;
        END
        $$
        """
    )
    for table in ("billing_invoice", "billing_self_billing_mandate"):
        migrator.sql(f"CREATE TRIGGER {table}_status_move BEFORE UPDATE OF status ON {table}"
                     " FOR EACH ROW EXECUTE FUNCTION billing_status_move()")

    migrator.sql("ALTER TABLE billing_self_billing_mandate ADD COLUMN abandoned_at timestamptz,"
                 " ADD COLUMN document_sha256 varchar(64) CHECK (document_sha256 ~ '^[0-9a-f]{64}$')")
    migrator.sql("ALTER TABLE billing_self_billing_mandate DROP CONSTRAINT billing_self_billing_mandate_status_check,"
                 " ADD CONSTRAINT billing_self_billing_mandate_status_check CHECK (status IN"
                 " ('draft', 'pending_signature', 'signed', 'declined', 'revoked', 'abandoned')),"
                 " DROP CONSTRAINT billing_self_billing_mandate_sent,"
                 " ADD CONSTRAINT billing_self_billing_mandate_sent CHECK (status IN ('draft', 'abandoned')"
                 " OR (esign_request_ref IS NOT NULL AND requested_at IS NOT NULL)),"
                 " ADD CONSTRAINT billing_self_billing_mandate_abandoned CHECK"
                 " ((status = 'abandoned') = (abandoned_at IS NOT NULL))")

    migrator.sql(
        """
        CREATE FUNCTION billing_set_once() RETURNS trigger LANGUAGE plpgsql
        SET search_path = pg_catalog, public, pg_temp AS $$
        BEGIN
            IF TG_TABLE_NAME = 'billing_invoice' THEN
                IF (OLD.pdf_storage_key IS NOT NULL AND NEW.pdf_storage_key IS DISTINCT FROM OLD.pdf_storage_key)
                   OR NEW.pdf_storage_key <> 'billing/invoices/' || NEW.number || '.pdf' THEN
                    RAISE EXCEPTION 'billing_invoice %%: the stored PDF of an invoice is its own, set once', OLD.number
                        USING ERRCODE = 'integrity_constraint_violation';
                END IF;
            ELSIF (OLD.document_storage_key IS NOT NULL
                   AND NEW.document_storage_key IS DISTINCT FROM OLD.document_storage_key)
                  OR (OLD.document_sha256 IS NOT NULL AND NEW.document_sha256 IS DISTINCT FROM OLD.document_sha256) THEN
                RAISE EXCEPTION '%% %%: the signed file is set once', TG_TABLE_NAME, OLD.id
                    USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            RETURN NEW;
        END
        $$
        """
    )
    migrator.sql("CREATE TRIGGER billing_invoice_pdf_key_once BEFORE UPDATE OF pdf_storage_key ON billing_invoice"
                 " FOR EACH ROW EXECUTE FUNCTION billing_set_once()")
    migrator.sql("CREATE TRIGGER billing_self_billing_mandate_file_once"
                 " BEFORE UPDATE OF document_storage_key, document_sha256 ON billing_self_billing_mandate"
                 " FOR EACH ROW EXECUTE FUNCTION billing_set_once()")


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP TRIGGER billing_self_billing_mandate_file_once ON billing_self_billing_mandate")
    migrator.sql("DROP TRIGGER billing_invoice_pdf_key_once ON billing_invoice")
    migrator.sql("DROP FUNCTION billing_set_once()")
    for table in ("billing_invoice", "billing_self_billing_mandate"):
        migrator.sql(f"DROP TRIGGER {table}_status_move ON {table}")
    migrator.sql("DROP FUNCTION billing_status_move()")
    migrator.sql("DROP TABLE billing_status_transition")
    migrator.sql("ALTER TABLE billing_self_billing_mandate DROP CONSTRAINT billing_self_billing_mandate_abandoned,"
                 " DROP COLUMN abandoned_at, DROP COLUMN document_sha256")
