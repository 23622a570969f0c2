"""Comparing what an applicant typed with what the company registry lists: people's names,
legal names, postcodes. Pure functions (property-tested in tests/onboarding/test_registry_names.py).

A signer is a listed representative when, after folding (accents removed, case ignored, hyphens,
apostrophes and dots read as spaces, ligatures spelled out):
- the last name is the registered one, or one of the two a registry entry may carry ("DURAND
  (MARTIN)": usage name, then birth name in parentheses);
- the given names, in any order, are either all the registered given names or the first of them
  (the registry lists every given name, "NICOLAS ADRIEN DOMINIQUE"; people sign with the first).
  A homonym with another given name ("Marie Dupont" for "JEAN DUPONT"), or a later given name
  alone ("Adrien" for "NICOLAS ADRIEN"), is not a match: the delegation proof is then required,
  which is the safe side.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from difflib import SequenceMatcher

from backend.onboarding.registry import Representative

# Whitespace, hyphens and dashes (U+2010 to U+2015), apostrophes (straight and U+2019), dots, commas.
_SEPARATORS = re.compile(r"[\s\-\u2010-\u2015'\u2019.,]+")
_LIGATURES = str.maketrans({"œ": "oe", "Œ": "oe", "æ": "ae", "Æ": "ae"})
_PARENTHESES = re.compile(r"\(([^)]*)\)")
# Legal forms, left out when two legal names are compared ("Laiterie Démo SA" = "LAITERIE DEMO").
LEGAL_FORMS = frozenset({"sa", "sas", "sasu", "sarl", "eurl", "snc", "sci", "scop", "sca", "scs", "selarl",
                         "gie", "ei", "eirl", "societe", "anonyme", "simplifiee", "par", "actions"})
# Below this similarity ratio of the folded legal names, the reviewer is warned.
LEGAL_NAME_SIMILARITY = 0.8


def fold(text: str) -> str:
    """Lower case, without accents or ligatures, every separator one space."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_LIGATURES))
    bare = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
    return " ".join(_SEPARATORS.split(bare)).strip()


def _tokens(text: str) -> tuple[str, ...]:
    return tuple(sorted(fold(text).split()))


def registered_last_names(last_name: str) -> set[str]:
    """The folded last names a registry entry stands for: the usage name and any birth name."""
    names = {fold(_PARENTHESES.sub(" ", last_name))}
    names.update(fold(inner) for inner in _PARENTHESES.findall(last_name))
    return {name for name in names if name}


def is_representative(first_name: str, last_name: str, representative: Representative) -> bool:
    """Whether the signer `first_name last_name` is `representative` (rules in the module docstring)."""
    if fold(last_name) not in registered_last_names(representative.last_name):
        return False
    given = _tokens(first_name)
    registered = representative.first_names.split()
    return bool(given) and bool(registered) and given in (_tokens(representative.first_names),
                                                          _tokens(registered[0]))


def matching_representative(first_name: str, last_name: str,
                            representatives: Iterable[Representative]) -> Representative | None:
    return next((r for r in representatives if is_representative(first_name, last_name, r)), None)


def legal_names_differ(ours: str, registered: str) -> bool:
    """Whether two legal names are far apart, legal forms and spelling differences aside."""
    a, b = (" ".join(w for w in fold(name).split() if w not in LEGAL_FORMS) for name in (ours, registered))
    return SequenceMatcher(None, a, b).ratio() < LEGAL_NAME_SIMILARITY
