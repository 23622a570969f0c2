"""Fixtures of the billing tests: the storage documents go to, with the default templates."""

from __future__ import annotations

import pytest

from storage import build_storage


@pytest.fixture
def storage(config):
    return build_storage(config)


@pytest.fixture
def seeded(storage):
    from backend.documents.seeding import seed_default_versions

    return seed_default_versions(storage)
