"""The embedded Redis keeps what it acknowledged, and starts whatever the data directory's length."""

import os
import shutil
import uuid

import pytest
import redis

from backend import embedded
from tests.conftest import ROOT


@pytest.fixture
def data_dir():
    path = ROOT / "var" / "test" / f"embedded-{uuid.uuid4().hex[:8]}"
    yield path
    embedded.stop_redis(path)
    shutil.rmtree(path, ignore_errors=True)


def test_the_embedded_redis_snapshots_and_appends_every_second(data_dir):
    client = redis.Redis.from_url(embedded.ensure_redis(data_dir))
    assert client.config_get("save") == {"save": "900 1 60 1000"}  # both rules, not one turned off
    assert client.config_get("appendonly") == {"appendonly": "yes"}
    assert client.config_get("appendfsync") == {"appendfsync": "everysec"}
    assert client.config_get("maxmemory-policy") == {"maxmemory-policy": "noeviction"}
    client.set("kept", "1")
    embedded.stop_redis(data_dir)
    client = redis.Redis.from_url(embedded.ensure_redis(data_dir))
    assert client.get("kept") == b"1"


def test_a_long_data_directory_gets_a_short_socket(data_dir):
    deep = data_dir / ("d" * 60) / ("e" * 60)
    socket = embedded.redis_socket(deep)
    assert len(os.fsencode(socket)) <= embedded.SOCKET_PATH_MAX
    assert embedded.redis_socket(deep) == socket  # every command finds the same one
    try:
        url = embedded.ensure_redis(deep)
        assert redis.Redis.from_url(url).ping()
        assert (deep / "redis" / "redis.log").exists()  # the data stays in the data directory
    finally:
        embedded.stop_redis(deep)


def test_a_redis_that_cannot_start_says_why(data_dir, monkeypatch):
    monkeypatch.setattr(embedded, "_redis_binary", lambda: str(data_dir / "no-such-redis-server"))
    with pytest.raises(embedded.EmbeddedError, match="embedded Redis did not start"):
        embedded.ensure_redis(data_dir)
