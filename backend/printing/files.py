"""Print files: the storage context of visuals and their technical names.

A visual's type is told from its bytes (`backend.files.detect_content_type`). The technical name
is what the file is called in download archives: ASCII, lower case, no path, with the extension of
the detected type.
"""

from __future__ import annotations

import re
import unicodedata

from backend.files import extensions

PRINT_ASSETS_CONTEXT = "print-assets"

_NOT_SAFE = re.compile(r"[^a-z0-9_-]+")
STEM_MAX_LENGTH = 100
DEFAULT_STEM = "visuel"


def technical_name(original_name: str, content_type: str) -> str:
    """`Affiche Été (v2).PNG` -> `affiche-ete-v2.png`.

    Only the last path segment counts (browsers may send `C:\\fakepath\\x.pdf`); accents are
    folded to ASCII, anything but letters, digits, `_` and `-` becomes one `-`; the extension is
    kept when it matches the detected type, else replaced by the type's canonical one.
    """
    accepted = extensions(content_type)
    name = original_name.replace("\\", "/").rsplit("/", 1)[-1]
    stem, extension = split_extension(name)
    extension = extension[1:].lower()
    extension = extension if extension in accepted else accepted[0]
    ascii_stem = unicodedata.normalize("NFKD", stem).encode("ascii", "ignore").decode("ascii").lower()
    safe = _NOT_SAFE.sub("-", ascii_stem).strip("-_")[:STEM_MAX_LENGTH].rstrip("-_")
    return f"{safe or DEFAULT_STEM}.{extension}"


def split_extension(name: str) -> tuple[str, str]:
    """`a-b.pdf` -> (`a-b`, `.pdf`); a name without extension keeps an empty one."""
    stem, dot, extension = name.rpartition(".")
    return (stem, f".{extension}") if dot and stem else (name, "")
