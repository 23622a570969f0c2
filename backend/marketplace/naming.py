"""Labels and codes of store zones (Specification A): one normalization serves the uniqueness of
labels and the derivation of codes, so "Épicerie  salée" and "epicerie salee" are the same label
and both derive `UNIV_EPICERIE_SALEE`."""

from __future__ import annotations

import re
import unicodedata

_NOT_ALNUM = re.compile(r"[^A-Z0-9]+")
_SPACES = re.compile(r"\s+")
CODE_MAX_LENGTH = 60
LABEL_MAX_LENGTH = 120  # the label and its normalized form (their columns)
# Ligatures Unicode does not decompose: "Œufs" and "Oeufs" are one label (and one code).
_LIGATURES = str.maketrans({"Œ": "OE", "œ": "oe", "Æ": "AE", "æ": "ae"})


def strip_diacritics(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.translate(_LIGATURES))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def normalize_label(label: str) -> str:
    """Case, accents, ligatures and runs of spaces ignored: the key of label uniqueness."""
    return _SPACES.sub(" ", strip_diacritics(label).casefold()).strip()


def clean_label(label: str) -> str:
    """The label as stored: trimmed, inner runs of spaces collapsed, case and accents kept."""
    return _SPACES.sub(" ", label).strip()


def base_code(prefix: str, label: str) -> str:
    """`UNIV_` / `RAYON_` + the label upper-cased without diacritics, non-alphanumerics as `_`.

    "Œufs & crèmerie" gives `UNIV_OEUFS_CREMERIE`; a label with nothing alphanumeric gives
    `<prefix>ZONE` so a code is never just the prefix."""
    core = _NOT_ALNUM.sub("_", strip_diacritics(label).upper())
    core = core.strip("_") or "ZONE"
    return (prefix + core)[:CODE_MAX_LENGTH].rstrip("_")


def code_candidates(base: str, taken: set[str]):
    """`base`, then `base_2`, `base_3` ...: the first candidates not in `taken`, in order."""
    suffix = 1
    while True:
        candidate = base if suffix == 1 else f"{base[: CODE_MAX_LENGTH - len(str(suffix)) - 1]}_{suffix}"
        if candidate not in taken:
            yield candidate
        suffix += 1
