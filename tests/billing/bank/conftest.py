"""Fixtures of the bank tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def test_runtime_after(config):
    """The command boots the process's runtime with its own settings: the tests' again afterwards."""
    from backend.runtime import boot

    yield
    boot(config, role="test")
