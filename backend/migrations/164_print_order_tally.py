"""Printing: each printer's orders counted per status and scope as they change, so a list's total
and the counters read a handful of rows, not every order (issue 36, "Cost as the data grows").

The printer's order list answers its total (`X-Total-Count`) with every page, and the counters
route counts per status: both counted the printer's whole history (`COUNT(*)` over 100,000 orders
took 11 ms of the page's 18.7: 2.58x the same page over 10,000 orders; docs/benchmarks.md "Cost
as the data grows"). `print_order_tally` holds, per printer, status and scope (in a batch or not),
how many orders there are. Statement-level triggers keep it: each `INSERT`, `UPDATE` or `DELETE` of
`print_order` (a `COPY` too) nets its transition tables per key and applies the differences in the
key's order (so two statements lock the rows they share in the same order), in the statement's
own transaction: a snapshot sees the tally of the orders it sees. A count can never go below zero
(`CHECK`), and a key that would have to is refused loudly, not skipped; a `TRUNCATE` of the orders
empties the tally. The runtime role only reads
the table; the trigger's function writes it (`SECURITY DEFINER`, owned by the owner).
"""

_APPLY = """
CREATE FUNCTION print_order_tally_apply() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = public, pg_temp AS $$
DECLARE
    change record;
BEGIN
    FOR change IN
        SELECT d.printer_organization_id, d.status, d.in_batch, sum(d.orders)::bigint AS orders
          FROM (SELECT n.printer_organization_id, n.status, n.batch_id IS NOT NULL AS in_batch, 1 AS orders
                  FROM print_order_tally_new() n
                UNION ALL
                SELECT o.printer_organization_id, o.status, o.batch_id IS NOT NULL, -1
                  FROM print_order_tally_old() o) d
         GROUP BY 1, 2, 3
        HAVING sum(d.orders) <> 0
         ORDER BY 1, 2, 3
    LOOP
        IF change.orders > 0 THEN
            INSERT INTO print_order_tally AS t (printer_organization_id, status, in_batch, orders)
            VALUES (change.printer_organization_id, change.status, change.in_batch, change.orders)
            ON CONFLICT (printer_organization_id, status, in_batch) DO UPDATE SET orders = t.orders + EXCLUDED.orders;
        ELSE
            UPDATE print_order_tally SET orders = orders + change.orders
             WHERE printer_organization_id = change.printer_organization_id AND status = change.status
               AND in_batch = change.in_batch;
            IF NOT FOUND THEN
                RAISE EXCEPTION 'print_order_tally: no count for printer %%, status %%, in batch %% to take %% from',
                    change.printer_organization_id, change.status, change.in_batch, -change.orders;
            END IF;
        END IF;
    END LOOP;
    RETURN NULL;
END $$
"""


def _apply_for(operation: str, new: bool, old: bool) -> str:
    """The function for one operation: its transition tables read, an empty set for the other."""
    empty = ("SELECT NULL::varchar AS printer_organization_id, NULL::varchar AS status, NULL::varchar AS batch_id"
             " WHERE false")
    body = _APPLY.replace("print_order_tally_apply()", f"print_order_tally_{operation}()")
    body = body.replace("print_order_tally_new() n", "new_rows n" if new else f"({empty}) n")
    return body.replace("print_order_tally_old() o", "old_rows o" if old else f"({empty}) o")


_TRIGGERS = (
    ("insert", "INSERT", "REFERENCING NEW TABLE AS new_rows", True, False),
    ("update", "UPDATE", "REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows", True, True),
    ("delete", "DELETE", "REFERENCING OLD TABLE AS old_rows", False, True),
)


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        CREATE TABLE print_order_tally (
            printer_organization_id varchar(60) NOT NULL,
            status varchar(40) NOT NULL,
            in_batch boolean NOT NULL,
            orders bigint NOT NULL CHECK (orders >= 0),
            PRIMARY KEY (printer_organization_id, status, in_batch)
        )
        """
    )
    for operation, event, referencing, new, old in _TRIGGERS:
        migrator.sql(_apply_for(operation, new, old))
        migrator.sql(f"CREATE TRIGGER print_order_tally_{operation} AFTER {event} ON print_order {referencing}"
                     f" FOR EACH STATEMENT EXECUTE FUNCTION print_order_tally_{operation}()")
    # A TRUNCATE of the orders (the owner's, the tests' clean-up) empties their counts with them.
    migrator.sql(
        """
        CREATE FUNCTION print_order_tally_truncate() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
        SET search_path = public, pg_temp AS $$
        BEGIN
            DELETE FROM print_order_tally;
            RETURN NULL;
        END $$
        """
    )
    migrator.sql("CREATE TRIGGER print_order_tally_truncate AFTER TRUNCATE ON print_order"
                 " FOR EACH STATEMENT EXECUTE FUNCTION print_order_tally_truncate()")
    migrator.sql(
        """
        INSERT INTO print_order_tally (printer_organization_id, status, in_batch, orders)
        SELECT printer_organization_id, status, batch_id IS NOT NULL, count(*)
          FROM print_order GROUP BY 1, 2, 3
        """
    )


def rollback(migrator, database, fake=False, **kwargs):
    for operation in ("truncate", *(t[0] for t in _TRIGGERS)):
        migrator.sql(f"DROP TRIGGER print_order_tally_{operation} ON print_order")
        migrator.sql(f"DROP FUNCTION print_order_tally_{operation}()")
    migrator.sql("DROP TABLE print_order_tally")
