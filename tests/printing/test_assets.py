"""The visual library at the service level: upload, list, get, content, delete."""

import hashlib
import io
from datetime import UTC, datetime, timedelta

import pytest

from backend.clock import frozen_at
from backend.db import database
from backend.errors import Conflict, NotFound, PayloadTooLarge, ValidationError
from backend.listing import ListParams
from backend.printing import assets
from backend.printing.files import PRINT_ASSETS_CONTEXT
from backend.printing.models import PrintAsset
from tests.factories import make_organization

PDF = b"%PDF-1.7\n" + b"x" * 5000
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 300


class Trickle(io.RawIOBase):
    """A stream that gives at most 3 bytes per read, like a slow network part."""

    def __init__(self, data: bytes):
        self.data = io.BytesIO(data)

    def readable(self):
        return True

    def read(self, n=-1):
        return self.data.read(3 if n is None or n < 0 else min(n, 3))


def upload(storage, setting, data=PDF, name="Affiche Été.pdf", organization=None, max_bytes=10_000, stream=None):
    return assets.upload_asset(
        storage=storage,
        organization_id=(organization or setting.industrial).id,
        user_id=setting.industrial_user.id,
        original_name=name,
        stream=stream or io.BytesIO(data),
        max_bytes=max_bytes,
    )


def test_an_upload_stores_the_blob_then_the_row(storage, setting):
    asset = upload(storage, setting)
    row = PrintAsset.get_by_id(asset.id)
    assert row.organization_id == setting.industrial.id
    assert row.uploaded_by_user_id == setting.industrial_user.id
    assert (row.original_name, row.technical_name) == ("Affiche Été.pdf", "affiche-ete.pdf")
    assert (row.content_type, row.size_bytes) == ("application/pdf", len(PDF))
    assert row.sha256 == hashlib.sha256(PDF).hexdigest()
    assert row.storage_key == f"{setting.industrial.id.replace(':', '_')}/{asset.id}"
    assert storage.read_bytes(PRINT_ASSETS_CONTEXT, row.storage_key) == PDF


def test_the_type_is_told_from_the_content_not_the_name(storage, setting):
    asset = upload(storage, setting, data=PNG, name="visuel.pdf")
    assert (asset.content_type, asset.technical_name) == ("image/png", "visuel.png")


def test_a_short_reading_stream_is_stored_whole(storage, setting):
    asset = upload(storage, setting, stream=Trickle(PDF))
    assert storage.read_bytes(PRINT_ASSETS_CONTEXT, asset.storage_key) == PDF


@pytest.fixture(scope="module")
def gcs_storage():
    import socket

    from gcp_storage_emulator.server import create_server

    from storage.gcs import GcsStorage

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = create_server("127.0.0.1", port, in_memory=True, default_bucket="vitrine-printing")
    server.start()
    yield GcsStorage("vitrine-printing", emulator_host=f"http://127.0.0.1:{port}")
    server.stop()


def test_a_multi_chunk_upload_from_a_short_reading_stream_reaches_gcs_whole(gcs_storage, setting):
    """Resumable uploads take a short read for the end of the file: the type sniffing must not
    hand one over in the middle."""
    data = b"%PDF-1.7\n" + bytes(range(256)) * (9 * 4096)  # more than one 8 MiB upload chunk

    class ShortReads(io.BytesIO):
        def read(self, n=-1):
            return super().read(n if n is None or n < 0 else max(1, n - 5))

    asset = upload(gcs_storage, setting, stream=ShortReads(data), max_bytes=len(data))
    assert asset.size_bytes == len(data) and asset.sha256 == hashlib.sha256(data).hexdigest()
    assert gcs_storage.read_bytes(PRINT_ASSETS_CONTEXT, asset.storage_key) == data


@pytest.mark.parametrize("name", [None, "", " \x00\n "])
def test_an_upload_without_a_usable_name_gets_a_default_one(storage, setting, name):
    asset = upload(storage, setting, name=name)
    assert asset.original_name == asset.technical_name == "visuel.pdf"


def test_control_characters_are_dropped_from_the_original_name(storage, setting):
    asset = upload(storage, setting, name="Affiche\x00 été\r\n.pdf")
    assert (asset.original_name, asset.technical_name) == ("Affiche été.pdf", "affiche-ete.pdf")


@pytest.mark.parametrize("data", [b"GIF89a" + b"\x00" * 10, b"", b"<svg/>"])
def test_other_content_is_refused_and_nothing_is_kept(storage, setting, data):
    with pytest.raises(ValidationError) as refused:
        upload(storage, setting, data=data)
    assert refused.value.code == "VALIDATION_ERROR"
    assert PrintAsset.select().count() == 0
    assert not any(p.is_file() for p in storage.root.rglob("*"))


def test_a_file_over_the_limit_is_payload_too_large_and_nothing_is_kept(storage, setting):
    with pytest.raises(PayloadTooLarge) as refused:
        upload(storage, setting, data=PDF, max_bytes=len(PDF) - 1)
    assert refused.value.code == "PAYLOAD_TOO_LARGE" and refused.value.details == {"limitBytes": len(PDF) - 1}
    assert PrintAsset.select().count() == 0
    assert not any(p.is_file() for p in storage.root.rglob("*"))


def test_a_file_exactly_at_the_limit_is_accepted(storage, setting):
    assert upload(storage, setting, data=PDF, max_bytes=len(PDF)).size_bytes == len(PDF)


def listed(organization_id, **params):
    return assets.list_assets(organization_id=organization_id, params=ListParams(**params))


def test_the_list_is_the_organizations_live_assets_by_date(storage, setting):
    start = datetime(2026, 3, 1, tzinfo=UTC)
    uploaded = []
    for i in range(3):
        with frozen_at(start + timedelta(minutes=i)):
            uploaded.append(upload(storage, setting, name=f"v{i}.pdf"))
    upload(storage, setting, organization=make_organization("industrial"))
    assets.delete_asset(storage=storage, organization_id=setting.industrial.id, asset_id=uploaded[0].id)
    page = listed(setting.industrial.id)
    assert [a.original_name for a in page.items] == ["v1.pdf", "v2.pdf"]
    assert (page.total, page.page, page.page_size) == (2, 1, 25)
    assert [a.original_name for a in listed(setting.industrial.id, sort_dir="desc").items] == ["v2.pdf", "v1.pdf"]


def test_the_list_pages_searches_and_sorts_names_without_case(storage, setting):
    for name in ("Bravo.pdf", "alpha.pdf", "Charlie_100%.pdf", "delta.pdf"):
        upload(storage, setting, name=name)
    org = setting.industrial.id
    page = listed(org, sort_by="originalName", page=2, page_size=2)
    assert [a.original_name for a in page.items] == ["Charlie_100%.pdf", "delta.pdf"] and page.total == 4
    assert [a.original_name for a in listed(org, search="ALPH").items] == ["alpha.pdf"]
    assert [a.original_name for a in listed(org, search="_100%").items] == ["Charlie_100%.pdf"]
    assert listed(org, search="%").total == 1


def test_the_list_sorts_by_size(storage, setting):
    for size in (300, 100, 200):
        upload(storage, setting, data=b"%PDF-1.7" + b"x" * size)
    page = listed(setting.industrial.id, sort_by="sizeBytes", sort_dir="desc")
    assert [a.size_bytes - 8 for a in page.items] == [300, 200, 100]


def test_an_unknown_sort_key_is_a_validation_error(setting):
    with pytest.raises(ValidationError) as refused:
        listed(setting.industrial.id, sort_by="storage_key; DROP TABLE")
    assert "sortBy" in refused.value.details["fields"]


def test_another_organizations_asset_is_not_found(storage, setting):
    asset = upload(storage, setting)
    other = make_organization("industrial").id
    for call in (
        lambda: assets.get_asset(organization_id=other, asset_id=asset.id),
        lambda: assets.open_asset_content(storage=storage, organization_id=other, asset_id=asset.id),
        lambda: assets.delete_asset(storage=storage, organization_id=other, asset_id=asset.id),
    ):
        with pytest.raises(NotFound):
            call()
    assert PrintAsset.get_by_id(asset.id).deleted_at is None


def test_content_streams_the_stored_bytes(storage, setting):
    asset = upload(storage, setting)
    found, chunks = assets.open_asset_content(storage=storage, organization_id=setting.industrial.id,
                                              asset_id=asset.id)
    assert found.id == asset.id and b"".join(chunks) == PDF


def test_an_unused_asset_is_soft_deleted_and_then_not_found(storage, setting):
    asset = upload(storage, setting)
    assets.delete_asset(storage=storage, organization_id=setting.industrial.id, asset_id=asset.id)
    assert PrintAsset.get_by_id(asset.id).deleted_at is not None
    with pytest.raises(NotFound):
        assets.get_asset(organization_id=setting.industrial.id, asset_id=asset.id)
    with pytest.raises(NotFound):
        assets.delete_asset(storage=storage, organization_id=setting.industrial.id, asset_id=asset.id)


def test_an_asset_used_by_a_print_order_line_cannot_be_deleted(storage, setting, make_print_order):
    asset = upload(storage, setting)
    make_print_order(lines=[{"zone": setting.zones[0], "quantity": 2, "asset_id": asset.id}])
    with pytest.raises(Conflict) as refused:
        assets.delete_asset(storage=storage, organization_id=setting.industrial.id, asset_id=asset.id)
    assert refused.value.code == "CONFLICT"
    assert PrintAsset.get_by_id(asset.id).deleted_at is None
    assert storage.exists(PRINT_ASSETS_CONTEXT, asset.storage_key)


def test_the_blob_stays_until_the_deletion_commits(storage, setting):
    asset = upload(storage, setting)
    assets.delete_asset(storage=storage, organization_id=setting.industrial.id, asset_id=asset.id)
    # This test's transaction is rolled back at its end: the deletion never commits.
    assert storage.exists(PRINT_ASSETS_CONTEXT, asset.storage_key)


@pytest.mark.committed
def test_the_blob_is_removed_once_the_deletion_commits(storage, request):
    with database.connection_context():
        setting = request.getfixturevalue("setting")
        asset = upload(storage, setting)
        assets.delete_asset(storage=storage, organization_id=setting.industrial.id, asset_id=asset.id)
    assert not storage.exists(PRINT_ASSETS_CONTEXT, asset.storage_key)
