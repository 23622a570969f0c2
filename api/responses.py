"""The success envelope `{"ok": true, "data": ...}` (errors: `api.errors`)."""

from __future__ import annotations

import falcon


def send(resp: falcon.Response, data: object, status: int = 200) -> None:
    resp.status = status
    resp.media = {"ok": True, "data": data}


def private_attachment(resp: falcon.Response, content_type: str, filename: str) -> None:
    """A document only its caller may read, as an attachment named `filename`: no cache keeps it
    (`private, no-store`), no browser reads it as another type (`nosniff`)."""
    resp.content_type = content_type
    resp.downloadable_as = filename
    resp.set_header("Cache-Control", "private, no-store")
    resp.set_header("X-Content-Type-Options", "nosniff")


def send_pdf(resp: falcon.Response, pdf: bytes, filename: str) -> None:
    """A PDF as a private attachment named `filename`."""
    private_attachment(resp, "application/pdf", filename)
    resp.data = pdf


def send_archive(resp: falcon.Response, archive) -> None:
    """A streamed archive (`backend.printing.archive`): its type, name, length and chunks."""
    resp.content_type = archive.content_type
    resp.downloadable_as = archive.filename
    resp.content_length = archive.content_length
    resp.stream = archive.chunks
