"""Dramatiq actors and schedules (`dramatiq actors`, `periodiq actors`).

Importing this package boots the process (configuration, logs, database) unless the web app or
the tests already did, sets up the broker, then declares every actor module.
"""

from __future__ import annotations

from actors.broker import setup_broker
from backend.runtime import boot, current_runtime

setup_broker((current_runtime() or boot(role="worker")).config)

from actors import billing, diagnostics, einvoicing, email, marketplace, onboarding, outbox, printing  # noqa: E402, F401  (declare the actors)
