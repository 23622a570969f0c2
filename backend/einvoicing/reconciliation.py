"""Reconciliation snapshot (Specification C, "Reconciliation"; API.md definitions).

Scope: invoice kinds `platform_sale` and `platform_credit_note`, plus `supplier_self_billed` and
`supplier_credit_note` when `EINVOICING_SELF_BILLING_ENABLED`; legacy kinds never.

- per transmission status counts (transmissions of the kinds in scope);
- `missing_transmission`: invoices in scope issued more than `MISSING_AFTER` ago with no
  transmission, leaving out those deliberately given none (e-reporting flows, recorded by the
  draft function in `einvoice_transmission_skip`);
- `provider_failed`: transmissions in scope `failed` or `rejected`;
- `discrepancy_rate` = (missing + provider_failed) / invoices in scope.

Alert levels, compared in integers so a value exactly at a threshold is at that level:
`discrepancy_rate` warning at 5 % or more, critical at 15 % or more; `provider_failed_backlog`
warning at 5, critical at 20; `missing_transmission_backlog` warning at 10, critical at 30.

The polling state (enabled, last pass, `inactive` past the runbook's 30 minutes, or twice the
interval when that is longer) is part of the snapshot: it is the runbook's other escalation.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from backend import clock
from backend.config import Config
from backend.db import database
from backend.einvoicing.models import PollingPass
from backend.einvoicing.status import TransmissionStatus
from backend.money import round_half_up_div

MISSING_AFTER = timedelta(minutes=15)
POLLING_INACTIVE_AFTER = timedelta(minutes=30)
PLATFORM_KINDS = ("platform_sale", "platform_credit_note")
SELF_BILLED_KINDS = ("supplier_self_billed", "supplier_credit_note")
INVOICE_TABLE = "billing_invoice"  # billing's table: number, kind, issued_at


@dataclass(frozen=True)
class Threshold:
    warning: int
    critical: int


# discrepancy_rate thresholds in percent; the backlogs in transmissions / invoices.
DISCREPANCY_RATE_PERCENT = Threshold(warning=5, critical=15)
PROVIDER_FAILED_BACKLOG = Threshold(warning=5, critical=20)
MISSING_TRANSMISSION_BACKLOG = Threshold(warning=10, critical=30)


def backlog_level(value: int, threshold: Threshold) -> str:
    if value >= threshold.critical:
        return "critical"
    if value >= threshold.warning:
        return "warning"
    return "ok"


def rate_level(numerator: int, denominator: int, threshold: Threshold) -> str:
    """Level of numerator/denominator against thresholds in percent, exactly (no rounding)."""
    if denominator <= 0:
        return "ok"
    if numerator * 100 >= threshold.critical * denominator:
        return "critical"
    if numerator * 100 >= threshold.warning * denominator:
        return "warning"
    return "ok"


def kinds_in_scope(config: Config) -> tuple[str, ...]:
    return PLATFORM_KINDS + (SELF_BILLED_KINDS if config.einvoicing_self_billing_enabled else ())


def _status_counts(kinds: tuple[str, ...]) -> dict[str, int]:
    # A transmission's kind is its own (given by the post-invoice hook), else its invoice's.
    rows = database.execute_sql(
        f"SELECT t.status, count(*) FROM einvoice_transmission t "  # noqa: S608 (constants only)
        f"LEFT JOIN {INVOICE_TABLE} i ON i.number = t.invoice_number "
        f"WHERE coalesce(t.invoice_kind, i.kind) = ANY(%s) GROUP BY t.status", (list(kinds),)).fetchall()
    counts = dict.fromkeys((s.value for s in TransmissionStatus), 0)
    counts.update({status: count for status, count in rows})
    return counts


def _invoice_counts(kinds: tuple[str, ...], now) -> tuple[int, int]:
    """(invoices in scope, of which missing their transmission)."""
    row = database.execute_sql(
        f"""
        SELECT count(*),
               count(*) FILTER (
                   WHERE i.issued_at <= %s
                     AND NOT EXISTS (SELECT 1 FROM einvoice_transmission t WHERE t.invoice_number = i.number)
                     AND NOT EXISTS (SELECT 1 FROM einvoice_transmission_skip s WHERE s.invoice_number = i.number))
        FROM {INVOICE_TABLE} i
        WHERE i.kind = ANY(%s)
        """,  # noqa: S608 (constants only)
        (now - MISSING_AFTER, list(kinds)),
    ).fetchone()
    return row[0], row[1]


def snapshot(config: Config) -> dict:
    now = clock.now()
    kinds = kinds_in_scope(config)
    by_status = _status_counts(kinds)
    invoices, missing = _invoice_counts(kinds, now)
    provider_failed = by_status[TransmissionStatus.FAILED] + by_status[TransmissionStatus.REJECTED]
    discrepancies = missing + provider_failed
    return {
        "generatedAt": clock.iso(now),
        "scope": {"invoiceKinds": list(kinds), "selfBillingEnabled": config.einvoicing_self_billing_enabled},
        "transmissionsByStatus": by_status,
        "invoicesInScope": invoices,
        "missingTransmission": missing,
        "providerFailed": provider_failed,
        "discrepancyRateBps": round_half_up_div(discrepancies * 10_000, invoices) if invoices else 0,
        "alerts": [
            {"name": "discrepancy_rate", "value": discrepancies, "of": invoices,
             "level": rate_level(discrepancies, invoices, DISCREPANCY_RATE_PERCENT),
             "warningAtBps": DISCREPANCY_RATE_PERCENT.warning * 100,
             "criticalAtBps": DISCREPANCY_RATE_PERCENT.critical * 100},
            {"name": "provider_failed_backlog", "value": provider_failed,
             "level": backlog_level(provider_failed, PROVIDER_FAILED_BACKLOG),
             "warningAt": PROVIDER_FAILED_BACKLOG.warning, "criticalAt": PROVIDER_FAILED_BACKLOG.critical},
            {"name": "missing_transmission_backlog", "value": missing,
             "level": backlog_level(missing, MISSING_TRANSMISSION_BACKLOG),
             "warningAt": MISSING_TRANSMISSION_BACKLOG.warning, "criticalAt": MISSING_TRANSMISSION_BACKLOG.critical},
        ],
        "polling": _polling(config, now),
    }


def _polling(config: Config, now) -> dict:
    last = PollingPass.select().order_by(PollingPass.started_at.desc()).first()
    interval = timedelta(milliseconds=config.einvoicing_polling_interval_ms)
    inactive_after = max(POLLING_INACTIVE_AFTER, 2 * interval)
    return {
        "enabled": config.einvoicing_polling_enabled,
        "intervalMs": config.einvoicing_polling_interval_ms,
        "lastPassStartedAt": clock.iso(last.started_at) if last else None,
        "lastPassOutcome": last.outcome if last else None,
        "inactive": config.einvoicing_polling_enabled and (last is None or now - last.started_at > inactive_after),
    }
