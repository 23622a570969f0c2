"""File types told from the bytes, shared by every area that accepts uploads (print visuals, KYB
documents).

A file's type is read from its first bytes, never from the client's name or Content-Type: a
printer's RIP chokes on a JPEG called `.pdf`, and a reviewer's viewer on an executable called
`.png`.
"""

from __future__ import annotations

from backend.errors import ValidationError

# Enough bytes to recognize every signature below.
SNIFF_BYTES = 8

# content type -> (signatures, extensions with the canonical one first)
_TYPES: dict[str, tuple[tuple[bytes, ...], tuple[str, ...]]] = {
    "application/pdf": ((b"%PDF-",), ("pdf",)),
    "image/png": ((b"\x89PNG\r\n\x1a\n",), ("png",)),
    "image/jpeg": ((b"\xff\xd8\xff",), ("jpg", "jpeg")),
    # classic TIFF and BigTIFF, little- and big-endian
    "image/tiff": ((b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+"), ("tif", "tiff")),
}
ACCEPTED_TYPES = tuple(_TYPES)


def detect_content_type(head: bytes) -> str:
    """The content type the leading bytes announce; VALIDATION_ERROR unless PDF, PNG, JPEG or TIFF."""
    for content_type, (signatures, _) in _TYPES.items():
        if head.startswith(signatures):
            return content_type
    raise ValidationError(
        "the file must be a PDF, PNG, JPEG or TIFF",
        fields={"file": [f"unsupported content; accepted: {', '.join(ACCEPTED_TYPES)}"]},
    )


def extensions(content_type: str) -> tuple[str, ...]:
    """The file extensions of an accepted content type, the canonical one first."""
    return _TYPES[content_type][1]
