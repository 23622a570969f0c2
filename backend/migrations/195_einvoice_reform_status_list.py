"""The reform's whole list of lifecycle statuses, and coded reasons on the statuses the platform
sends for a distributor (`backend/einvoicing/reform_statuses.py`, `reason_codes.py`).

- `einvoice_lifecycle_event.code` admits every code of the reform's list, not only twelve: a status
  the operator reports is stored, so a later one clears an earlier one (209 after 208).
- `einvoice_decision_report` admits 207 En litige (a contest) beside 205 and 210, and carries the
  reason's code from the reform's closed list; a 207 or a 210 cannot be recorded without one.
"""

# The reform's list as this migration found it (a later list is a later migration).
CODES = "200, 201, 202, 203, 204, 205, 206, 207, 208, 209, 210, 211, 212, 213, 214, 220, 221, 224, 225, 226, 227, 228"


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        "ALTER TABLE einvoice_lifecycle_event DROP CONSTRAINT einvoice_lifecycle_event_code_check, "
        f"ADD CONSTRAINT einvoice_lifecycle_event_code_check CHECK (code IN ({CODES}))"
    )
    migrator.sql(
        """
        ALTER TABLE einvoice_decision_report
            DROP CONSTRAINT einvoice_decision_report_code_check,
            ADD CONSTRAINT einvoice_decision_report_code_check CHECK (code IN (205, 207, 210)),
            ADD COLUMN reason_code varchar(40),
            ADD CONSTRAINT einvoice_decision_report_coded CHECK (code = 205 OR reason_code IS NOT NULL)
            NOT VALID
        """
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        ALTER TABLE einvoice_decision_report
            DROP CONSTRAINT einvoice_decision_report_coded,
            DROP COLUMN reason_code,
            DROP CONSTRAINT einvoice_decision_report_code_check,
            ADD CONSTRAINT einvoice_decision_report_code_check CHECK (code IN (205, 210)) NOT VALID
        """
    )
    migrator.sql(
        "ALTER TABLE einvoice_lifecycle_event DROP CONSTRAINT einvoice_lifecycle_event_code_check, "
        "ADD CONSTRAINT einvoice_lifecycle_event_code_check CHECK "
        "(code IN (200, 202, 203, 204, 205, 206, 207, 208, 210, 211, 212, 213)) NOT VALID"
    )
