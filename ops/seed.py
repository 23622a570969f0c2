"""`vitrine seed-demo`: demo data for a fresh platform. Each area adds an idempotent seeder to
`SEEDERS`; running the command twice never duplicates anything. A seeder receives the booted
runtime and hands its service the clients and settings it needs."""

from __future__ import annotations

from collections.abc import Callable

from backend.billing.demo import seed_demo_billing
from backend.billing.self_billing_mandate_demo import seed_demo_self_billing_mandate
from backend.db import transaction
from backend.identity.demo import seed_demo_identity
from backend.marketplace.demo import seed_demo_marketplace
from backend.printing.demo import seed_demo_printing
from backend.runtime import Runtime
from ops.progress import QUIET, Progress

# (name, seeder) in dependency order; a seeder returns a one-line report.
SEEDERS: list[tuple[str, Callable[[Runtime], str]]] = [("identity", lambda runtime: seed_demo_identity())]
SEEDERS.append(("marketplace", lambda runtime: seed_demo_marketplace(
    rate_bps=runtime.config.platform_commission_rate_bps)))
SEEDERS.append(("printing", lambda runtime: seed_demo_printing(
    storage=runtime.storage, rate=runtime.config.platform_commission_rate_bps)))
SEEDERS.append(("billing", lambda runtime: seed_demo_billing(config=runtime.config)))
SEEDERS.append(("self-billing mandate", lambda runtime: seed_demo_self_billing_mandate(
    storage=runtime.storage, config=runtime.config)))


def seed_demo(runtime: Runtime, *, only_if_empty: bool = False, progress: Progress = QUIET) -> str:
    if not SEEDERS:
        return "demo data: nothing to seed yet"
    lines = []
    for number, (name, seeder) in enumerate(SEEDERS, start=1):
        progress.step(name, number, len(SEEDERS))
        with transaction():
            lines.append(f"{name}: {seeder(runtime)}")
    return "\n".join(lines)
