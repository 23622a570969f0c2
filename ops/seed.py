"""`vitrine seed-demo`: demo data for a fresh platform. Each area adds an idempotent seeder to
`SEEDERS`; running the command twice never duplicates anything."""

from __future__ import annotations

from collections.abc import Callable

from backend.billing.demo import seed_demo_billing
from backend.db import transaction
from backend.identity.demo import seed_demo_identity
from backend.marketplace.demo import seed_demo_marketplace
from backend.printing.demo import seed_demo_printing

# (name, seeder) in dependency order; a seeder returns a one-line report.
SEEDERS: list[tuple[str, Callable[[], str]]] = [("identity", seed_demo_identity)]
SEEDERS.append(("marketplace", seed_demo_marketplace))
SEEDERS.append(("printing", seed_demo_printing))
SEEDERS.append(("billing", seed_demo_billing))


def seed_demo(*, only_if_empty: bool = False) -> str:
    if not SEEDERS:
        return "demo data: nothing to seed yet"
    lines = []
    for name, seeder in SEEDERS:
        with transaction():
            lines.append(f"{name}: {seeder()}")
    return "\n".join(lines)
