"""Object storage: one interface, a local-disk backend and a Google Cloud Storage backend.

Keys live in private contexts (`billing-invoice-pdf`, `print-assets`, ...): a context is a
top-level folder (local) or prefix (GCS); nothing is ever public. `build_storage(config)` picks
the backend from `STORAGE_BACKEND`.
"""

from __future__ import annotations

from storage.base import ObjectNotFound, Storage, StorageError, StoredObject


def build_storage(config) -> Storage:
    if config.storage_backend == "gcs":
        from storage.gcs import GcsStorage

        return GcsStorage(config.gcs_bucket, emulator_host=config.storage_emulator_host)
    from storage.local import LocalStorage

    return LocalStorage(config.data_dir / "storage")


__all__ = ["ObjectNotFound", "Storage", "StorageError", "StoredObject", "build_storage"]
