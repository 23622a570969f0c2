"""An issued invoice's stored PDF is recorded by its sha256 when it is first stored, once: the
database refuses to change a recorded sha256 (`billing_invoice_pdf_sha256_once`), and the code
never stores other bytes over that PDF (`backend/billing/documents/stored_pdf.py`)."""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql("ALTER TABLE billing_invoice ADD COLUMN pdf_sha256 varchar(64)"
                 " CHECK (pdf_sha256 ~ '^[0-9a-f]{64}$')")
    migrator.sql(
        """
        CREATE FUNCTION billing_invoice_pdf_sha256_once() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF OLD.pdf_sha256 IS NOT NULL AND NEW.pdf_sha256 IS DISTINCT FROM OLD.pdf_sha256 THEN
                RAISE EXCEPTION 'billing_invoice %%: the PDF of an issued invoice never changes (sha256 recorded)',
                    OLD.number USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            RETURN NEW;
        END
        $$
        """
    )
    migrator.sql(
        """
        CREATE TRIGGER billing_invoice_pdf_sha256_once BEFORE UPDATE OF pdf_sha256 ON billing_invoice
        FOR EACH ROW EXECUTE FUNCTION billing_invoice_pdf_sha256_once()
        """
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP TRIGGER billing_invoice_pdf_sha256_once ON billing_invoice")
    migrator.sql("DROP FUNCTION billing_invoice_pdf_sha256_once()")
    migrator.sql("ALTER TABLE billing_invoice DROP COLUMN pdf_sha256")
