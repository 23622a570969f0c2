"""The storage interface every backend implements."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

CHUNK_SIZE = 1024 * 1024
_CONTEXT = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
_KEY_PART = re.compile(r"^[A-Za-z0-9._-]+$")


class StorageError(Exception):
    pass


class ObjectNotFound(StorageError):
    pass


@dataclass(frozen=True)
class StoredObject:
    context: str
    key: str
    size: int
    sha256: str
    content_type: str
    crc32: int  # of the bytes, as ZIP entries carry it: computed while they stream through


def check_location(context: str, key: str) -> None:
    """Refuse contexts and keys that could escape their folder (`..`, absolute paths, odd bytes)."""
    if not _CONTEXT.match(context):
        raise StorageError(f"invalid storage context {context!r}")
    parts = key.split("/")
    if not key or any(part in ("", ".", "..") or not _KEY_PART.match(part) for part in parts):
        raise StorageError(f"invalid storage key {key!r}")


class Storage(ABC):
    """Blobs by (context, key). Writes replace the previous object (idempotent regeneration)."""

    def put_bytes(self, context: str, key: str, data: bytes, content_type: str) -> StoredObject:
        import io

        return self.put_stream(context, key, io.BytesIO(data), content_type)

    @abstractmethod
    def put_stream(
        self, context: str, key: str, stream: BinaryIO, content_type: str, *, max_bytes: int | None = None
    ) -> StoredObject:
        """Copy `stream` in chunks (never whole in memory); StorageError past `max_bytes`."""

    @abstractmethod
    def open(self, context: str, key: str) -> Iterator[bytes]:
        """The object's bytes in chunks; ObjectNotFound when absent."""

    @abstractmethod
    def exists(self, context: str, key: str) -> bool: ...

    @abstractmethod
    def delete(self, context: str, key: str) -> bool:
        """Remove the object; False when it was not there."""

    @abstractmethod
    def size(self, context: str, key: str) -> int: ...

    def read_bytes(self, context: str, key: str) -> bytes:
        return b"".join(self.open(context, key))


class TooLarge(StorageError):
    def __init__(self, max_bytes: int) -> None:
        super().__init__(f"object exceeds {max_bytes} bytes")
        self.max_bytes = max_bytes
