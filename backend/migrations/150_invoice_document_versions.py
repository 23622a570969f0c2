"""An issued invoice's document is rendered with the template and PDF style versions in force when
it was issued, frozen on the invoice, so that regenerating its PDF after a template or style change
gives the same bytes (`backend/billing/documents/stored_pdf.py`).

- `pdf_template_version`: the published version of the `invoice` template; `pdf_style_version`:
  the published version of the PDF style, `0` for the built-in default style (none published).
- Set by the database when the invoice is inserted (`billing_invoice_freeze_document_versions`,
  whatever the insert says), never changed afterwards (`billing_invoice_document_versions_frozen`;
  the runtime role holds no UPDATE on them either: `backend/database_roles.py`).
- Both NULL when no `invoice` template was published at issue, and for the invoices of earlier
  releases whose issue preceded every published version: those render with the current versions,
  their recorded sha256 still refusing other bytes. The earlier invoices get the versions that
  were current at their issue time.
"""

_CURRENT = """(SELECT max(v.version) FROM document_template_version v
                WHERE v.template_key = '{key}' AND v.kind = '{kind}' AND v.status = 'published'{before})"""
_TEMPLATE = _CURRENT.format(key="invoice", kind="markdown", before="{before}")
_STYLE = _CURRENT.format(key="pdf_style", kind="pdf_css", before="{before}")


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql("ALTER TABLE billing_invoice ADD COLUMN pdf_template_version integer"
                 " CHECK (pdf_template_version > 0),"
                 " ADD COLUMN pdf_style_version integer CHECK (pdf_style_version >= 0),"
                 " ADD CONSTRAINT billing_invoice_document_versions_together"
                 " CHECK ((pdf_template_version IS NULL) = (pdf_style_version IS NULL))")
    before = " AND v.published_at <= i.issued_at"
    migrator.sql(f"""
        UPDATE billing_invoice i
           SET pdf_template_version = {_TEMPLATE.format(before=before)},
               pdf_style_version = coalesce({_STYLE.format(before=before)}, 0)
         WHERE {_TEMPLATE.format(before=before)} IS NOT NULL
        """)  # noqa: S608 (constants only)
    migrator.sql(f"""
        CREATE FUNCTION billing_invoice_freeze_document_versions() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            NEW.pdf_template_version := {_TEMPLATE.format(before="")};
            NEW.pdf_style_version := CASE WHEN NEW.pdf_template_version IS NOT NULL
                                          THEN coalesce({_STYLE.format(before="")}, 0) END;
            RETURN NEW;
        END
        $$
        """)
    migrator.sql("""
        CREATE TRIGGER billing_invoice_freeze_document_versions BEFORE INSERT ON billing_invoice
        FOR EACH ROW EXECUTE FUNCTION billing_invoice_freeze_document_versions()
        """)
    migrator.sql("""
        CREATE FUNCTION billing_invoice_document_versions_frozen() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION 'billing_invoice %%: the template and style versions of an issued invoice never change',
                OLD.number USING ERRCODE = 'integrity_constraint_violation';
        END
        $$
        """)
    migrator.sql("""
        CREATE TRIGGER billing_invoice_document_versions_frozen
        BEFORE UPDATE OF pdf_template_version, pdf_style_version ON billing_invoice
        FOR EACH ROW WHEN ((NEW.pdf_template_version, NEW.pdf_style_version)
                           IS DISTINCT FROM (OLD.pdf_template_version, OLD.pdf_style_version))
        EXECUTE FUNCTION billing_invoice_document_versions_frozen()
        """)


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP TRIGGER billing_invoice_document_versions_frozen ON billing_invoice")
    migrator.sql("DROP TRIGGER billing_invoice_freeze_document_versions ON billing_invoice")
    migrator.sql("DROP FUNCTION billing_invoice_document_versions_frozen(), billing_invoice_freeze_document_versions()")
    migrator.sql("ALTER TABLE billing_invoice DROP CONSTRAINT billing_invoice_document_versions_together,"
                 " DROP COLUMN pdf_style_version, DROP COLUMN pdf_template_version")
