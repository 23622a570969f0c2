"""Billing: money that always balances (API.md "Money, books and banks (wave 3)").

- A credit note freezes what the credited invoice's earlier credit notes credit
  (`credited_before_cents`): its VAT is the cumulative difference (backend/billing/vat.py). Existing
  credit notes get it from their issue order. It never changes (added to the immutability trigger).
- The database refuses a credit note that does not fit its invoice (`billing_credit_note_fits`,
  BEFORE INSERT): `credited_before_cents` must be what the invoice's credit notes already credit,
  the total credited at most the invoice's amount, and the rate the invoice's frozen rate.
- At most one live self-billed invoice per reservation (one credited in full no longer counts, so
  the reservation can be self-billed again), one live payout per self-billed invoice (a
  reservation whose first self-billed invoice was paid out then credited is paid again).
- `billing_supplier_debt`: what a distributor owes back (a supplier credit note after its payout)
  and what later payouts deducted; append-only, and what is outstanding per distributor never
  goes below zero (checked at commit).
"""

# The columns of an issued invoice that never change (migration 070's list, then this one's).
_FROZEN = ("id", "number", "series", "sequence", "kind", "reservation_id", "issuer_organization_id",
           "customer_organization_id", "issuer", "customer", "lines", "amount_excl_tax_cents", "tax_amount_cents",
           "vat_rate_bps", "currency", "issued_at", "due_at", "service_starts_at", "service_ends_at",
           "credited_invoice_id", "reason", "created_by_user_id", "created_at")


def _immutable(columns: tuple[str, ...]) -> str:
    new, old = (", ".join(f"{row}.{c}" for c in columns) for row in ("NEW", "OLD"))
    return f"""
        CREATE OR REPLACE FUNCTION billing_invoice_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'DELETE' THEN
                RAISE EXCEPTION 'billing_invoice %%: an issued invoice is never deleted (issue a credit note)',
                    OLD.number USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            IF ({new}) IS DISTINCT FROM ({old}) THEN
                RAISE EXCEPTION 'billing_invoice %%: an issued invoice never changes (only status, pdf and payment)',
                    OLD.number USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            RETURN NEW;
        END
        $$
        """


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql("ALTER TABLE billing_invoice ADD COLUMN credited_before_cents bigint")
    migrator.sql(
        """
        UPDATE billing_invoice n SET credited_before_cents = c.before FROM (
            SELECT id, coalesce(sum(amount_excl_tax_cents) OVER (PARTITION BY credited_invoice_id
                   ORDER BY issued_at, sequence, id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
              FROM billing_invoice WHERE credited_invoice_id IS NOT NULL) c
         WHERE n.id = c.id
        """
    )
    migrator.sql(
        "ALTER TABLE billing_invoice ADD CONSTRAINT billing_invoice_credited_before CHECK ("
        " (credited_invoice_id IS NULL) = (credited_before_cents IS NULL) AND credited_before_cents >= 0)"
    )
    migrator.sql(_immutable((*_FROZEN, "credited_before_cents")))
    migrator.sql(
        """
        CREATE FUNCTION billing_credit_note_fits() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            credited billing_invoice%%ROWTYPE;
            before bigint;
        BEGIN
            SELECT * INTO credited FROM billing_invoice WHERE id = NEW.credited_invoice_id;
            SELECT coalesce(sum(amount_excl_tax_cents), 0) INTO before FROM billing_invoice
             WHERE credited_invoice_id = NEW.credited_invoice_id;
            IF NEW.credited_before_cents <> before
               OR before + NEW.amount_excl_tax_cents > credited.amount_excl_tax_cents
               OR NEW.vat_rate_bps <> credited.vat_rate_bps THEN
                RAISE EXCEPTION 'credit note %% does not fit invoice %% (credited before %%, not %%; '
                    '%% + %% of %%; rate %% of %%)', NEW.number, credited.number, before, NEW.credited_before_cents,
                    before, NEW.amount_excl_tax_cents, credited.amount_excl_tax_cents, NEW.vat_rate_bps,
                    credited.vat_rate_bps USING ERRCODE = 'check_violation';
            END IF;
            RETURN NEW;
        END
        $$
        """
    )
    migrator.sql(
        """
        CREATE TRIGGER billing_credit_note_fits BEFORE INSERT ON billing_invoice
        FOR EACH ROW WHEN (NEW.credited_invoice_id IS NOT NULL) EXECUTE FUNCTION billing_credit_note_fits()
        """
    )
    migrator.sql("DROP INDEX billing_invoice_one_self_billed")
    migrator.sql(
        "CREATE UNIQUE INDEX billing_invoice_one_self_billed ON billing_invoice (reservation_id)"
        " WHERE kind = 'supplier_self_billed' AND status <> 'credited'"
    )
    migrator.sql("DROP INDEX billing_payment_order_one_payout")
    migrator.sql(
        "CREATE UNIQUE INDEX billing_payment_order_one_payout ON billing_payment_order (invoice_id)"
        " WHERE kind = 'supplier_payout' AND status NOT IN ('failed', 'cancelled')"
    )
    migrator.sql(
        """
        CREATE TABLE billing_supplier_debt (
            id                    bigserial PRIMARY KEY,
            organization_id       varchar(64) NOT NULL REFERENCES organization (id) ON DELETE RESTRICT,
            kind                  varchar(20) NOT NULL CHECK (kind IN ('debt', 'deduction')),
            amount_excl_tax_cents bigint NOT NULL CHECK (amount_excl_tax_cents >= 0),
            amount_cents          bigint NOT NULL CHECK (amount_cents >= 0),
            reservation_id        varchar(36) REFERENCES reservation (id) ON DELETE RESTRICT,
            invoice_id            varchar(36) NOT NULL REFERENCES billing_invoice (id) ON DELETE RESTRICT,
            payment_order_id      varchar(36) REFERENCES billing_payment_order (id) ON DELETE RESTRICT,
            created_at            timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    migrator.sql("CREATE INDEX billing_supplier_debt_organization ON billing_supplier_debt (organization_id)")
    migrator.sql(
        """
        CREATE TRIGGER billing_supplier_debt_append_only BEFORE UPDATE OR DELETE ON billing_supplier_debt
        FOR EACH ROW EXECUTE FUNCTION billing_append_only()
        """
    )
    migrator.sql(
        """
        CREATE FUNCTION billing_supplier_debt_outstanding() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            excl bigint;
            incl bigint;
        BEGIN
            SELECT coalesce(sum(CASE kind WHEN 'debt' THEN amount_excl_tax_cents ELSE -amount_excl_tax_cents END), 0),
                   coalesce(sum(CASE kind WHEN 'debt' THEN amount_cents ELSE -amount_cents END), 0)
              INTO excl, incl FROM billing_supplier_debt WHERE organization_id = NEW.organization_id;
            IF excl < 0 OR incl < 0 THEN
                RAISE EXCEPTION 'supplier debt of %% below zero (%% excluding tax, %% including)',
                    NEW.organization_id, excl, incl USING ERRCODE = 'check_violation';
            END IF;
            RETURN NULL;
        END
        $$
        """
    )
    migrator.sql(
        """
        CREATE CONSTRAINT TRIGGER billing_supplier_debt_outstanding AFTER INSERT ON billing_supplier_debt
        DEFERRABLE INITIALLY DEFERRED
        FOR EACH ROW EXECUTE FUNCTION billing_supplier_debt_outstanding()
        """
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP TABLE billing_supplier_debt")
    migrator.sql("DROP FUNCTION billing_supplier_debt_outstanding()")
    migrator.sql("DROP INDEX billing_payment_order_one_payout")
    migrator.sql(
        "CREATE UNIQUE INDEX billing_payment_order_one_payout ON billing_payment_order (reservation_id)"
        " WHERE kind = 'supplier_payout' AND status NOT IN ('failed', 'cancelled')"
    )
    migrator.sql("DROP INDEX billing_invoice_one_self_billed")
    migrator.sql(
        "CREATE UNIQUE INDEX billing_invoice_one_self_billed ON billing_invoice (reservation_id)"
        " WHERE kind = 'supplier_self_billed'"
    )
    migrator.sql("DROP TRIGGER billing_credit_note_fits ON billing_invoice")
    migrator.sql("DROP FUNCTION billing_credit_note_fits()")
    migrator.sql(_immutable(_FROZEN))
    migrator.sql("ALTER TABLE billing_invoice DROP CONSTRAINT billing_invoice_credited_before")
    migrator.sql("ALTER TABLE billing_invoice DROP COLUMN credited_before_cents")
