"""The company registry behind an interface: who may sign for a company (KYB, Specification A).

Specification A asks for the delegation proof "only when the signer is not listed on the company
registry extract": the platform reads the extract itself instead of trusting the applicant.
Services talk to `CompanyRegistry` and receive it as an argument; `RegistryClient`
(`registry_client.py`) implements it for the French public directory ("API Recherche
d'entreprises"). Each process builds one client at boot (`backend.runtime.Runtime.registry`);
tests hand in one pointed at the simulator (`ops/simulators/registry.py`).

`lookup` has three outcomes: the company's extract, None when the registry answered that it does
not know the SIREN, or `RegistryUnavailable` when it could not answer (down, too slow, rate
limited after the retries, or an answer that is not what the client expects).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Protocol

from backend.errors import DomainError


class RegistryUnavailable(DomainError):
    """The registry could not answer; the message is safe to log and show (503)."""

    code = "REGISTRY_UNAVAILABLE"


class CompanyState(StrEnum):
    ACTIVE = "active"
    CEASED = "ceased"
    UNKNOWN = "unknown"  # the registry answered that it does not know the SIREN


@dataclass(frozen=True)
class Representative:
    """A natural person the registry lists among the company's representatives (`dirigeants`)."""

    first_names: str  # every given name, as registered ("JEAN MARC")
    last_name: str  # as registered; a birth name may follow in parentheses ("DURAND (MARTIN)")
    role: str | None  # `qualite` ("Président de SAS", "Gérant" ...)


@dataclass(frozen=True)
class CompanyExtract:
    siren: str
    legal_name: str
    state: CompanyState
    naf_code: str | None
    street: str | None  # head office
    postal_code: str | None
    city: str | None
    representatives: tuple[Representative, ...]
    updated_on: str | None  # the registry's own last update of the company (ISO date), when given
    legal_category: str | None = None  # INSEE's catégorie juridique code (`5710`), when given

    def representatives_json(self) -> list[dict]:
        return [asdict(r) for r in self.representatives]


class CompanyRegistry(Protocol):
    def lookup(self, siren: str) -> CompanyExtract | None:
        """The company's extract; None when the registry does not know the SIREN; raises
        `RegistryUnavailable` when it cannot answer."""
