"""Download archives of print orders and batches: entry names, aggregation, and the ZIP stream.

An archive holds one entry per line (order) or per aggregated visual (batch), in position
order, named `<technical name>_qte<N>.<ext>` where N is the quantity to print. Entries are
stored as they are (ZIP_STORED: PDFs, PNGs, JPEGs and TIFFs are already compressed or gain
little), which also lets the archive's exact length be known before the first byte is sent, so
the download carries a Content-Length. Blobs are read chunk by chunk from object storage while
the client downloads: neither the archive nor any entry is ever whole in memory or on disk.

The CRC-32 each entry header carries is the visual's, computed while it was uploaded and kept with
its size (`print_asset.crc32`), so the bytes are copied through once (`stored_zip`). A visual
uploaded before the CRC was kept has it computed at its first download (one more read of the
blob, before the archive starts) and recorded for the next ones.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Protocol

from backend import clock
from backend.errors import NotFound
from backend.printing.files import PRINT_ASSETS_CONTEXT, split_extension
from backend.printing.models import PrintAsset
from backend.printing.stored_zip import Entry, StoredZip
from storage import Storage


class PrintLine(Protocol):
    """What aggregation reads of a print order line (a model row or any equivalent)."""

    asset_id: str | None
    zone_id: str
    quantity: int
    position: int


@dataclass(frozen=True)
class AggregatedLine:
    """One distinct visual of a batch: (asset, zone) with the total quantity of its lines."""

    asset_id: str
    zone_id: str
    quantity: int
    position: int  # the smallest position among the grouped lines


def aggregate_lines(lines: Iterable[PrintLine]) -> list[AggregatedLine]:
    """Spec B, aggregated download rule 1: lines grouped on (assetId, zoneId), quantities summed,
    lines without assetId ignored, sorted by position.

    Positions restart in every order, so groups tie often; the tie is broken on (zone, asset)
    to keep the order identical between independent reads whatever order the lines came in.
    """
    groups: dict[tuple[str, str], AggregatedLine] = {}
    for line in lines:
        if line.asset_id is None:
            continue
        key = (line.asset_id, line.zone_id)
        seen = groups.get(key)
        if seen is None:
            groups[key] = AggregatedLine(line.asset_id, line.zone_id, line.quantity, line.position)
        else:
            groups[key] = AggregatedLine(
                line.asset_id, line.zone_id, seen.quantity + line.quantity, min(seen.position, line.position)
            )
    return sorted(groups.values(), key=lambda g: (g.position, g.zone_id, g.asset_id))


@dataclass(frozen=True)
class ArchiveFile:
    """One entry to put in an archive: a stored visual and the quantity its name announces."""

    technical_name: str
    quantity: int
    position: int
    storage_key: str
    size: int
    crc32: int | None = None  # None: not known yet (a visual uploaded before it was kept)


def entry_names(files: list[ArchiveFile]) -> list[str]:
    """The entry name of each file, in the given order (`entry_names_of` its names and quantities)."""
    return list(entry_names_of(tuple((file.technical_name, file.quantity) for file in files)))


@functools.lru_cache(maxsize=1024)
def entry_names_of(files: tuple[tuple[str, int], ...]) -> tuple[str, ...]:
    """The entry name of each (technical name, quantity), in the given order; cached, since the
    orders of a batch name the same files alike (a long list of orders names a few distinct sets).

    Twins (identical technical names, compared without case since archives are unpacked on
    case-insensitive file systems too): the first keeps the base name, the second gets `_2`,
    the third `_3`, before the quantity suffix: `visuel_qte4.pdf`, `visuel_2_qte1.pdf`. A
    numbered name that another file already owns moves on to the next free number.
    """
    occurrences: dict[str, int] = {}
    taken: set[str] = set()
    names: list[str] = []
    for technical_name, quantity in files:
        stem, extension = split_extension(technical_name)
        folded = technical_name.casefold()
        number = occurrences.get(folded, 0) + 1
        while True:
            base = stem if number == 1 else f"{stem}_{number}"
            name = f"{base}_qte{quantity}{extension}"
            if name.casefold() not in taken:
                break
            number += 1
        occurrences[folded] = number
        taken.add(name.casefold())
        names.append(name)
    return tuple(names)


@dataclass(frozen=True)
class Archive:
    """A ZIP ready to stream: `chunks` for `resp.stream`, its exact `content_length`, the name to
    offer in Content-Disposition."""

    filename: str
    content_length: int
    chunks: Iterator[bytes]

    content_type = "application/zip"


def _blob_chunks(storage: Storage, key: str) -> Callable[[], Iterator[bytes]]:
    # Opened only when the archive reaches this entry: one blob open at a time, however many.
    return lambda: storage.open(PRINT_ASSETS_CONTEXT, key)


def with_checksum(storage: Storage, file: ArchiveFile) -> ArchiveFile:
    """`file` with its CRC-32: the recorded one, or read from its blob once and recorded."""
    if file.crc32 is not None:
        return file
    crc = 0
    for chunk in storage.open(PRINT_ASSETS_CONTEXT, file.storage_key):
        crc = zlib.crc32(chunk, crc)
    PrintAsset.update(crc32=crc).where(PrintAsset.storage_key == file.storage_key,
                                       PrintAsset.crc32.is_null()).execute()
    return replace(file, crc32=crc)


def stream_archive(storage: Storage, files: list[ArchiveFile], *, filename: str) -> Archive:
    """The archive of `files` sorted by position; NOT_FOUND when there is no file to download."""
    if not files:
        raise NotFound("no downloadable file")
    ordered = [with_checksum(storage, file) for file in sorted(files, key=lambda f: f.position)]
    archive = StoredZip([Entry(name, file.size, file.crc32, _blob_chunks(storage, file.storage_key))
                         for name, file in zip(entry_names(ordered), ordered, strict=True)], modified=clock.now())
    return Archive(filename=filename, content_length=len(archive), chunks=iter(archive))
