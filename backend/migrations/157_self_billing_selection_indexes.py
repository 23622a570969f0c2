"""Self-billing: the pass selects its due reservations from two indexes, not by reading every
reservation (issue 36, "Cost as the data grows").

`scheduler.candidates()` asks for the ended `principal_seller` reservations whose sale is paid
(`reservation_total_paid` or `partially_refunded`) and not self-billed yet. Its plan read the
whole `reservation` table: `Seq Scan on reservation t1, Filter: (ends_at <= now), Rows Removed by
Filter: 49900` for 100 due reservations among 50,000 (58 ms; docs/benchmarks.md "Cost as the data
grows"), a cost that grows with the history. Now:
- `reservation_ends_at` serves `ends_at <= now` when few reservations have ended (sales paid in
  advance of their service): `Index Scan using reservation_ends_at` (3 ms);
- `billing_financial_record_settleable` holds only the sales paid and not settled yet, whatever the
  history (a settled sale leaves it): the selection's other side when most reservations have
  ended, and its index-only probe in the plan above.
The planner picks by the statistics; the selection's answer is unchanged.
"""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql("CREATE INDEX reservation_ends_at ON reservation (ends_at)")
    migrator.sql(
        "CREATE INDEX billing_financial_record_settleable ON billing_financial_record (reservation_id)"
        " WHERE financial_status IN ('reservation_total_paid', 'partially_refunded')"
        " AND billing_model = 'principal_seller'"
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP INDEX billing_financial_record_settleable, reservation_ends_at")
