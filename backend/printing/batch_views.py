"""Sent batches as printers and industrials read them: lists with their counters aggregated in the
database, and the detail with its aggregated lines (what the ZIP holds) and its manifest.

A batch is resolved by code in one query filtered on the reader's organization (the printer's, or
the industrial's) and on status `sent`: a draft, or another organization's batch, is 404. The
list's `updatedAt` is the latest of the batch's and its orders' updates, so a batch moves up when
the printer works on it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from peewee import SQL, NodeList, fn

from backend.errors import NotFound
from backend.identity.models import Organization
from backend.marketplace.models import Campaign
from backend.printing.archive import AggregatedLine, ArchiveFile, aggregate_lines, entry_names
from backend.printing.batch_state import SENT, derived_status
from backend.printing.models import PrintAsset, PrintOrder, PrintOrderBatch, PrintOrderLine
from backend.printing.order_views import LineView, OrderView, order_rows, with_lines
from backend.printing.plans import formatted_address


def _of_batch():
    return PrintOrder.select().where(PrintOrder.batch_id == PrintOrderBatch.id)


def _batches():
    orders_count = _of_batch().select(fn.COUNT(PrintOrder.id))
    total_panels = (PrintOrderLine.select(fn.COALESCE(fn.SUM(PrintOrderLine.quantity), 0))
                    .join(PrintOrder).where(PrintOrder.batch_id == PrintOrderBatch.id))
    statuses = _of_batch().select(fn.ARRAY_AGG(NodeList((SQL("DISTINCT"), PrintOrder.status))))
    last_order_update = _of_batch().select(fn.MAX(PrintOrder.updated_at))
    return (
        PrintOrderBatch.select(
            PrintOrderBatch,
            Campaign.name.alias("campaign_name"),
            Organization.legal_name.alias("industrial_name"),
            orders_count.alias("orders_count"),
            total_panels.alias("total_panels"),
            statuses.alias("order_statuses"),
            fn.GREATEST(PrintOrderBatch.updated_at, last_order_update).alias("last_update"),
        )
        .join(Campaign, on=PrintOrderBatch.campaign_id == Campaign.id)
        .switch(PrintOrderBatch)
        .join(Organization, on=PrintOrderBatch.organization_id == Organization.id)
        .where(PrintOrderBatch.status == SENT)
        .order_by(fn.GREATEST(PrintOrderBatch.updated_at, last_order_update).desc(), PrintOrderBatch.id.desc())
        .objects()
    )


def status_of(batch: PrintOrderBatch) -> str:
    return derived_status(batch.order_statuses or [])


def printer_batches(printer_organization_id: str) -> list[PrintOrderBatch]:
    """The printer's sent batches, most recently updated first, not paginated (spec B): one query."""
    return list(_batches().where(PrintOrderBatch.printer_organization_id == printer_organization_id))


def campaign_batches(*, organization_id: str, campaign_id: str) -> list[PrintOrderBatch]:
    """The industrial's sent batches of a campaign."""
    return list(_batches().where(PrintOrderBatch.organization_id == organization_id,
                                 PrintOrderBatch.campaign_id == campaign_id))


@dataclass(frozen=True)
class AggregatedFile:
    line: AggregatedLine
    zone_label: str
    width_mm: int
    height_mm: int
    file_name: str
    archive_file: ArchiveFile


@dataclass(frozen=True)
class BatchView:
    batch: PrintOrderBatch
    orders: list[OrderView]  # cancelled ones included (the manifest lists them)
    files: list[AggregatedFile]

    @property
    def archive_files(self) -> list[ArchiveFile]:
        return [f.archive_file for f in self.files]

    @property
    def manifest(self) -> list[dict]:
        return manifest(self)

    def file_name(self, line: LineView) -> str | None:
        """The aggregated file of an order line (the name the batch ZIP gives its visual)."""
        return self._names.get((line.asset_id, line.zone_id))

    @property
    def _names(self) -> dict[tuple[str, str], str]:
        return {(f.line.asset_id, f.line.zone_id): f.file_name for f in self.files}


def _aggregate(orders: list[OrderView]) -> list[AggregatedFile]:
    """Spec B aggregated download: lines grouped on (asset, zone), quantities summed, by position;
    named like the ZIP entries, with the batch total in `_qte<N>`."""
    lines = [line for view in orders for line in view.lines]
    sample = {(line.asset_id, line.zone_id): line for line in lines if line.archive_file is not None}
    grouped = aggregate_lines(lines)
    files = []
    for group in grouped:
        line = sample[(group.asset_id, group.zone_id)]
        files.append(replace(line.archive_file, quantity=group.quantity, position=group.position))
    names = entry_names(files)
    return [
        AggregatedFile(group, sample[(group.asset_id, group.zone_id)].zone_label,
                       sample[(group.asset_id, group.zone_id)].width_mm,
                       sample[(group.asset_id, group.zone_id)].height_mm, name, file)
        for group, name, file in zip(grouped, names, files, strict=True)
    ]


def _detail(batch: PrintOrderBatch | None) -> BatchView:
    if batch is None:
        raise NotFound("print batch not found")
    orders = with_lines(list(order_rows().where(PrintOrder.batch_id == batch.id).order_by(PrintOrder.code)))
    return BatchView(batch, orders, _aggregate(orders))


def printer_batch(*, batch_code: str, printer_organization_id: str) -> BatchView:
    return _detail(_batches().where(PrintOrderBatch.code == batch_code,
                                    PrintOrderBatch.printer_organization_id == printer_organization_id).first())


def printer_batch_files(*, batch_code: str, printer_organization_id: str) -> list[ArchiveFile]:
    """What the printer's batch ZIP holds (`printer_batch(...).archive_files`) in two statements,
    the lines aggregated by the database: a large batch's views are not built to download it."""
    batch_id = (PrintOrderBatch.select(PrintOrderBatch.id)
                .where(PrintOrderBatch.code == batch_code, PrintOrderBatch.status == SENT,
                       PrintOrderBatch.printer_organization_id == printer_organization_id).scalar())
    if batch_id is None:
        raise NotFound("print batch not found")
    rows = (PrintOrderLine
            .select(PrintOrderLine.asset_id, PrintOrderLine.zone_id, fn.SUM(PrintOrderLine.quantity),
                    fn.MIN(PrintOrderLine.position), PrintAsset.technical_name, PrintAsset.storage_key,
                    PrintAsset.size_bytes, PrintAsset.crc32)
            .join(PrintOrder).switch(PrintOrderLine)
            .join(PrintAsset, on=PrintOrderLine.asset_id == PrintAsset.id)
            .where(PrintOrder.batch_id == batch_id)
            .group_by(PrintOrderLine.asset_id, PrintOrderLine.zone_id, PrintAsset.id)
            .tuples())
    files, lines = {}, []
    for asset_id, zone_id, quantity, position, technical_name, storage_key, size, crc32 in rows:
        lines.append(AggregatedLine(asset_id, zone_id, quantity, position))
        files[asset_id] = ArchiveFile(technical_name, quantity, position, storage_key, size, crc32)
    return [replace(files[group.asset_id], quantity=group.quantity, position=group.position)
            for group in aggregate_lines(lines)]


def industrial_batch_view(*, batch_code: str, organization_id: str) -> BatchView:
    return _detail(_batches().where(PrintOrderBatch.code == batch_code,
                                    PrintOrderBatch.organization_id == organization_id).first())


def manifest(view: BatchView) -> list[dict]:
    """One entry per order (cancelled ones included): recipient, address, panels, and the quantity
    to take from each aggregated file."""
    entries = []
    for order_view in view.orders:
        order = order_view.order
        per_file: dict[str, int] = {}
        for line in order_view.lines:
            name = view.file_name(line)
            if name is not None:
                per_file[name] = per_file.get(name, 0) + line.quantity
        entries.append({
            "code": order.code, "status": order.status, "storeName": order.store_name,
            "recipient": order.recipient_name, "address": formatted_address(order),
            "panels": order_view.metrics.panel_count,
            "files": [{"fileName": name, "quantity": quantity} for name, quantity in per_file.items()],
        })
    return entries
