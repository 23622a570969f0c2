"""ZIP downloads write the CRC-32 kept with each visual: computed while it was uploaded, so a
download copies the bytes through once; a visual uploaded before the CRC was kept has it computed
at its first download and recorded. The archive writer (`stored_zip`) read back with `zipfile`,
ZIP64 fields included."""

import io
import zipfile
import zlib
from datetime import UTC, datetime

import pytest

from backend.printing.archive import ArchiveFile, stream_archive
from backend.printing.files import PRINT_ASSETS_CONTEXT
from backend.printing.models import PrintAsset
from backend.printing.stored_zip import Entry, StoredZip
from tests.printing.helpers import upload
from tests.printing.test_print_assets_http import PDF
from tests.printing.test_printer_http import BASE, released  # noqa: F401 (a fixture)

MOMENT = datetime(2026, 11, 24, 1, 30, 12, tzinfo=UTC)


def _entry(name: str, data: bytes) -> Entry:
    return Entry(name, len(data), zlib.crc32(data), lambda: iter([data[:7], data[7:]]))


def _read(archive) -> zipfile.ZipFile:
    data = b"".join(archive)
    assert len(data) == len(archive)
    return zipfile.ZipFile(io.BytesIO(data))


@pytest.mark.parametrize("limit", [0xFFFFFFFF, 64, 1])
def test_the_archive_reads_back_with_and_without_zip64_fields(limit):
    blobs = {"affiche_qte2.pdf": b"%PDF-1.7 " + bytes(range(256)) * 3, "vide_qte1.pdf": b"",
             "Été_qte1.png": b"\x89PNG\r\n\x1a\n" * 20}
    archive = StoredZip([_entry(name, data) for name, data in blobs.items()], modified=MOMENT, limit=limit)
    with _read(archive) as zf:
        assert zf.testzip() is None
        assert zf.namelist() == list(blobs)
        assert all(zf.read(name) == data for name, data in blobs.items())
        assert {info.compress_type for info in zf.infolist()} == {zipfile.ZIP_STORED}
        assert zf.infolist()[0].date_time == (2026, 11, 24, 1, 30, 12)


def test_a_blob_that_no_longer_matches_its_announced_size_breaks_the_download():
    for actual in (b"%PDF short", b"%PDF-1.7 a longer blob than announced"):
        archive = StoredZip([Entry("a_qte1.pdf", 20, 0, lambda actual=actual: iter([actual]))], modified=MOMENT)
        with pytest.raises(ValueError, match="announced"):
            b"".join(archive)


class CountingStorage:
    """The test storage, counting the reads of each blob."""

    def __init__(self, storage) -> None:
        self.storage, self.reads = storage, {}

    def open(self, context, key):
        self.reads[key] = self.reads.get(key, 0) + 1
        return self.storage.open(context, key)


def test_a_known_checksum_means_each_blob_is_read_once(storage):
    data = b"%PDF-1.7 " * 1000
    stored = storage.put_bytes(PRINT_ASSETS_CONTEXT, "org/a", data, "application/pdf")
    assert stored.crc32 == zlib.crc32(data) and stored.size == len(data)
    counting = CountingStorage(storage)
    archive = stream_archive(counting, [ArchiveFile("a.pdf", 2, 0, "org/a", stored.size, stored.crc32)],
                             filename="a.zip")
    assert counting.reads == {}  # nothing read before the download
    with zipfile.ZipFile(io.BytesIO(b"".join(archive.chunks))) as zf:
        assert zf.testzip() is None and zf.read("a_qte2.pdf") == data
    assert counting.reads == {"org/a": 1}


def test_an_upload_keeps_the_crc32_of_its_bytes(client, member):
    asset_id = upload(client, member)
    asset = PrintAsset.get_by_id(asset_id)
    assert asset.crc32 == zlib.crc32(PDF) and asset.size_bytes == len(PDF)


def test_a_visual_without_a_recorded_checksum_gets_it_at_its_first_download(client, printer, released):  # noqa: F811
    code = released(content=PDF)
    PrintAsset.update(crc32=None).execute()  # as visuals uploaded before migration 064
    resp = client.simulate_get(f"{BASE}/{code}/download", headers=printer)
    assert resp.status_code == 200 and int(resp.headers["content-length"]) == len(resp.content)
    with zipfile.ZipFile(io.BytesIO(resp.content)) as zf:
        assert zf.testzip() is None and all(zf.read(name) == PDF for name in zf.namelist())
    assert [a.crc32 for a in PrintAsset.select()] == [zlib.crc32(PDF)]
    again = client.simulate_get(f"{BASE}/{code}/download", headers=printer)
    with zipfile.ZipFile(io.BytesIO(again.content)) as zf:
        assert {info.CRC for info in zf.infolist()} == {zlib.crc32(PDF)} and zf.testzip() is None
