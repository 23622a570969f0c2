"""The books: the same guarantees as migration 140, for less work at the commit.

A collection's two entries are validated at its commit, after its invoice's number is allocated:
what `accounting_entry_validate` does there lengthens the time the invoice series' counter row
stays locked, which every collection of the series queues on. Measured (docs/benchmarks.md,
"The books' validation at the commit": backend CPU of 1,000 transactions each validating a VE
entry of 3 lines and a BQ entry of 2 lines lettering together), the lettering was about 30 % of
such a transaction's PostgreSQL CPU, the UPDATE numbering the entry about 30 %. Now:
- the balance check, reading the entry's lines, also says whether any of them carries a
  `letter_group` and is not lettered yet: an entry without one runs no lettering statement at
  all (before: one); the collection letters its own lines before the commit
  (`backend.billing.accounting.entries.own_lettering_fragment`), so its validations letter nothing;
- the lettering is one statement (before: two per group that cannot balance yet, four per group
  that does): the validated, unlettered lines of the entry's groups are read once, each group
  summing to zero gets its lettering (its code and id drawn from the same sequence, in the same
  order, as before) and its lettered lines;
- the invoice is read only when the entry lacks its piece reference or date;
- `accounting_entry_guard` reads the closed periods on INSERT only (before: on the validation's
  UPDATE too, where it never used them).
Numbering (gapless, per journal and fiscal year, in validation order), the balance check, the
append-only rules and the lettering rule are unchanged.
"""

import importlib

_REPLACED = ("accounting_entry_validate", "accounting_entry_guard")


def migrate(migrator, database, fake=False, **kwargs):
    # The guard as migration 140 wrote it, the closed periods read in its INSERT branch only.
    guard = _of_140("accounting_entry_guard")
    for old, new in (("closed date := accounting_closed_until();", "closed date;"),
                     ("            IF TG_OP = 'INSERT' THEN\n",
                      "            IF TG_OP = 'INSERT' THEN\n                closed := accounting_closed_until();\n")):
        if guard.count(old) != 1:
            raise RuntimeError(f"migration 140's accounting_entry_guard() changed: {old!r}")
        guard = guard.replace(old, new)
    migrator.sql(guard)
    migrator.sql(
        """
        CREATE OR REPLACE FUNCTION accounting_entry_validate() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
        SET search_path = public, pg_temp AS $$
        DECLARE
            imbalance bigint;
            lines integer;
            lettered boolean;
            next_number integer;
            invoice_number text;
            invoice_day date;
        BEGIN
            SELECT coalesce(sum(l.debit_cents - l.credit_cents), 0), count(*),
                   coalesce(bool_or(l.letter_group IS NOT NULL
                                    AND NOT EXISTS (SELECT FROM accounting_lettered_line x WHERE x.line_id = l.id)),
                            false)
              INTO imbalance, lines, lettered
              FROM accounting_line l WHERE l.entry_id = NEW.id;
            IF imbalance <> 0 OR lines < 2 THEN
                RAISE EXCEPTION 'accounting entry %% does not balance (debits - credits = %%, %% lines)',
                    NEW.id, imbalance, lines USING ERRCODE = 'check_violation';
            END IF;
            INSERT INTO accounting_entry_counter AS c (journal_code, fiscal_year, last_number)
                 VALUES (NEW.journal_code, NEW.fiscal_year, 1)
                 ON CONFLICT (journal_code, fiscal_year) DO UPDATE SET last_number = c.last_number + 1
                 RETURNING last_number INTO next_number;
            IF NEW.invoice_id IS NOT NULL AND (NEW.piece_ref IS NULL OR NEW.piece_date IS NULL) THEN
                SELECT number, (issued_at AT TIME ZONE 'Europe/Paris')::date INTO invoice_number, invoice_day
                  FROM billing_invoice WHERE id = NEW.invoice_id;
            END IF;
            UPDATE accounting_entry
               SET number = next_number, validated_at = now(),
                   validation_seq = nextval('accounting_entry_validation_seq'),
                   piece_ref = coalesce(piece_ref, invoice_number, payment_order_id, id),
                   piece_date = coalesce(piece_date, invoice_day, entry_date)
             WHERE id = NEW.id;
            -- Lettering, in one statement, only for an entry with a line still to letter (the
            -- collection letters its own lines before the commit: `entries.own_lettering_fragment`).
            IF lettered THEN
                WITH piece AS (
                    SELECT DISTINCT letter_group, account, aux_account FROM accounting_line
                     WHERE entry_id = NEW.id AND letter_group IS NOT NULL
                ), unlettered AS (
                    SELECT l.id, l.letter_group, l.account, l.aux_account,
                           l.debit_cents - l.credit_cents AS amount, e.entry_date
                      FROM piece p
                      JOIN accounting_line l ON l.letter_group = p.letter_group AND l.account = p.account
                                            AND l.aux_account IS NOT DISTINCT FROM p.aux_account
                      JOIN accounting_entry e ON e.id = l.entry_id AND e.number IS NOT NULL
                     WHERE l.letter_group IS NOT NULL
                       AND NOT EXISTS (SELECT FROM accounting_lettered_line x WHERE x.line_id = l.id)
                ), balanced AS (
                    SELECT letter_group, account, aux_account, max(entry_date) AS lettered_on,
                           accounting_letter_code(nextval('accounting_lettering_id_seq')) AS code,
                           nextval('accounting_lettering_id_seq') AS id
                      FROM unlettered GROUP BY letter_group, account, aux_account HAVING sum(amount) = 0
                ), letterings AS (
                    INSERT INTO accounting_lettering (id, code, lettered_on)
                    SELECT id, code, lettered_on FROM balanced
                )
                INSERT INTO accounting_lettered_line (line_id, lettering_id)
                SELECT o.id, b.id FROM unlettered o
                  JOIN balanced b ON b.letter_group = o.letter_group AND b.account = o.account
                                 AND b.aux_account IS NOT DISTINCT FROM o.aux_account;
            END IF;
            RETURN NULL;
        END
        $$
        """
    )


def _of_140(name: str) -> str:
    """Migration 140's `CREATE FUNCTION name()` statement, as a `CREATE OR REPLACE`."""
    found = []

    class Reading:
        def sql(self, text: str, *args, **kw) -> None:
            if f"CREATE FUNCTION {name}()" in text:
                found.append(text.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1))

    importlib.import_module("backend.migrations.140_accounting_books").migrate(Reading(), None)
    return found[0]


def rollback(migrator, database, fake=False, **kwargs):
    """Migration 140's definitions of the two functions again."""
    for name in _REPLACED:
        migrator.sql(_of_140(name))
