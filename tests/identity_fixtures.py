"""Identity test set-up for every test session (registered in `tests/conftest.py`).

Argon2id at its production cost takes tens of milliseconds per hash; tests use the cheapest
parameters through the settings (set here, before the session's configuration is read).
"""

from __future__ import annotations

import os

os.environ.setdefault("ARGON2_TIME_COST", "1")
os.environ.setdefault("ARGON2_MEMORY_COST_KIB", "8")
os.environ.setdefault("ARGON2_PARALLELISM", "1")
