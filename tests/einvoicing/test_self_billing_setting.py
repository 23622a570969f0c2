"""`vitrine config check` in production: a warning when the self-billing scheduler issues invoices
that e-invoicing never transmits (EINVOICING_SELF_BILLING_ENABLED off), none otherwise; `vitrine
dev` transmits them, as a platform in production must."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ops.config_check import summary
from ops.dev import dev_defaults


@pytest.mark.parametrize(("environment", "scheduler", "transmitted", "warned"), [
    ("production", True, False, True),
    ("production", True, True, False),
    ("production", False, False, False),
    ("development", True, False, False),
])
def test_config_check_warns_when_production_self_bills_without_transmitting(config, environment, scheduler,
                                                                            transmitted, warned):
    checked = replace(config, environment=environment, warnings=(), self_billing_scheduler_enabled=scheduler,
                      einvoicing_self_billing_enabled=transmitted)
    first, *warnings = summary(checked)
    named = [w for w in warnings if w.startswith("warning: EINVOICING_SELF_BILLING_ENABLED=false")]
    assert bool(named) == warned
    assert first.endswith(f"; {len(warnings)} warning{'' if len(warnings) == 1 else 's'}")


def test_vitrine_dev_transmits_self_billed_invoices_unless_told_otherwise():
    assert dev_defaults(8000, {})["EINVOICING_SELF_BILLING_ENABLED"] == "true"
    assert "EINVOICING_SELF_BILLING_ENABLED" not in dev_defaults(8000, {"EINVOICING_SELF_BILLING_ENABLED": "false"})
