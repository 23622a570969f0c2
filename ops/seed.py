"""`vitrine seed-demo`: demo data for a fresh platform. Each area adds an idempotent seeder to
`SEEDERS`; running the command twice never duplicates anything. A seeder receives the booted
runtime and hands its service the clients and settings it needs.

A seeder runs in one transaction, so any row it writes says it ran to its end: `present` looks
for one. `seed-demo --if-empty` (what `vitrine dev` runs at every start) seeds only the seeders
whose data is absent: nothing on a seeded database ("already seeded"), everything on an empty one,
the rest of a seed that was interrupted (Ctrl-C during `vitrine dev`'s first start). Without it,
every seeder runs again (idempotent: it tops up what is missing, which may include work on rows
the demo did not write, such as collecting the demo industrial's newly approved reservations).

`seed-demo --reset` erases every row first (`erase_data`), so a demo a walk or a trial left in
another state (a KYB sent back for review, a mandate revoked) is the seeded one again. It is
refused in production, as the seed itself."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from backend.billing.demo import ENDED_CAMPAIGN, seed_demo_billing, seed_demo_sepa_mandate
from backend.billing.models import SelfBillingMandate, SepaMandate
from backend.billing.self_billing.mandate_demo import seed_demo_self_billing_mandate
from backend.db import transaction
from backend.identity.demo import DEMO_USERS, seed_demo_identity
from backend.identity.models import User
from backend.marketplace.demo import DISTRIBUTOR, INDUSTRIAL, seed_demo_marketplace
from backend.marketplace.models import Campaign, Store
from backend.onboarding.demo import DEMO_DISTRIBUTOR, seed_demo_onboarding
from backend.onboarding.models import SignatureRequest
from backend.printing.demo import DEMO_PRINTER, seed_demo_printing
from backend.printing.models import PrintOrder
from backend.runtime import Runtime
from ops.progress import QUIET, Progress


@dataclass(frozen=True)
class Seeder:
    name: str
    seed: Callable[[Runtime], str]  # returns a one-line report
    present: Callable[[], bool]  # its data is there (a row its transaction wrote)


def _demo_users_present() -> bool:
    return User.select().where(User.email.in_([user[0] for user in DEMO_USERS])).count() == len(DEMO_USERS)


# In dependency order.
SEEDERS: list[Seeder] = [
    Seeder("identity", lambda runtime: seed_demo_identity(), _demo_users_present),
    Seeder("onboarding", lambda runtime: seed_demo_onboarding(storage=runtime.storage, config=runtime.config),
           lambda: SignatureRequest.select().where(SignatureRequest.organization == DEMO_DISTRIBUTOR).exists()),
    Seeder("marketplace",
           lambda runtime: seed_demo_marketplace(rate_bps=runtime.config.platform_commission_rate_bps),
           lambda: Store.select().where(Store.organization_id == DISTRIBUTOR).exists()),
    Seeder("printing",
           lambda runtime: seed_demo_printing(storage=runtime.storage,
                                              rate=runtime.config.platform_commission_rate_bps),
           lambda: PrintOrder.select().where(PrintOrder.printer_organization_id == DEMO_PRINTER).exists()),
    Seeder("SEPA mandate", lambda runtime: seed_demo_sepa_mandate(),
           lambda: SepaMandate.select().where(SepaMandate.organization_id == INDUSTRIAL).exists()),
    Seeder("billing", lambda runtime: seed_demo_billing(config=runtime.config),
           lambda: Campaign.select().where(Campaign.organization_id == INDUSTRIAL,
                                           Campaign.name == ENDED_CAMPAIGN).exists()),
    Seeder("self-billing mandate",
           lambda runtime: seed_demo_self_billing_mandate(storage=runtime.storage, config=runtime.config),
           lambda: SelfBillingMandate.select().where(SelfBillingMandate.organization_id == DISTRIBUTOR).exists()),
]

# Tables whose rows the migrations write (reference data the code relies on): never erased.
MIGRATED_DATA = ("migratehistory", "billing_financial_transition", "billing_status_transition")


def erase_data(owner_url: str) -> None:
    """Every row of the database but the migrations' own, as the role owning the tables: the
    triggers that keep the books, invoices and audit entries unchanged refuse the runtime role,
    and rightly so; this is for a demo or a test database only."""
    import psycopg2

    connection = psycopg2.connect(owner_url)
    try:
        with connection, connection.cursor() as cursor:
            cursor.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
            tables = [name for (name,) in cursor.fetchall() if name not in MIGRATED_DATA]
            if tables:
                cursor.execute("SET LOCAL session_replication_role = replica")
                cursor.execute("TRUNCATE " + ", ".join(f'"{t}"' for t in tables) + " RESTART IDENTITY CASCADE")
    finally:
        connection.close()


ALREADY_SEEDED = "demo data: already seeded, nothing done (`vitrine seed-demo` without --if-empty tops it up)"


def seed_demo(runtime: Runtime, *, only_if_empty: bool = False, progress: Progress = QUIET) -> str:
    """The seeders' reports, one line each; with `only_if_empty`, only the seeders whose data is
    absent run, and a seeded database gives `ALREADY_SEEDED` (nothing written)."""
    todo = [seeder for seeder in SEEDERS if not (only_if_empty and seeder.present())]
    if not todo:
        return ALREADY_SEEDED
    lines = []
    for number, seeder in enumerate(todo, start=1):
        progress.step(seeder.name, number, len(todo))
        with transaction():
            lines.append(f"{seeder.name}: {seeder.seed(runtime)}")
    return "\n".join(lines)
