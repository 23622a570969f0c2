"""The success envelope `{"ok": true, "data": ...}` (errors: `api.errors`)."""

from __future__ import annotations

import falcon


def send(resp: falcon.Response, data: object, status: int = 200) -> None:
    resp.status = status
    resp.media = {"ok": True, "data": data}


def send_pdf(resp: falcon.Response, pdf: bytes, filename: str) -> None:
    """A PDF as an attachment named `filename`."""
    resp.content_type = "application/pdf"
    resp.downloadable_as = filename
    resp.data = pdf


def send_archive(resp: falcon.Response, archive) -> None:
    """A streamed archive (`backend.printing.archive`): its type, name, length and chunks."""
    resp.content_type = archive.content_type
    resp.downloadable_as = archive.filename
    resp.content_length = archive.content_length
    resp.stream = archive.chunks
