"""The books (API.md "The books"): entries of the journals VE, AC, BQ, OD and their lines, the
journals' counters, lettering, closed periods (the journals' and accounts' labels are in
`backend/billing/accounting/chart.py`).

What the database itself guarantees, whatever the code above it does (docs/accounting.md):
- an entry, its lines, its lettering and the closings are append-only (no UPDATE, no DELETE),
  except the one step that validates an entry, below;
- an entry is validated when its transaction commits (a deferred constraint trigger): it must
  then balance (sum of debits = sum of credits, at least two lines), and it receives its number,
  the next of its journal in its fiscal year, from the journal's counter row, locked until the
  commit ends (gapless, in validation order), its validation time, and its piece reference and
  date from its invoice when the posting did not know them yet (the collection issues its
  invoice after posting); `SET CONSTRAINTS accounting_entry_validate IMMEDIATE` validates at the
  end of each statement instead;
- a line is only ever added to an entry not yet validated (in the entry's own statement);
- no entry is dated on or before the last closed day (`accounting_period_close`), and a closing
  never goes back;
- on validation, the third-party lines of a piece (one account, auxiliary account and
  `letter_group`: the invoice they belong to) of the validated entries that are not lettered yet
  are lettered together when they sum to zero (`EcritureLet`, `DateLet`: the latest entry date).

The old `billing_ledger_entry` table stays, readable, and receives nothing any more: its
three-line journals without VAT and with internal account names are the history the carry-over
migration reposted in these tables (docs/accounting.md, "Carried over").
"""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        CREATE TABLE accounting_entry_counter (
            journal_code  varchar(2) NOT NULL CHECK (journal_code IN ('VE', 'AC', 'BQ', 'OD')),
            fiscal_year   integer NOT NULL,
            last_number   integer NOT NULL CHECK (last_number > 0),
            PRIMARY KEY (journal_code, fiscal_year)
        )
        """
    )
    migrator.sql(
        """
        CREATE TABLE accounting_entry (
            id               varchar(36) PRIMARY KEY,
            journal_code     varchar(2) NOT NULL CHECK (journal_code IN ('VE', 'AC', 'BQ', 'OD')),
            fiscal_year      integer NOT NULL,
            number           integer,
            entry_date       date NOT NULL,
            piece_ref        varchar(80),
            piece_date       date,
            label            text NOT NULL CHECK (btrim(label) <> ''),
            event            varchar(40) NOT NULL,
            reservation_id   varchar(36),
            invoice_id       varchar(36) REFERENCES billing_invoice (id) DEFERRABLE INITIALLY DEFERRED,
            payment_order_id varchar(36) REFERENCES billing_payment_order (id) DEFERRABLE INITIALLY DEFERRED,
            created_at       timestamptz NOT NULL DEFAULT now(),
            validated_at     timestamptz,
            validation_seq   bigint UNIQUE,
            CONSTRAINT accounting_entry_number UNIQUE (journal_code, fiscal_year, number),
            CONSTRAINT accounting_entry_validated CHECK (
                (number IS NULL) = (validated_at IS NULL) AND (number IS NULL) = (validation_seq IS NULL))
        )
        """
    )
    # Each event posts once per piece: the pair names the invoice or payment order it books.
    migrator.sql(
        "CREATE UNIQUE INDEX accounting_entry_once ON accounting_entry"
        " (event, coalesce(invoice_id, ''), coalesce(payment_order_id, ''))"
        " WHERE invoice_id IS NOT NULL OR payment_order_id IS NOT NULL"
    )
    migrator.sql("CREATE SEQUENCE accounting_entry_validation_seq")
    migrator.sql("CREATE INDEX accounting_entry_invoice ON accounting_entry (invoice_id)")
    migrator.sql(
        """
        CREATE TABLE accounting_line (
            id            bigserial PRIMARY KEY,
            entry_id      varchar(36) NOT NULL REFERENCES accounting_entry (id),
            line_no       smallint NOT NULL CHECK (line_no > 0),
            account       varchar(20) NOT NULL CHECK (account ~ '^[1-8][0-9]{2}[0-9A-Z]*$'),
            aux_account   varchar(20),
            aux_label     text,
            label         text NOT NULL CHECK (btrim(label) <> ''),
            debit_cents   bigint NOT NULL CHECK (debit_cents >= 0),
            credit_cents  bigint NOT NULL CHECK (credit_cents >= 0),
            letter_group  varchar(36),
            CONSTRAINT accounting_line_one_side CHECK ((debit_cents = 0) <> (credit_cents = 0)),
            CONSTRAINT accounting_line_aux CHECK ((aux_account IS NULL) = (aux_label IS NULL)),
            CONSTRAINT accounting_line_number UNIQUE (entry_id, line_no)
        )
        """
    )
    migrator.sql("CREATE INDEX accounting_line_account ON accounting_line (account, aux_account)")
    migrator.sql(
        "CREATE INDEX accounting_line_letter_group ON accounting_line (letter_group, account, aux_account)"
        " WHERE letter_group IS NOT NULL"
    )
    migrator.sql(
        """
        CREATE TABLE accounting_lettering (
            id            bigserial PRIMARY KEY,
            code          varchar(12) NOT NULL UNIQUE,
            lettered_on   date NOT NULL,
            created_at    timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    migrator.sql(
        """
        CREATE TABLE accounting_lettered_line (
            line_id       bigint PRIMARY KEY REFERENCES accounting_line (id),
            lettering_id  bigint NOT NULL REFERENCES accounting_lettering (id)
        )
        """
    )
    migrator.sql("CREATE INDEX accounting_lettered_line_lettering ON accounting_lettered_line (lettering_id)")
    migrator.sql(
        """
        CREATE TABLE accounting_period_close (
            id            bigserial PRIMARY KEY,
            closed_until  date NOT NULL,
            closed_by     text NOT NULL,
            created_at    timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    migrator.sql(
        """
        CREATE FUNCTION accounting_closed_until() RETURNS date LANGUAGE sql STABLE AS $$
            SELECT max(closed_until) FROM accounting_period_close
        $$
        """
    )
    migrator.sql(
        """
        CREATE FUNCTION accounting_first_open_day() RETURNS date LANGUAGE sql STABLE AS $$
            SELECT coalesce(max(closed_until) + 1, DATE '-infinity') FROM accounting_period_close
        $$
        """
    )
    # The fiscal year of a day: the year of the closing date of the fiscal year holding it.
    migrator.sql(
        """
        CREATE FUNCTION accounting_fiscal_year(day date, end_month integer, end_day integer)
        RETURNS integer LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE WHEN (extract(month FROM day)::integer, extract(day FROM day)::integer)
                             <= (end_month, end_day)
                        THEN extract(year FROM day)::integer ELSE extract(year FROM day)::integer + 1 END
        $$
        """
    )
    migrator.sql(
        """
        CREATE FUNCTION accounting_letter_code(n bigint) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
        DECLARE
            code text := '';
        BEGIN
            LOOP
                n := n - 1;
                code := chr(65 + (n %% 26)::integer) || code;
                n := n / 26;
                EXIT WHEN n = 0;
            END LOOP;
            RETURN code;
        END
        $$
        """
    )
    migrator.sql(
        """
        CREATE FUNCTION accounting_entry_guard() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            closed date := accounting_closed_until();
        BEGIN
            IF TG_OP = 'INSERT' THEN
                IF NEW.number IS NOT NULL OR NEW.validated_at IS NOT NULL THEN
                    RAISE EXCEPTION 'accounting entry %%: numbered only by its validation', NEW.id
                        USING ERRCODE = 'integrity_constraint_violation';
                END IF;
                IF closed IS NOT NULL AND NEW.entry_date <= closed THEN
                    RAISE EXCEPTION 'accounting entry %% dated %% lies in a closed period (closed until %%)',
                        NEW.id, NEW.entry_date, closed USING ERRCODE = 'check_violation';
                END IF;
                RETURN NEW;
            END IF;
            -- UPDATE: only the validation step (from the validation trigger) may number an entry
            IF TG_OP = 'UPDATE' AND pg_trigger_depth() > 1 AND OLD.number IS NULL
               AND (NEW.id, NEW.journal_code, NEW.fiscal_year, NEW.entry_date, NEW.label, NEW.event,
                    NEW.reservation_id, NEW.invoice_id, NEW.payment_order_id, NEW.created_at)
                   IS NOT DISTINCT FROM
                   (OLD.id, OLD.journal_code, OLD.fiscal_year, OLD.entry_date, OLD.label, OLD.event,
                    OLD.reservation_id, OLD.invoice_id, OLD.payment_order_id, OLD.created_at)
               AND (OLD.piece_ref IS NULL OR NEW.piece_ref = OLD.piece_ref)
               AND (OLD.piece_date IS NULL OR NEW.piece_date = OLD.piece_date) THEN
                RETURN NEW;
            END IF;
            RAISE EXCEPTION '%% is append-only (no UPDATE, no DELETE): a correction is a new entry', TG_TABLE_NAME
                USING ERRCODE = 'integrity_constraint_violation';
        END
        $$
        """
    )
    migrator.sql(
        """
        CREATE TRIGGER accounting_entry_guard BEFORE INSERT OR UPDATE OR DELETE ON accounting_entry
        FOR EACH ROW EXECUTE FUNCTION accounting_entry_guard()
        """
    )
    migrator.sql(
        """
        CREATE FUNCTION accounting_line_guard() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF EXISTS (SELECT FROM accounting_entry WHERE id = NEW.entry_id AND number IS NOT NULL) THEN
                RAISE EXCEPTION 'accounting entry %% is validated: a line is never added to it', NEW.entry_id
                    USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            RETURN NEW;
        END
        $$
        """
    )
    migrator.sql(
        """
        CREATE TRIGGER accounting_line_guard BEFORE INSERT ON accounting_line
        FOR EACH ROW EXECUTE FUNCTION accounting_line_guard()
        """
    )
    for table in ("accounting_line", "accounting_lettering", "accounting_lettered_line", "accounting_period_close"):
        migrator.sql(
            f"""
            CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table}
            FOR EACH ROW EXECUTE FUNCTION billing_append_only()
            """
        )
    migrator.sql(
        """
        CREATE FUNCTION accounting_close_forward() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            closed date := accounting_closed_until();
        BEGIN
            IF closed IS NOT NULL AND NEW.closed_until <= closed THEN
                RAISE EXCEPTION 'the books are closed until %%: a closing never goes back', closed
                    USING ERRCODE = 'check_violation';
            END IF;
            RETURN NEW;
        END
        $$
        """
    )
    migrator.sql(
        """
        CREATE TRIGGER accounting_period_close_forward BEFORE INSERT ON accounting_period_close
        FOR EACH ROW EXECUTE FUNCTION accounting_close_forward()
        """
    )
    # Validation: balance, number, piece, then lettering. SECURITY DEFINER: the runtime role may
    # have no UPDATE on the entries; this function is the only writer of the validation columns.
    migrator.sql(
        """
        CREATE FUNCTION accounting_entry_validate() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
        SET search_path = public, pg_temp AS $$
        DECLARE
            imbalance bigint;
            lines integer;
            next_number integer;
            invoice_number text;
            invoice_day date;
            grp record;
            letter_id bigint;
        BEGIN
            SELECT coalesce(sum(debit_cents - credit_cents), 0), count(*) INTO imbalance, lines
              FROM accounting_line WHERE entry_id = NEW.id;
            IF imbalance <> 0 OR lines < 2 THEN
                RAISE EXCEPTION 'accounting entry %% does not balance (debits - credits = %%, %% lines)',
                    NEW.id, imbalance, lines USING ERRCODE = 'check_violation';
            END IF;
            INSERT INTO accounting_entry_counter AS c (journal_code, fiscal_year, last_number)
                 VALUES (NEW.journal_code, NEW.fiscal_year, 1)
                 ON CONFLICT (journal_code, fiscal_year) DO UPDATE SET last_number = c.last_number + 1
                 RETURNING last_number INTO next_number;
            IF NEW.invoice_id IS NOT NULL THEN
                SELECT number, (issued_at AT TIME ZONE 'Europe/Paris')::date INTO invoice_number, invoice_day
                  FROM billing_invoice WHERE id = NEW.invoice_id;
            END IF;
            UPDATE accounting_entry
               SET number = next_number, validated_at = now(),
                   validation_seq = nextval('accounting_entry_validation_seq'),
                   piece_ref = coalesce(piece_ref, invoice_number, payment_order_id, id),
                   piece_date = coalesce(piece_date, invoice_day, entry_date)
             WHERE id = NEW.id;
            FOR grp IN
                SELECT DISTINCT l.letter_group, l.account, l.aux_account FROM accounting_line l
                 WHERE l.entry_id = NEW.id AND l.letter_group IS NOT NULL
            LOOP
                IF (SELECT count(*) > 0 AND sum(l.debit_cents - l.credit_cents) = 0
                      FROM accounting_line l JOIN accounting_entry e ON e.id = l.entry_id AND e.number IS NOT NULL
                     WHERE l.letter_group = grp.letter_group AND l.account = grp.account
                       AND l.aux_account IS NOT DISTINCT FROM grp.aux_account
                       AND NOT EXISTS (SELECT FROM accounting_lettered_line x WHERE x.line_id = l.id)) THEN
                    INSERT INTO accounting_lettering (code, lettered_on)
                         SELECT accounting_letter_code(nextval('accounting_lettering_id_seq')),
                                max(e.entry_date)
                           FROM accounting_line l JOIN accounting_entry e ON e.id = l.entry_id AND e.number IS NOT NULL
                          WHERE l.letter_group = grp.letter_group AND l.account = grp.account
                            AND l.aux_account IS NOT DISTINCT FROM grp.aux_account
                            AND NOT EXISTS (SELECT FROM accounting_lettered_line x WHERE x.line_id = l.id)
                     RETURNING id INTO letter_id;
                    INSERT INTO accounting_lettered_line (line_id, lettering_id)
                         SELECT l.id, letter_id
                           FROM accounting_line l JOIN accounting_entry e ON e.id = l.entry_id AND e.number IS NOT NULL
                          WHERE l.letter_group = grp.letter_group AND l.account = grp.account
                            AND l.aux_account IS NOT DISTINCT FROM grp.aux_account
                            AND NOT EXISTS (SELECT FROM accounting_lettered_line x WHERE x.line_id = l.id);
                END IF;
            END LOOP;
            RETURN NULL;
        END
        $$
        """
    )
    migrator.sql(
        """
        CREATE CONSTRAINT TRIGGER accounting_entry_validate AFTER INSERT ON accounting_entry
        DEFERRABLE INITIALLY DEFERRED
        FOR EACH ROW EXECUTE FUNCTION accounting_entry_validate()
        """
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql(
        "DROP TABLE accounting_lettered_line, accounting_lettering, accounting_line, accounting_entry,"
        " accounting_entry_counter, accounting_period_close"
    )
    migrator.sql("DROP SEQUENCE accounting_entry_validation_seq")
    migrator.sql(
        "DROP FUNCTION accounting_entry_validate(), accounting_close_forward(), accounting_line_guard(),"
        " accounting_entry_guard(), accounting_letter_code(bigint), accounting_fiscal_year(date, integer, integer),"
        " accounting_first_open_day(), accounting_closed_until()"
    )
