"""Print orders as their readers see them: the printer's list and detail, the admin list, the
counters and the CSV export.

Every page is two queries whatever its size: the orders with their reservation, campaign,
industrial, store and batch joined, then the lines of those orders with their zone and asset.
An order's `batchCode` is its own batch's code, and null when the order is cancelled (spec B,
listing rules 3 and 4). A line's `fileName` is its entry name in the order's ZIP, so the order
form, the list and the archive name files alike.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from operator import itemgetter
from typing import NamedTuple

from peewee import JOIN, Tuple

from backend.db import database
from backend.errors import NotFound
from backend.identity.models import Organization
from backend.listing import ListParams, Page, paginate
from backend.marketplace.models import AdSpace, Campaign, FurnitureZone, Reservation, Store
from backend.printing.archive import ArchiveFile, entry_names, entry_names_of
from backend.printing.models import PrintAsset, PrintOrder, PrintOrderBatch, PrintOrderLine
from backend.printing.orders import OrderMetrics, order_metrics, surface_m2
from backend.printing.plans import formatted_address
from backend.printing.status import PRINTER_VISIBLE, PrintOrderStatus

Industrial = Organization.alias("industrial")
Printer = Organization.alias("printer")


@dataclass(frozen=True)
class LineView:
    position: int
    zone_id: str
    zone_code: str
    zone_label: str
    width_mm: int
    height_mm: int
    face_index: int | None
    quantity: int
    qualifiers: list[str]
    asset_id: str | None
    file_name: str | None
    archive_file: ArchiveFile | None


@dataclass(frozen=True)
class BatchRef:
    code: str
    campaign_id: str


@dataclass(frozen=True)
class RecipientView:
    name: str
    street: str
    postal_code: str
    city: str
    country: str
    formatted: str


@dataclass(frozen=True)
class OrderView:
    order: PrintOrder  # with the joined columns of `order_rows()` as attributes
    lines: list[LineView]
    metrics: OrderMetrics

    @property
    def batch_code(self) -> str | None:
        return None if self.order.status == PrintOrderStatus.CANCELLED else self.order.batch_code

    @property
    def batch(self) -> BatchRef | None:
        """The order's batch as its readers see it: None without a batch or once cancelled."""
        code = self.batch_code
        return None if code is None else BatchRef(code, self.order.batch_campaign_id)

    @property
    def recipient(self) -> RecipientView | None:
        """Where the order is shipped, None when nothing is (target `none`)."""
        order = self.order
        formatted = formatted_address(order)
        if formatted is None:
            return None
        return RecipientView(order.recipient_name, order.recipient_street, order.recipient_postal_code,
                             order.recipient_city, order.recipient_country, formatted)

    @property
    def archive_files(self) -> list[ArchiveFile]:
        return [line.archive_file for line in self.lines if line.archive_file is not None]


def order_rows():
    """Print orders with the columns every reader shows (as attributes of each order)."""
    return (
        PrintOrder.select(
            PrintOrder,
            PrintOrderBatch.code.alias("batch_code"),
            PrintOrderBatch.campaign_id.alias("batch_campaign_id"),
            Campaign.id.alias("campaign_id"),
            Campaign.name.alias("campaign_name"),
            Industrial.legal_name.alias("industrial_name"),
            Printer.legal_name.alias("printer_name"),
            Store.name.alias("store_name"),
            Store.city.alias("store_city"),
            AdSpace.name.alias("ad_space_name"),
            Reservation.starts_at.alias("reservation_starts_at"),
            Reservation.ends_at.alias("reservation_ends_at"),
        )
        .join(Reservation, on=PrintOrder.reservation_id == Reservation.id)
        .join(Campaign, on=Reservation.campaign == Campaign.id)
        .switch(Reservation)
        .join(AdSpace, on=Reservation.ad_space == AdSpace.id)
        .join(Store, on=AdSpace.store == Store.id)
        .switch(PrintOrder)
        .join(Industrial, on=PrintOrder.industrial_organization_id == Industrial.id)
        .switch(PrintOrder)
        .join(Printer, on=PrintOrder.printer_organization_id == Printer.id)
        .switch(PrintOrder)
        .join(PrintOrderBatch, JOIN.LEFT_OUTER, on=PrintOrder.batch_id == PrintOrderBatch.id)
        .objects()
    )


def with_lines(orders: list[PrintOrder]) -> list[OrderView]:
    """The views of `orders` with their lines, zones and assets: one query for all of them."""
    if not orders:
        return []
    rows = (
        PrintOrderLine.select(
            PrintOrderLine,
            FurnitureZone.code.alias("zone_code"),
            FurnitureZone.label.alias("zone_label"),
            FurnitureZone.width_mm,
            FurnitureZone.height_mm,
            PrintAsset.technical_name,
            PrintAsset.storage_key,
            PrintAsset.size_bytes,
            PrintAsset.crc32,
        )
        .join(FurnitureZone, on=PrintOrderLine.zone_id == FurnitureZone.id)
        .switch(PrintOrderLine)
        .join(PrintAsset, JOIN.LEFT_OUTER, on=PrintOrderLine.asset_id == PrintAsset.id)
        .where(PrintOrderLine.order.in_([o.id for o in orders]))
        .order_by(PrintOrderLine.order, PrintOrderLine.position)
        .objects()
    )
    by_order: dict[str, list] = {o.id: [] for o in orders}
    for row in rows:
        by_order[row.order_id].append(row)
    return [_view(order, by_order[order.id]) for order in orders]


def _view(order: PrintOrder, rows: list) -> OrderView:
    files = {
        row.id: ArchiveFile(row.technical_name, row.quantity, row.position, row.storage_key, row.size_bytes,
                            row.crc32)
        for row in rows if row.asset_id is not None
    }
    names = dict(zip(files, entry_names(list(files.values())), strict=True))
    lines = [
        LineView(row.position, row.zone_id, row.zone_code, row.zone_label, row.width_mm, row.height_mm,
                 row.face_index, row.quantity, list(row.qualifiers), row.asset_id, names.get(row.id),
                 files.get(row.id))
        for row in rows
    ]
    sizes = {row.zone_id: (row.width_mm, row.height_mm) for row in rows}
    return OrderView(order, lines, order_metrics(rows, sizes))


# --- printer ---------------------------------------------------------------------------------------


def _printer_orders(printer_organization_id: str):
    return order_rows().where(
        PrintOrder.printer_organization_id == printer_organization_id, PrintOrder.status.in_(PRINTER_VISIBLE)
    )


class Scope:
    ALL = "all"
    ISOLATED = "isolated"  # orders with no batch: the `/printer/commandes` order table
    BATCH = "batch"


# The page's orders are read from `print_order_printer_list` alone (filters, order and offset in the
# index), and only then joined: the joins cost the page, never the whole workload.
_LIST_PAGE = """
WITH page AS (
    SELECT o.id, o.code, o.updated_at
      FROM print_order o
     WHERE {where}
     ORDER BY {order}
     LIMIT %(limit)s OFFSET %(offset)s)
SELECT o.id, o.code, o.status, CASE WHEN o.status = 'cancelled' THEN NULL ELSE b.code END, o.batch_id, r.campaign_id,
       r.campaign_name, i.legal_name, r.store_name, r.store_city, o.delivery_target,
       to_char(o.created_at AT TIME ZONE 'UTC', {iso}), to_char(o.updated_at AT TIME ZONE 'UTC', {iso}),
       o.reservation_id, {total}
  FROM page
  {orders}
  JOIN organization i ON i.id = o.industrial_organization_id
  LEFT JOIN print_order_batch b ON b.id = o.batch_id
 ORDER BY {page_order}
"""
_RESERVATIONS = """SELECT r.id, r.campaign_id, c.name AS campaign_name, s.name AS store_name, s.city AS store_city
      FROM reservation r JOIN campaign c ON c.id = r.campaign_id JOIN ad_space a ON a.id = r.ad_space_id
      JOIN store s ON s.id = a.store_id"""
# A page's rows are probed one by one through the primary keys: each `LATERAL ... OFFSET 0` is kept
# as it is (not flattened into the joins, which the planner made hash joins over whole tables, a
# sequential scan of `print_order` included, for a page's rows). Past `_PROBED_UP_TO` rows, the
# hash joins cost less than the probes, their scans included.
_PROBED = f"""CROSS JOIN LATERAL (SELECT * FROM print_order o WHERE o.id = page.id OFFSET 0) o
  CROSS JOIN LATERAL ({_RESERVATIONS} WHERE r.id = o.reservation_id OFFSET 0) r"""  # noqa: S608 (constants only)
_JOINED = f"""JOIN print_order o ON o.id = page.id
  JOIN ({_RESERVATIONS}) r ON r.id = o.reservation_id"""
_PROBED_UP_TO = 1_000
_PRINTER_WHERE = "o.printer_organization_id = %(printer)s AND o.status <> 'draft'"
_RECENT_FIRST = "{t}.updated_at DESC, {t}.id DESC"
_ISO = """'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'"""  # `clock.iso`, formatted by PostgreSQL (no datetime per row)
_LIST_COUNT = """
SELECT COUNT(*) FROM print_order o WHERE {where}
"""
_LIST_FILTERS = {
    Scope.ISOLATED: "AND o.batch_id IS NULL",
    Scope.BATCH: "AND o.batch_id IS NOT NULL",
}
# A printer's totals are read from `print_order_tally` (migration 164: its orders per status and
# scope, kept by triggers in the orders' own transactions), a few rows whatever its history, not
# counted over its orders; the same filters as `_PRINTER_WHERE` and `_LIST_FILTERS`.
_TALLY_COUNT = """SELECT COALESCE(SUM(t.orders), 0)::bigint FROM print_order_tally t
 WHERE t.printer_organization_id = %(printer)s AND t.status <> 'draft'"""
_TALLY_FILTERS = {
    Scope.ISOLATED: "AND NOT t.in_batch",
    Scope.BATCH: "AND t.in_batch",
}
# `ANY(ARRAY(SELECT unnest(...)))` hides the ids from the planner, which otherwise estimates each
# of them (a whole workload's ids: more time planning than running). Sorted in Python, per
# order: a sort of every line here spills to disk on a big list.
_LIST_LINES = """
SELECT l.order_id, l.position, l.zone_id, z.code, z.label, z.width_mm, z.height_mm, l.face_index, l.quantity,
       l.asset_id, a.technical_name
  FROM print_order_line l
  JOIN furniture_zone z ON z.id = l.zone_id
  LEFT JOIN print_asset a ON a.id = l.asset_id
 WHERE l.order_id = ANY(ARRAY(SELECT unnest(%s::text[])))
"""


def printer_orders(
    *, printer_organization_id: str, statuses: list[str] | None = None, scope: str = Scope.ALL,
    limit: int | None = None, offset: int = 0,
) -> tuple[list[dict], int]:
    """The printer's orders (drafts never), most recently updated first, and their total count;
    every order without `limit` (a large batch alone makes an order per store).

    Two statements (a third past the last page, for the total), and each order as the plain values
    of its list item (`schemas.printing.orders.PrinterPrintOrderListItemOut`, under the API's
    names): a printer may ask for its whole workload, and a model, a view and a field-by-field
    dump per order and per line made that the cost of the request."""
    filters, tallied = _LIST_FILTERS.get(scope, ""), _TALLY_FILTERS.get(scope, "")
    if statuses:
        filters += " AND o.status = ANY(%(statuses)s)"
        tallied += " AND t.status = ANY(%(statuses)s)"
    params = {"printer": printer_organization_id, "limit": limit, "offset": offset, "statuses": list(statuses or ())}
    return _list_items(f"{_PRINTER_WHERE} {filters}", _RECENT_FIRST, params,
                       count=f"{_TALLY_COUNT} {tallied}")


def batch_order_items(batch_id: str) -> list[dict]:
    """Every order of a batch (cancelled ones included) by code, as `printer_orders` builds its
    items, with the reservation's id (`schemas.printing.batches.BatchOrderOut`)."""
    items, _ = _list_items("o.batch_id = %(batch)s", "{t}.code", {"batch": batch_id, "limit": None, "offset": 0},
                           reservation=True)
    return items


class ItemOrder(NamedTuple):
    """An order as its list item reads it: the first columns of a `_list_statement` row."""

    id: str
    code: str
    status: str
    batch_code: str | None  # None once cancelled
    batch_id: str | None
    campaign_id: str
    campaign_name: str
    industrial_name: str
    store_name: str
    store_city: str
    delivery_target: str
    created_at: str  # as `clock.iso` writes it
    updated_at: str
    reservation_id: str


# A line as its order's list item reads it: a row of `_LIST_LINES` (`order_id` is not read: the
# lines of orders of the same plan may be shared).
ItemLine = namedtuple("ItemLine", "order_id position zone_id zone_code zone_label width_mm height_mm face_index"
                                  " quantity asset_id technical_name")


def batch_items_of(orders: Iterable[tuple[ItemOrder, list[ItemLine]]]) -> list[dict]:
    """`batch_order_items` of orders their writer knows, without reading them back (a batch
    confirmation answers the orders and lines it has just written: reading them back would cost
    the database as much as writing them): the same items, by code (`PM-` and digits: the same order
    whatever the database's collation). Orders given the same list of lines (orders of the same
    plan) share their line items, made once."""
    shared: dict[int, _LineItems] = {}
    items = []
    for order, lines in sorted(orders, key=lambda pair: pair[0].code):
        line_items = shared.get(id(lines))
        if line_items is None:
            line_items = shared[id(lines)] = _line_items(list(lines))
        items.append(_batch_item(order, line_items))
    return items


def _list_statement(where: str, order: str, limit: int | None, count: str) -> str:
    """The statement of a list's page (a whole list without `limit`): its rows as `_list_item`
    reads them, then the total. A paged list's total is `count` in the same statement (the same
    snapshot as the page; a subquery, where a `COUNT(*) OVER ()` window buffered every row of the
    workload); without a limit it is the offset plus the rows read (NULL here)."""
    return _LIST_PAGE.format(
        where=where, order=order.format(t="o"), page_order=order.format(t="page"), iso=_ISO,
        total="NULL" if limit is None else f"({count.strip()})",
        orders=_PROBED if limit is not None and limit <= _PROBED_UP_TO else _JOINED)


def _list_items(where: str, order: str, params: dict, *, count: str | None = None,
                reservation: bool = False) -> tuple[list[dict], int]:
    """The items of a list and its total; `count` is the total's statement (by default every
    order `where` selects, counted)."""
    count = count or _LIST_COUNT.format(where=where)
    rows = database.execute_sql(_list_statement(where, order, params["limit"], count), params).fetchall()
    if not rows:
        total = database.execute_sql(count, params).fetchone()[0] if params["offset"] else 0
        return [], total
    lines: dict[str, list[tuple]] = {row[0]: [] for row in rows}
    for line in database.execute_sql(_LIST_LINES, (list(lines),)):
        lines[line[0]].append(line)
    if reservation:
        items = [_batch_item(row, _line_items(lines[row[0]])) for row in rows]
    else:
        items = [_list_item(row, lines[row[0]]) for row in rows]
    return items, params["offset"] + len(rows) if params["limit"] is None else rows[0][-1]


def _batch_item(row: tuple, lines: _LineItems) -> dict:
    """The list item with the reservation's id (`schemas.printing.batches.BatchOrderOut`)."""
    item = _order_item(row, lines)
    item["reservationId"] = row[13]
    return item


_POSITION = itemgetter(1)


class _LineItems(NamedTuple):
    items: list[dict]
    panels: int
    surface_mm2: int


def _list_item(row: tuple, lines: list[tuple]) -> dict:
    """The list item of an order's row and its line rows (sorted here, in place)."""
    return _order_item(row, _line_items(lines))


def _line_items(lines: list[tuple]) -> _LineItems:
    """An order's line items (its line rows sorted here, in place), with their panels and surface.
    One pass over the lines builds their items and sums the metrics of `orders.metrics_of`, so a
    whole workload's lines are walked once."""
    lines.sort(key=_POSITION)
    names = iter(entry_names_of(tuple([(line[10], line[8]) for line in lines if line[9] is not None])))
    panels = surface_mm2 = 0
    items = []
    for _, position, zone_id, zone_code, zone_label, width, height, face_index, quantity, asset_id, _ in lines:
        panels += quantity
        surface_mm2 += quantity * width * height
        items.append({"position": position, "zoneId": zone_id, "zoneCode": zone_code, "zoneLabel": zone_label,
                      "faceIndex": face_index, "quantity": quantity, "assetId": asset_id,
                      "fileName": None if asset_id is None else next(names), "widthMm": width, "heightMm": height})
    return _LineItems(items, panels, surface_mm2)


def _order_item(row: tuple, lines: _LineItems) -> dict:
    return {
        "code": row[1], "status": row[2], "batchCode": row[3], "batchId": row[4],
        "campaign": {"id": row[5], "name": row[6]}, "industrialName": row[7], "storeName": row[8], "city": row[9],
        "deliveryTarget": row[10], "filesCount": len(lines.items), "panelCount": lines.panels,
        "totalSurfaceM2": surface_m2(lines.surface_mm2), "createdAt": row[11], "updatedAt": row[12],
        "lines": lines.items,
    }


def printer_order(*, order_code: str, printer_organization_id: str) -> OrderView:
    """One order of the printer: NOT_FOUND for another organization's, a draft, or an unknown code."""
    order = _printer_orders(printer_organization_id).where(PrintOrder.code == order_code).first()
    if order is None:
        raise NotFound("print order not found")
    return with_lines([order])[0]


def printer_counters(printer_organization_id: str) -> dict[str, dict[str, int]]:
    """Orders per status: `all` counts every order (the dashboard), `isolated` the orders with no
    batch (the tab counters of `/printer/commandes`). One query, on the printer's tally."""
    rows = database.execute_sql(
        "SELECT status, SUM(orders)::bigint, (SUM(orders) FILTER (WHERE NOT in_batch))::bigint"
        " FROM print_order_tally WHERE printer_organization_id = %s AND status = ANY(%s) GROUP BY status",
        (printer_organization_id, [status.value for status in PRINTER_VISIBLE]),
    )
    counters = {"all": {s.value: 0 for s in PRINTER_VISIBLE}, "isolated": {s.value: 0 for s in PRINTER_VISIBLE}}
    for status, count, alone in rows:
        counters["all"][status], counters["isolated"][status] = count, int(alone or 0)
    counters["all"]["total"] = sum(counters["all"].values())
    counters["isolated"]["total"] = sum(counters["isolated"].values())
    return counters


def printer_workload(printer_organization_id: str, *, chunk: int = 500) -> Iterator[OrderView]:
    """Every order of the printer (batch orders included), oldest first, read `chunk` at a time
    (keyset pagination on creation time and id: the export never holds the whole workload)."""
    query = _printer_orders(printer_organization_id).order_by(PrintOrder.created_at, PrintOrder.id).limit(chunk)
    rows = list(query)
    while rows:
        yield from with_lines(rows)
        last = rows[-1]
        rows = list(query.where(Tuple(PrintOrder.created_at, PrintOrder.id) > (last.created_at, last.id)))


# --- admin -----------------------------------------------------------------------------------------

ADMIN_SORTS = {
    "createdAt": PrintOrder.created_at,
    "updatedAt": PrintOrder.updated_at,
    "code": PrintOrder.code,
    "status": PrintOrder.status,
}


def admin_orders(
    *, params: ListParams, statuses: Iterable[str] = (), printer_organization_id: str | None = None,
    industrial_organization_id: str | None = None,
) -> Page:
    """Every order but drafts (`/admin/print-orders`), server-paginated, with their lines."""
    query = order_rows().where(PrintOrder.status != PrintOrderStatus.DRAFT)
    if statuses:
        query = query.where(PrintOrder.status.in_(list(statuses)))
    if printer_organization_id:
        query = query.where(PrintOrder.printer_organization_id == printer_organization_id)
    if industrial_organization_id:
        query = query.where(PrintOrder.industrial_organization_id == industrial_organization_id)
    page = paginate(query, params, sorts=ADMIN_SORTS, default_sort="createdAt", tiebreaker=PrintOrder.id,
                    search_columns=(PrintOrder.code, Campaign.name, Industrial.legal_name, Store.name))
    return Page(with_lines(page.items), page.total, page.page, page.page_size)


def active_order_view(reservation_id: str) -> OrderView | None:
    """The reservation's latest order that is not cancelled (drafts included), with its lines."""
    order = (order_rows().where(PrintOrder.reservation_id == reservation_id,
                             PrintOrder.status != PrintOrderStatus.CANCELLED)
             .order_by(PrintOrder.created_at.desc(), PrintOrder.id.desc()).first())
    return with_lines([order])[0] if order else None


def order_by_code(order_code: str) -> OrderView:
    """Any order, for admins."""
    order = order_rows().where(PrintOrder.code == order_code).first()
    if order is None:
        raise NotFound("print order not found")
    return with_lines([order])[0]
