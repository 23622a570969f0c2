"""Reconciliation snapshot (Specification C, "Reconciliation"; API.md definitions).

Scope: invoice kinds `platform_sale` and `platform_credit_note`, plus `supplier_self_billed` and
`supplier_credit_note` when `EINVOICING_SELF_BILLING_ENABLED`; legacy kinds never.

- per transmission status counts of the domestic transmissions (processing rule `B2B`), and
  apart, those of the e-reporting ones (`B2BInt`, buyers outside France);
- `missing_transmission`: invoices in scope issued more than `MISSING_AFTER` ago with no
  transmission, leaving out those given none before e-reporting was sent (old rows of
  `einvoice_transmission_skip`);
- `provider_failed`: what needs an admin, not history: transmissions `failed` with no automatic
  retry planned (not an unknown recipient, counted apart), and `rejected` ones, as long as their
  invoice is not credited in full (corrected by a credit note);
- `recipient_unknown`: `failed` because the buyer's SIREN is not in the operator's directory;
- `refused_backlog`: transmissions whose latest lifecycle code is 210 Refusée or 213 Rejetée and
  whose invoice is not credited in full;
- `discrepancy_rate` = (missing + provider_failed) / invoices in scope.

Alert levels, compared in integers so a value exactly at a threshold is at that level:
`discrepancy_rate` warning at 5 % or more, critical at 15 % or more; `provider_failed_backlog`
warning at 5, critical at 20; `missing_transmission_backlog` warning at 10, critical at 30;
`refused_backlog` warning at 1, critical at 5.

The polling state (enabled, last pass, `inactive` past the runbook's 30 minutes, or twice the
interval when that is longer) is part of the snapshot: it is the runbook's other escalation.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from backend import clock
from backend.config import Config
from backend.db import database
from backend.einvoicing import reform_statuses
from backend.einvoicing.models import PollingPass
from backend.einvoicing.status import TransmissionStatus
from backend.errors import EinvoiceRecipientUnknown
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
REFUSED_BACKLOG = Threshold(warning=1, critical=5)


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


def _status_counts(kinds: tuple[str, ...]) -> tuple[dict[str, int], dict[str, int]]:
    """(domestic transmissions per status, e-reporting ones per status)."""
    # A transmission's kind is its own (given by the post-invoice hook), else its invoice's.
    rows = database.execute_sql(
        f"SELECT t.processing_rule, t.status, count(*) FROM einvoice_transmission t "  # noqa: S608 (constants)
        f"LEFT JOIN {INVOICE_TABLE} i ON i.number = t.invoice_number "
        f"WHERE coalesce(t.invoice_kind, i.kind) = ANY(%s) GROUP BY 1, 2", (list(kinds),)).fetchall()
    domestic = dict.fromkeys((s.value for s in TransmissionStatus), 0)
    e_reporting = dict.fromkeys((s.value for s in TransmissionStatus), 0)
    for rule, status, count in rows:
        (domestic if rule == "B2B" else e_reporting)[status] = count
    return domestic, e_reporting


def _action_counts(kinds: tuple[str, ...]) -> tuple[int, int, int]:
    """(provider failures needing an admin, unknown recipients, refused or rejected lifecycles),
    leaving out transmissions whose invoice is credited in full."""
    row = database.execute_sql(
        f"""
        SELECT count(*) FILTER (WHERE t.status = 'rejected'
                                   OR (t.status = 'failed' AND t.next_dispatch_at IS NULL
                                       AND coalesce(t.last_error_code, '') <> %s)),
               count(*) FILTER (WHERE t.status = 'failed' AND t.last_error_code = %s),
               count(*) FILTER (WHERE t.lifecycle_code = ANY(%s))
        FROM einvoice_transmission t LEFT JOIN {INVOICE_TABLE} i ON i.number = t.invoice_number
        WHERE coalesce(t.invoice_kind, i.kind) = ANY(%s) AND coalesce(i.status, '') <> 'credited'
        """,  # noqa: S608 (constants only)
        (EinvoiceRecipientUnknown.code, EinvoiceRecipientUnknown.code, list(reform_statuses.REFUSED_OR_REJECTED),
         list(kinds)),
    ).fetchone()
    return row[0], row[1], row[2]


# An invoice `i` in scope missing its transmission, issued before %(before)s.
_MISSING = """i.issued_at <= %(before)s
              AND NOT EXISTS (SELECT 1 FROM einvoice_transmission t WHERE t.invoice_number = i.number)
              AND NOT EXISTS (SELECT 1 FROM einvoice_transmission_skip s WHERE s.invoice_number = i.number)"""


def _invoice_counts(kinds: tuple[str, ...], now) -> tuple[int, int]:
    """(invoices in scope, of which missing their transmission)."""
    row = database.execute_sql(
        f"SELECT count(*), count(*) FILTER (WHERE {_MISSING}) FROM {INVOICE_TABLE} i WHERE i.kind = ANY(%(kinds)s)",  # noqa: S608 (constants only)
        {"before": now - MISSING_AFTER, "kinds": list(kinds)},
    ).fetchone()
    return row[0], row[1]


def missing_transmissions(config: Config) -> list[str]:
    """`<number> (<kind>, issued <time>)` of each invoice in scope issued more than `MISSING_AFTER`
    ago with no transmission (`vitrine accounting verify`), in number order."""
    return [row[0] for row in database.execute_sql(
        f"SELECT i.number || ' (' || i.kind || ', issued ' || to_char(i.issued_at AT TIME ZONE 'UTC',"  # noqa: S608
        f" 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') || ')' FROM {INVOICE_TABLE} i"
        f" WHERE i.kind = ANY(%(kinds)s) AND {_MISSING} ORDER BY i.number",
        {"before": clock.now() - MISSING_AFTER, "kinds": list(kinds_in_scope(config))},
    ).fetchall()]


def snapshot(config: Config) -> dict:
    now = clock.now()
    kinds = kinds_in_scope(config)
    by_status, e_reporting = _status_counts(kinds)
    invoices, missing = _invoice_counts(kinds, now)
    provider_failed, recipient_unknown, refused = _action_counts(kinds)
    discrepancies = missing + provider_failed
    return {
        "generatedAt": clock.iso(now),
        "scope": {"invoiceKinds": list(kinds), "selfBillingEnabled": config.einvoicing_self_billing_enabled},
        "transmissionsByStatus": by_status,
        "eReportingByStatus": e_reporting,
        "invoicesInScope": invoices,
        "missingTransmission": missing,
        "providerFailed": provider_failed,
        "recipientUnknown": recipient_unknown,
        "refusedBacklog": refused,
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
            {"name": "refused_backlog", "value": refused, "level": backlog_level(refused, REFUSED_BACKLOG),
             "warningAt": REFUSED_BACKLOG.warning, "criticalAt": REFUSED_BACKLOG.critical},
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
