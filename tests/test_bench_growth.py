"""`vitrine bench growth`'s databases (`ops/bench/_growth_data.py`), built at a tiny size as the
bench builds them: the rows hold every constraint and trigger and read as the platform's own (the
books verify, the self-billing pass selects the due reservations, a collection continues the
series), and the kept database is reused on the next call, built again when its marker changes."""

import json
import os
import uuid
from urllib.parse import urlsplit, urlunsplit

import pytest

from backend.db import database
from ops.bench import _growth_data
from ops.bench._growth_data import Sizes
from ops.bench.growth import AS_OF

TINY = Sizes(organizations=5, reservations=400, invoices=300, orders=50, transmissions=20)


@pytest.mark.committed
@pytest.mark.owner  # as the bench builds: the owner (the runtime role may not move the order codes' sequence)
def test_the_builder_writes_valid_rows_kept_and_reused(config, client):
    from backend import clock
    from backend.billing.accounting.verify import verify
    from backend.billing.invoicing.parties import platform_party
    from backend.billing.self_billing.scheduler import candidates
    from ops.bench.billing import populate

    # The server's maintenance database: the test's own is copied, dropped and copied back.
    admin_url = urlunsplit(urlsplit(os.environ["DATABASE_OWNER_URL"])._replace(path="/postgres"))
    name = f"vitrine_growth_test_{uuid.uuid4().hex[:8]}"
    fills, migrations = [], []

    def fill():
        fills.append(1)
        with database.connection_context():
            _growth_data.build(TINY, platform=platform_party(config))

    with database.connection_context():
        wanted = _growth_data.marker(TINY)
        work = database.execute_sql("SELECT current_database()").fetchone()[0]
    try:
        kept = {"work": work, "fresh": lambda: None, "fill": fill, "migrate": lambda: migrations.append(1)}
        assert _growth_data.persisted(admin_url, name, wanted, **kept)[0] == "built"
        assert _growth_data.persisted(admin_url, name, wanted, **kept) is None
        assert len(fills) == 1  # kept: the second call built nothing
        with database.connection_context():
            counts = {table: database.execute_sql(f"SELECT count(*) FROM {table}").fetchone()[0]  # noqa: S608
                      for table in ("reservation", "billing_invoice", "billing_payment_order", "accounting_entry",
                                    "accounting_line", "accounting_lettered_line", "print_order", "print_order_line")}
            assert counts == {"reservation": 400, "billing_invoice": 300, "billing_payment_order": 300,
                              "accounting_entry": 600, "accounting_line": 1500, "accounting_lettered_line": 600,
                              "print_order": 50, "print_order_line": 150}
            # Validated at the commits: numbered 1..300 in each journal, in the sales' order.
            numbers = database.execute_sql(
                "SELECT journal_code, array_agg(number ORDER BY validation_seq) = array_agg(number ORDER BY number),"
                " min(number), max(number), count(DISTINCT number) FROM accounting_entry GROUP BY 1 ORDER BY 1"
            ).fetchall()
            assert numbers == [("BQ", True, 1, 300, 300), ("VE", True, 1, 300, 300)]
            assert database.execute_sql("SELECT last_value FROM billing_number_counter").fetchall() == [(300,)]
            assert verify() == []  # the books: balanced, numbered, each invoice and payment posted once
            with clock.frozen_at(AS_OF):
                assert len(candidates()) == _growth_data.DUE
            assert database.execute_sql("SELECT count(*) FROM einvoice_transmission WHERE status = 'sent'"
                                        ).fetchone()[0] == 20
            # The platform carries on from the history: the next collection is number 301.
            [reservation_id], token = populate(1)
        with clock.frozen_at(AS_OF):
            answer = client.simulate_post(f"/api/billing/reservations/{reservation_id}/collect",
                                          json={"paymentMethod": "bank_transfer"},
                                          headers={"Cookie": f"auth.session_token={token}",
                                                   "Idempotency-Key": "growth"})
        assert answer.status_code == 200, answer.text
        assert answer.json["data"]["invoiceNumber"] == "FAC-RES-2026-000301"
        # A migration added since: migrated forward; other sizes or another builder: built again.
        marker = json.loads(wanted)
        later = json.dumps({**marker, "migrations": [*marker["migrations"], "999_later"]}, sort_keys=True)
        assert _growth_data.persisted(admin_url, name, later, **kept)[0] == "migrated"
        assert (len(fills), len(migrations)) == (1, 1)
        assert _growth_data.persisted(admin_url, name, later, **kept) is None
        other = json.dumps({**marker, "build": marker["build"] + 1}, sort_keys=True)
        assert _growth_data.persisted(admin_url, name, other, **{**kept, "fill": lambda: fills.append(1)})[0] == "built"
        assert (len(fills), len(migrations)) == (2, 1)
    finally:
        _growth_data.drop(admin_url, name)


def test_a_kept_database_missing_a_lower_numbered_migration_is_migrated_forward_not_rebuilt():
    from ops.bench._growth_data import _older_schema

    wanted = {"build": 3, "sizes": {"orders": 10}, "migrations": ["157_a", "158_b", "164_c"]}
    assert _older_schema({**wanted, "migrations": ["157_a", "164_c"]}, wanted)  # 158 merged after 164
    assert not _older_schema({**wanted, "migrations": ["157_a", "159_gone"]}, wanted)
    assert not _older_schema({**wanted, "sizes": {"orders": 20}, "migrations": ["157_a"]}, wanted)
