"""The reference of the ZIP download in `vitrine bench printer`: a bare WSGI app, under the same
gunicorn settings, streaming the same blobs back to back through the same storage interface (no
session, no database, no archive framing). `BENCH_ZIP_KEYS` names a file listing the storage keys
of the visuals, one per line."""

from __future__ import annotations

import os

from backend.config import load_config
from backend.printing.files import PRINT_ASSETS_CONTEXT
from storage import build_storage


def app():
    storage = build_storage(load_config())
    with open(os.environ["BENCH_ZIP_KEYS"]) as listing:
        keys = [line for line in listing.read().splitlines() if line]
    size = sum(storage.size(PRINT_ASSETS_CONTEXT, key) for key in keys)

    def blobs():
        for key in keys:
            yield from storage.open(PRINT_ASSETS_CONTEXT, key)

    def application(environ, start_response):
        if environ["PATH_INFO"] == "/api/health":
            start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", "2")])
            return [b"{}"]
        start_response("200 OK", [("Content-Type", "application/octet-stream"), ("Content-Length", str(size))])
        return blobs()

    return application
