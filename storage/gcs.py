"""Google Cloud Storage backend (`STORAGE_BACKEND=gcs`, `GCS_BUCKET`); honours
`STORAGE_EMULATOR_HOST` (anonymous credentials against the emulator)."""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Iterator
from typing import BinaryIO

from google.api_core import exceptions as gexc
from google.auth.credentials import AnonymousCredentials
from google.cloud import storage as gcs

from storage.base import CHUNK_SIZE, ObjectNotFound, Storage, StoredObject, TooLarge, check_location

UPLOAD_CHUNK = 8 * 1024 * 1024  # a multiple of 256 KiB, as resumable uploads require


class _Metered:
    """A read-only stream that hashes what passes (SHA-256, CRC-32) and stops past `max_bytes`."""

    def __init__(self, stream: BinaryIO, max_bytes: int | None) -> None:
        self.stream, self.max_bytes = stream, max_bytes
        self.digest, self.size, self.crc32 = hashlib.sha256(), 0, 0

    def read(self, n: int = -1) -> bytes:
        chunk = self.stream.read(n)
        self.size += len(chunk)
        if self.max_bytes is not None and self.size > self.max_bytes:
            raise TooLarge(self.max_bytes)
        self.digest.update(chunk)
        self.crc32 = zlib.crc32(chunk, self.crc32)
        return chunk

    def tell(self) -> int:
        return self.size


class GcsStorage(Storage):
    def __init__(self, bucket: str, *, emulator_host: str | None = None, project: str | None = None) -> None:
        if emulator_host:
            client = gcs.Client(
                project=project or "vitrine-local",
                credentials=AnonymousCredentials(),
                client_options={"api_endpoint": emulator_host if "://" in emulator_host else f"http://{emulator_host}"},
            )
        else:
            client = gcs.Client(project=project)
        self.client = client
        self.bucket = client.bucket(bucket)

    def _blob(self, context: str, key: str, *, chunked: bool = False):
        check_location(context, key)
        return self.bucket.blob(f"{context}/{key}", chunk_size=UPLOAD_CHUNK if chunked else None)

    def put_stream(self, context, key, stream: BinaryIO, content_type, *, max_bytes=None) -> StoredObject:
        blob = self._blob(context, key, chunked=True)
        metered = _Metered(stream, max_bytes)
        blob.upload_from_file(metered, content_type=content_type, rewind=False)
        return StoredObject(context, key, metered.size, metered.digest.hexdigest(), content_type, metered.crc32)

    def open(self, context, key) -> Iterator[bytes]:
        blob = self._blob(context, key)
        try:
            reader = blob.open("rb", chunk_size=CHUNK_SIZE)
        except gexc.NotFound:
            raise ObjectNotFound(f"{context}/{key}") from None
        return _chunks(reader, f"{context}/{key}")

    def exists(self, context, key) -> bool:
        return self._blob(context, key).exists()

    def delete(self, context, key) -> bool:
        try:
            self._blob(context, key).delete()
        except gexc.NotFound:
            return False
        return True

    def size(self, context, key) -> int:
        check_location(context, key)
        blob = self.bucket.get_blob(f"{context}/{key}")
        if blob is None:
            raise ObjectNotFound(f"{context}/{key}")
        return blob.size


def _chunks(reader, name: str) -> Iterator[bytes]:
    try:
        with reader:
            while chunk := reader.read(CHUNK_SIZE):
                yield chunk
    except gexc.NotFound:
        raise ObjectNotFound(name) from None
