"""Storage contract, run against the local-disk backend and the GCS backend on gcp-storage-emulator."""

import hashlib
import io
import os

import pytest

from storage import ObjectNotFound, StorageError
from storage.base import TooLarge
from storage.local import LocalStorage


@pytest.fixture(scope="module")
def gcs_emulator():
    import socket

    from gcp_storage_emulator.server import create_server

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = create_server("127.0.0.1", port, in_memory=True, default_bucket="vitrine-test")
    server.start()
    yield f"http://127.0.0.1:{port}"
    server.stop()


@pytest.fixture(params=["local", "gcs"])
def store(request, tmp_path):
    if request.param == "local":
        return LocalStorage(tmp_path / "storage")
    from storage.gcs import GcsStorage

    return GcsStorage("vitrine-test", emulator_host=request.getfixturevalue("gcs_emulator"))


def test_bytes_round_trip_with_size_and_checksum(store):
    data = b"%PDF-1.7 facture"
    stored = store.put_bytes("billing-invoice-pdf", "billing/invoices/FAC-RES-2026-000001.pdf", data, "application/pdf")
    assert stored.size == len(data) and stored.sha256 == hashlib.sha256(data).hexdigest()
    assert store.exists("billing-invoice-pdf", "billing/invoices/FAC-RES-2026-000001.pdf")
    assert store.read_bytes("billing-invoice-pdf", "billing/invoices/FAC-RES-2026-000001.pdf") == data
    assert store.size("billing-invoice-pdf", "billing/invoices/FAC-RES-2026-000001.pdf") == len(data)


def test_streams_are_copied_in_chunks_and_read_back_in_chunks(store):
    data = os.urandom(9 * 1024 * 1024 + 17)  # more than one upload chunk
    stored = store.put_stream("print-assets", "org/asset.bin", io.BytesIO(data), "application/octet-stream")
    assert stored.size == len(data)
    chunks = list(store.open("print-assets", "org/asset.bin"))
    assert len(chunks) > 1 and b"".join(chunks) == data


def test_writing_again_replaces_the_object(store):
    store.put_bytes("ctx", "k.txt", b"first", "text/plain")
    store.put_bytes("ctx", "k.txt", b"second", "text/plain")
    assert store.read_bytes("ctx", "k.txt") == b"second"


def test_a_stream_over_the_limit_is_refused_and_leaves_nothing(store):
    with pytest.raises(TooLarge):
        store.put_stream("print-assets", "too/big.bin", io.BytesIO(b"x" * 2048), "application/octet-stream",
                         max_bytes=1024)
    assert not store.exists("print-assets", "too/big.bin")


def test_missing_objects(store):
    assert not store.exists("ctx", "missing.pdf")
    with pytest.raises(ObjectNotFound):
        b"".join(store.open("ctx", "missing.pdf"))
    assert store.delete("ctx", "missing.pdf") is False


def test_delete(store):
    store.put_bytes("ctx", "gone.txt", b"x", "text/plain")
    assert store.delete("ctx", "gone.txt") is True
    assert not store.exists("ctx", "gone.txt")


@pytest.mark.parametrize(
    "context,key",
    [("ctx", "../escape"), ("ctx", "/abs"), ("ctx", "a//b"), ("../ctx", "k"), ("CTX", "k"), ("ctx", "a b")],
)
def test_keys_that_could_escape_their_context_are_refused(store, context, key):
    with pytest.raises(StorageError):
        store.put_bytes(context, key, b"x", "text/plain")


def test_local_files_stay_under_the_root(tmp_path):
    store = LocalStorage(tmp_path / "root")
    store.put_bytes("billing-invoice-pdf", "a/b.pdf", b"x", "application/pdf")
    assert (tmp_path / "root" / "billing-invoice-pdf" / "a" / "b.pdf").read_bytes() == b"x"
    assert not [p for p in (tmp_path / "root").rglob(".upload-*")]


def test_build_storage_picks_the_backend(config, gcs_emulator):
    from dataclasses import replace

    from storage import build_storage
    from storage.gcs import GcsStorage

    assert isinstance(build_storage(config), LocalStorage)
    gcs = build_storage(replace(config, storage_backend="gcs", gcs_bucket="vitrine-test",
                                storage_emulator_host=gcs_emulator))
    assert isinstance(gcs, GcsStorage)
