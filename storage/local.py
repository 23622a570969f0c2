"""Local-disk storage under the data directory: written to a temporary file, then renamed, so a
reader never sees half an object."""

from __future__ import annotations

import hashlib
import os
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from storage.base import CHUNK_SIZE, ObjectNotFound, Storage, StoredObject, TooLarge, check_location


class LocalStorage(Storage):
    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def _path(self, context: str, key: str) -> Path:
        check_location(context, key)
        return self.root / context / key

    def put_stream(self, context, key, stream: BinaryIO, content_type, *, max_bytes=None) -> StoredObject:
        path = self._path(context, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        digest, size, crc = hashlib.sha256(), 0, 0
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".upload-")
        try:
            with os.fdopen(fd, "wb") as out:
                while chunk := stream.read(CHUNK_SIZE):
                    size += len(chunk)
                    if max_bytes is not None and size > max_bytes:
                        raise TooLarge(max_bytes)
                    digest.update(chunk)
                    crc = zlib.crc32(chunk, crc)
                    out.write(chunk)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return StoredObject(context, key, size, digest.hexdigest(), content_type, crc)

    def open(self, context, key) -> Iterator[bytes]:
        path = self._path(context, key)
        try:
            handle = path.open("rb")
        except FileNotFoundError:
            raise ObjectNotFound(f"{context}/{key}") from None
        return _chunks(handle)

    def exists(self, context, key) -> bool:
        return self._path(context, key).is_file()

    def delete(self, context, key) -> bool:
        try:
            self._path(context, key).unlink()
        except FileNotFoundError:
            return False
        return True

    def size(self, context, key) -> int:
        try:
            return self._path(context, key).stat().st_size
        except FileNotFoundError:
            raise ObjectNotFound(f"{context}/{key}") from None


def _chunks(handle: BinaryIO) -> Iterator[bytes]:
    with handle:
        while chunk := handle.read(CHUNK_SIZE):
            yield chunk
