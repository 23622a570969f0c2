"""The printer's workload as CSV (`GET /api/printer/print-orders/export.csv`): every order, batch
orders included (spec B, listing rule 6), one row per order, oldest first; the status as its code
(stable, for filters and imports) and as a French label.

Written for French spreadsheets: UTF-8 with a byte-order mark, `;` between fields, decimal comma.
A cell a spreadsheet would read as a formula (starting with `=`, `+`, `-`, `@`, a tab or a
carriage return) is prefixed with `'`: names typed by other organizations reach this file.
The rows are produced chunk by chunk while the client downloads.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator

from backend.clock import iso
from backend.printing.delivery import STATUS_LABELS
from backend.printing.order_views import OrderView
from backend.printing.plans import formatted_address

HEADER = (
    "code", "statut", "statut (libellé)", "lot", "campagne", "annonceur", "magasin", "ville", "livraison",
    "adresse de livraison", "fichiers", "panneaux", "surface (m²)", "transporteur", "numéro de suivi",
    "lien de suivi", "créée le", "mise à jour le",
)
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3f}".replace(".", ",")
    text = str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def _row(view: OrderView) -> list[str]:
    order, metrics = view.order, view.metrics
    return [_cell(v) for v in (
        order.code, order.status, STATUS_LABELS.get(order.status, order.status), view.batch_code,
        order.campaign_name, order.industrial_name, order.store_name, order.store_city, order.delivery_target,
        formatted_address(order), metrics.files_count, metrics.panel_count, float(metrics.total_surface_m2),
        order.carrier, order.tracking_number, order.tracking_url, iso(order.created_at), iso(order.updated_at),
    )]


def csv_chunks(views: Iterable[OrderView], *, rows_per_chunk: int = 200) -> Iterator[bytes]:
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=";", lineterminator="\r\n")
    buffer.write("\ufeff")
    writer.writerow(HEADER)
    for n, view in enumerate(views, start=1):
        writer.writerow(_row(view))
        if n % rows_per_chunk == 0:
            yield buffer.getvalue().encode("utf-8")
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue().encode("utf-8")
