"""`vitrine bench`: every scenario module imports and declares what the harness reads (the figures
themselves are measured by running `vitrine bench`, never asserted here)."""

import importlib

import pytest

from ops.bench import scenario_names


@pytest.mark.parametrize("name", scenario_names())
def test_every_scenario_imports_and_describes_itself(name):
    module = importlib.import_module(f"ops.bench.{name}")
    assert name == module.NAME and module.DESCRIPTION and callable(module.run)
