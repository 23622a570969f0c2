"""A SEPA mandate's status moves only along its transition table: an active mandate is ended (a
new signed mandate supersedes it, the organization's IBAN changes), never made active again; a
new signature is a new mandate. The trigger is the invoices' and self-billing mandates'
`billing_status_move`; the runtime role updates only the columns that an end and a stop of the
retries write (backend/database_roles.py)."""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql("INSERT INTO billing_status_transition VALUES ('billing_sepa_mandate', 'active', 'ended')")
    migrator.sql("CREATE TRIGGER billing_sepa_mandate_status_move BEFORE UPDATE OF status ON billing_sepa_mandate"
                 " FOR EACH ROW EXECUTE FUNCTION billing_status_move()")


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP TRIGGER billing_sepa_mandate_status_move ON billing_sepa_mandate")
    migrator.sql("DELETE FROM billing_status_transition WHERE relation = 'billing_sepa_mandate'")
