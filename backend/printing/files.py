"""Print files: the storage context of visuals, content types told from the bytes, technical names.

A visual's type is read from its first bytes, never from the client's name or Content-Type:
a printer's RIP chokes on a JPEG called `.pdf`. The technical name is what the file is called in
download archives: ASCII, lower case, no path, with the extension of the detected type.
"""

from __future__ import annotations

import re
import unicodedata

from backend.errors import ValidationError

PRINT_ASSETS_CONTEXT = "print-assets"

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

_NOT_SAFE = re.compile(r"[^a-z0-9_-]+")
STEM_MAX_LENGTH = 100
DEFAULT_STEM = "visuel"


def detect_content_type(head: bytes) -> str:
    """The content type the leading bytes announce; VALIDATION_ERROR unless PDF, PNG, JPEG or TIFF."""
    for content_type, (signatures, _) in _TYPES.items():
        if head.startswith(signatures):
            return content_type
    raise ValidationError(
        "the file must be a PDF, PNG, JPEG or TIFF",
        fields={"file": [f"unsupported content; accepted: {', '.join(ACCEPTED_TYPES)}"]},
    )


def technical_name(original_name: str, content_type: str) -> str:
    """`Affiche Été (v2).PNG` -> `affiche-ete-v2.png`.

    Only the last path segment counts (browsers may send `C:\\fakepath\\x.pdf`); accents are
    folded to ASCII, anything but letters, digits, `_` and `-` becomes one `-`; the extension is
    kept when it matches the detected type, else replaced by the type's canonical one.
    """
    extensions = _TYPES[content_type][1]
    name = original_name.replace("\\", "/").rsplit("/", 1)[-1]
    stem, extension = split_extension(name)
    extension = extension[1:].lower()
    extension = extension if extension in extensions else extensions[0]
    ascii_stem = unicodedata.normalize("NFKD", stem).encode("ascii", "ignore").decode("ascii").lower()
    safe = _NOT_SAFE.sub("-", ascii_stem).strip("-_")[:STEM_MAX_LENGTH].rstrip("-_")
    return f"{safe or DEFAULT_STEM}.{extension}"


def split_extension(name: str) -> tuple[str, str]:
    """`a-b.pdf` -> (`a-b`, `.pdf`); a name without extension keeps an empty one."""
    stem, dot, extension = name.rpartition(".")
    return (stem, f".{extension}") if dot and stem else (name, "")
