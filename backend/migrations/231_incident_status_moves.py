"""A reservation incident's status moves only along its transition table: an open incident is
released, never opened again (a new incident is a new row, with its own declaration). The trigger
is `billing_status_move`, the invoices' and mandates'."""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql("INSERT INTO billing_status_transition VALUES ('billing_reservation_incident', 'open', 'released')")
    migrator.sql("CREATE TRIGGER billing_reservation_incident_status_move BEFORE UPDATE OF status"
                 " ON billing_reservation_incident FOR EACH ROW EXECUTE FUNCTION billing_status_move()")


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP TRIGGER billing_reservation_incident_status_move ON billing_reservation_incident")
    migrator.sql("DELETE FROM billing_status_transition WHERE relation = 'billing_reservation_incident'")
