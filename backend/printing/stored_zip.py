"""A ZIP archive of stored (uncompressed) entries whose sizes and CRC-32 are known before the first
byte is written: each local header carries them, so the entries' bytes are copied through as they
come, never read twice, and the archive's exact length is known beforehand (a Content-Length).

The format is APPNOTE.TXT (PKWARE) 6.3: local file header, data, then the central directory and
its end record. An entry or offset past 4 GiB - 1 takes the ZIP64 extra field (sizes in the local
header and the central directory, the offset in the latter), and an archive past those limits the
ZIP64 end record and locator. Names are written in UTF-8 (flag bit 11 when not ASCII).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime

ZIP64_LIMIT = 0xFFFFFFFF  # sizes and offsets at or past it go to the ZIP64 fields
_MAX_ENTRIES = 0xFFFF
_UTF8_NAME = 0x0800
_STORED = 0
_VERSION_DEFAULT, _VERSION_ZIP64 = 20, 45
_MADE_BY_UNIX = 3 << 8
_FILE_MODE = 0o100644 << 16  # a regular file, rw-r--r--


@dataclass(frozen=True)
class Entry:
    name: str
    size: int
    crc32: int
    chunks: Callable[[], Iterable[bytes]]  # called when the archive reaches the entry


def _dos_time(moment: datetime) -> tuple[int, int]:
    year = min(max(moment.year, 1980), 2107)
    date = (year - 1980) << 9 | moment.month << 5 | moment.day
    time = moment.hour << 11 | moment.minute << 5 | moment.second // 2
    return time, date


def _encoded(name: str) -> tuple[bytes, int]:
    try:
        return name.encode("ascii"), 0
    except UnicodeEncodeError:
        return name.encode("utf-8"), _UTF8_NAME


def _local_header(entry: Entry, name: bytes, flags: int, stamp: tuple[int, int], limit: int) -> bytes:
    zip64 = entry.size >= limit
    extra = struct.pack("<HHQQ", 0x0001, 16, entry.size, entry.size) if zip64 else b""
    size = 0xFFFFFFFF if zip64 else entry.size
    return struct.pack(
        "<IHHHHHIIIHH", 0x04034B50, _VERSION_ZIP64 if zip64 else _VERSION_DEFAULT, flags, _STORED, *stamp,
        entry.crc32, size, size, len(name), len(extra),
    ) + name + extra


def _central_header(entry: Entry, name: bytes, flags: int, stamp: tuple[int, int], offset: int, limit: int) -> bytes:
    big_size, big_offset = entry.size >= limit, offset >= limit
    fields = ([entry.size, entry.size] if big_size else []) + ([offset] if big_offset else [])
    extra = struct.pack(f"<HH{len(fields)}Q", 0x0001, 8 * len(fields), *fields) if fields else b""
    version = _VERSION_ZIP64 if fields else _VERSION_DEFAULT
    size = 0xFFFFFFFF if big_size else entry.size
    return struct.pack(
        "<IHHHHHHIIIHHHHHII", 0x02014B50, _MADE_BY_UNIX | version, version, flags, _STORED, *stamp, entry.crc32,
        size, size, len(name), len(extra), 0, 0, 0, _FILE_MODE, 0xFFFFFFFF if big_offset else offset,
    ) + name + extra


def _end_records(count: int, directory_size: int, directory_offset: int, limit: int) -> bytes:
    records = b""
    if count >= _MAX_ENTRIES or directory_size >= limit or directory_offset >= limit:
        zip64_end_offset = directory_offset + directory_size
        records += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, _MADE_BY_UNIX | _VERSION_ZIP64, _VERSION_ZIP64, 0, 0,
                               count, count, directory_size, directory_offset)
        records += struct.pack("<IIQI", 0x07064B50, 0, zip64_end_offset, 1)
    return records + struct.pack(
        "<IHHHHIIH", 0x06054B50, 0, 0, min(count, _MAX_ENTRIES), min(count, _MAX_ENTRIES),
        min(directory_size, 0xFFFFFFFF), min(directory_offset, 0xFFFFFFFF), 0,
    )


class StoredZip:
    """`len()` is the archive's exact length; iterating yields its bytes (each entry's chunks as
    they come, between headers computed up front). `limit` is where ZIP64 starts (tests lower it)."""

    def __init__(self, entries: list[Entry], *, modified: datetime, limit: int = ZIP64_LIMIT) -> None:
        stamp = _dos_time(modified)
        self._parts: list[tuple[bytes, Entry | None]] = []
        directory, offset = [], 0
        for entry in entries:
            name, flags = _encoded(entry.name)
            header = _local_header(entry, name, flags, stamp, limit)
            directory.append(_central_header(entry, name, flags, stamp, offset, limit))
            self._parts.append((header, entry))
            offset += len(header) + entry.size
        central = b"".join(directory)
        self._parts.append((central + _end_records(len(entries), len(central), offset, limit), None))
        self._length = offset + len(self._parts[-1][0])

    def __len__(self) -> int:
        return self._length

    def __iter__(self) -> Iterator[bytes]:
        for header, entry in self._parts:
            yield header
            if entry is not None:
                yield from _exactly(entry)


def _exactly(entry: Entry) -> Iterator[bytes]:
    """The entry's chunks, refused when they do not add up to its declared size: the headers and the
    Content-Length already announced it, so a changed blob must break the download, not corrupt it."""
    written = 0
    for chunk in entry.chunks():
        written += len(chunk)
        if written > entry.size:
            break
        yield chunk
    if written != entry.size:
        raise ValueError(f"ZIP entry {entry.name!r}: {written} bytes where {entry.size} were announced")
