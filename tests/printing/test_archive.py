"""Archive entry names, batch aggregation, and the streamed ZIP read back with `zipfile`."""

import hashlib
import io
import os
import random
import tracemalloc
import zipfile
from dataclasses import dataclass

import falcon
import falcon.testing
import pytest

from backend.errors import NotFound
from backend.printing.archive import AggregatedLine, ArchiveFile, aggregate_lines, entry_names, stream_archive
from backend.printing.files import PRINT_ASSETS_CONTEXT


@dataclass
class Line:
    asset_id: str | None
    zone_id: str
    quantity: int
    position: int


def file(name, quantity=1, position=0, key="k", size=0):
    return ArchiveFile(technical_name=name, quantity=quantity, position=position, storage_key=key, size=size)


def put(storage, key, data):
    storage.put_bytes(PRINT_ASSETS_CONTEXT, key, data, "application/octet-stream")
    return len(data)


def read_back(archive) -> zipfile.ZipFile:
    data = b"".join(archive.chunks)
    assert len(data) == archive.content_length
    return zipfile.ZipFile(io.BytesIO(data))


# --- names -----------------------------------------------------------------------------------


def test_names_carry_the_quantity_suffix():
    assert entry_names([file("visuel.pdf", 4), file("dos.png", 1)]) == ["visuel_qte4.pdf", "dos_qte1.png"]


def test_twins_first_keeps_the_base_name_then_2_then_3():
    names = entry_names([file("visuel.pdf", 2), file("visuel.pdf", 1), file("visuel.pdf", 2), file("autre.pdf", 1)])
    assert names == ["visuel_qte2.pdf", "visuel_2_qte1.pdf", "visuel_3_qte2.pdf", "autre_qte1.pdf"]


def test_twins_are_detected_without_case():
    assert entry_names([file("Visuel.pdf"), file("visuel.pdf")]) == ["Visuel_qte1.pdf", "visuel_2_qte1.pdf"]


def test_a_numbered_name_owned_by_another_file_moves_to_the_next_number():
    names = entry_names([file("a_2.pdf"), file("a.pdf"), file("a.pdf")])
    assert names == ["a_2_qte1.pdf", "a_qte1.pdf", "a_3_qte1.pdf"]
    assert len({n.casefold() for n in names}) == 3


def test_a_name_without_extension_still_gets_its_suffix():
    assert entry_names([file("plain", 3)]) == ["plain_qte3"]


# --- aggregation -----------------------------------------------------------------------------


def test_lines_are_grouped_on_asset_and_zone_summing_quantity():
    lines = [
        Line("asset-a", "zone-1", 2, 0),
        Line("asset-a", "zone-1", 2, 0),
        Line("asset-a", "zone-2", 1, 1),
        Line("asset-b", "zone-1", 1, 2),
        Line("asset-a", "zone-1", 2, 0),
    ]
    assert aggregate_lines(lines) == [
        AggregatedLine("asset-a", "zone-1", 6, 0),
        AggregatedLine("asset-a", "zone-2", 1, 1),
        AggregatedLine("asset-b", "zone-1", 1, 2),
    ]


def test_lines_without_asset_are_ignored():
    lines = [Line(None, "zone-1", 5, 0), Line("asset-a", "zone-1", 1, 1), Line(None, "zone-2", 3, 2)]
    assert aggregate_lines(lines) == [AggregatedLine("asset-a", "zone-1", 1, 1)]
    assert aggregate_lines([Line(None, "zone-1", 5, 0)]) == []


def test_a_group_takes_the_smallest_position_of_its_lines():
    lines = [Line("asset-a", "zone-1", 1, 3), Line("asset-b", "zone-1", 1, 2), Line("asset-a", "zone-1", 1, 1)]
    assert [(g.asset_id, g.position) for g in aggregate_lines(lines)] == [("asset-a", 1), ("asset-b", 2)]


def test_aggregation_order_is_the_same_whatever_order_the_lines_come_in():
    lines = [Line(f"asset-{i % 4}", f"zone-{i % 3}", 1 + i % 2, i % 5) for i in range(60)]
    expected = aggregate_lines(lines)
    for seed in range(5):
        shuffled = lines[:]
        random.Random(seed).shuffle(shuffled)
        assert aggregate_lines(shuffled) == expected
    assert sum(g.quantity for g in expected) == sum(line.quantity for line in lines)


# --- streaming -------------------------------------------------------------------------------


def test_the_archive_holds_every_file_with_its_name_size_and_content(storage):
    blobs = {"org/a": b"%PDF-1.7 front" * 100, "org/b": b"\x89PNG\r\n\x1a\n back", "org/c": b"%PDF-1.7 other"}
    files = [
        ArchiveFile("visuel.pdf", 3, 2, "org/c", put(storage, "org/c", blobs["org/c"])),
        ArchiveFile("visuel.pdf", 4, 0, "org/a", put(storage, "org/a", blobs["org/a"])),
        ArchiveFile("dos.png", 1, 1, "org/b", put(storage, "org/b", blobs["org/b"])),
    ]
    archive = stream_archive(storage, files, filename="PM-0001.zip")
    assert archive.filename == "PM-0001.zip" and archive.content_type == "application/zip"
    with read_back(archive) as zf:
        assert zf.testzip() is None
        infos = zf.infolist()
        assert [i.filename for i in infos] == ["visuel_qte4.pdf", "dos_qte1.png", "visuel_2_qte3.pdf"]
        assert [i.compress_type for i in infos] == [zipfile.ZIP_STORED] * 3
        assert [i.file_size for i in infos] == [len(blobs[k]) for k in ("org/a", "org/b", "org/c")]
        assert zf.read("visuel_qte4.pdf") == blobs["org/a"]
        assert zf.read("dos_qte1.png") == blobs["org/b"]
        assert zf.read("visuel_2_qte3.pdf") == blobs["org/c"]


def test_two_reads_give_the_same_entries_in_the_same_order(storage):
    size = put(storage, "org/x", b"%PDF-1.7 x")
    files = [ArchiveFile(f"v{i % 2}.pdf", i + 1, i, "org/x", size) for i in range(6)]
    first = read_back(stream_archive(storage, files, filename="a.zip")).namelist()
    second = read_back(stream_archive(storage, list(reversed(files)), filename="a.zip")).namelist()
    assert first == second == ["v0_qte1.pdf", "v1_qte2.pdf", "v0_2_qte3.pdf", "v1_2_qte4.pdf", "v0_3_qte5.pdf",
                               "v1_3_qte6.pdf"]


def test_no_file_means_not_found(storage):
    with pytest.raises(NotFound):
        stream_archive(storage, [], filename="PM-0001.zip")


def test_a_blob_is_opened_only_when_the_archive_reaches_it(storage):
    size = put(storage, "org/present", b"%PDF-1.7 here")
    archive = stream_archive(storage, [ArchiveFile("a.pdf", 1, 0, "org/present", size)], filename="a.zip")
    storage.delete(PRINT_ASSETS_CONTEXT, "org/present")  # nothing was read at build time
    with pytest.raises(Exception, match="org/present"):
        b"".join(archive.chunks)


def test_streaming_a_large_object_keeps_memory_bounded(storage):
    size = 50 * 1024 * 1024
    block = os.urandom(1024 * 1024)
    digest = hashlib.sha256()

    class Source:
        def __init__(self):
            self.left = size

        def read(self, n=-1):
            if not self.left:
                return b""
            self.left -= len(block)
            digest.update(block)
            return block

    storage.put_stream(PRINT_ASSETS_CONTEXT, "org/big", Source(), "application/pdf")
    tracemalloc.start()
    try:
        archive = stream_archive(storage, [ArchiveFile("big.pdf", 2, 0, "org/big", size)], filename="big.zip")
        out, total = hashlib.sha256(), 0
        for chunk in archive.chunks:
            total += len(chunk)
            out.update(chunk)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert total == archive.content_length > size
    assert peak < 8 * 1024 * 1024, f"peak allocations {peak} bytes while streaming {size} bytes"


def test_falcon_streams_the_archive_with_its_length_and_name(storage):
    size = put(storage, "org/a", b"%PDF-1.7 front")
    archive = stream_archive(storage, [ArchiveFile("a.pdf", 2, 0, "org/a", size)], filename="PM-0042.zip")

    class Download:
        def on_get(self, req, resp):
            resp.content_type = archive.content_type
            resp.content_length = archive.content_length
            resp.downloadable_as = archive.filename
            resp.stream = archive.chunks

    app = falcon.App()
    app.add_route("/download", Download())
    resp = falcon.testing.TestClient(app).simulate_get("/download")
    assert resp.headers["content-type"] == "application/zip"
    assert resp.headers["content-disposition"] == 'attachment; filename="PM-0042.zip"'
    assert int(resp.headers["content-length"]) == len(resp.content)
    with zipfile.ZipFile(io.BytesIO(resp.content)) as zf:
        assert zf.read("a_qte2.pdf") == b"%PDF-1.7 front"
