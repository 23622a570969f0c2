"""The e-signature provider behind an interface, so it can be replaced (Specification A, point 1).

Services talk to `SignatureProvider` and receive it as an argument; `EsignClient`
(`esign_client.py`) implements it for the provider API v3. Each process builds one client at boot
(`backend.runtime.Runtime.esign`); the web passes it on from `Deps`, the actors from the worker's
runtime, tests hand in a client pointed at the simulator the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


class ProviderError(Exception):
    """A provider call that failed for good (after retries); the message is safe to log and show."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ProviderCredentialsInvalid(ProviderError):
    """401 or 403 from the provider: the API key is wrong or lacks a permission."""


class ProviderRejected(ProviderError):
    """A 4xx answer other than 401/403/429: the provider refused what we sent."""


@dataclass(frozen=True)
class SignerInfo:
    first_name: str
    last_name: str
    email: str
    phone: str | None  # E.164 (`backend.identity.french_ids.to_e164`)
    locale: str = "fr"


@dataclass(frozen=True)
class ProviderSigner:
    id: str
    status: str | None
    signature_link: str | None


@dataclass(frozen=True)
class ProviderRequest:
    id: str
    status: str
    signers: tuple[ProviderSigner, ...] = ()
    document_ids: tuple[str, ...] = ()

    @property
    def signature_link(self) -> str | None:
        """The first signer's link (onboarding envelopes have one signer)."""
        return next((s.signature_link for s in self.signers if s.signature_link), None)


class SignatureProvider(Protocol):
    def create_request(self, *, name: str, external_id: str, delivery_mode: str, ordered_signers: bool,
                       locale: str) -> str:
        """A draft signature request; returns the provider's id."""

    def upload_document(self, request_id: str, *, filename: str, content: bytes) -> str:
        """Attach a PDF; returns the provider's document id."""

    def add_signer(self, request_id: str, *, signer: SignerInfo, signature_level: str,
                   authentication_mode: str | None, document_ids: list[str]) -> str:
        """Add a signer with a signature field on page 1 of each document; returns the signer id."""

    def activate(self, request_id: str) -> ProviderRequest: ...

    def get_request(self, request_id: str) -> ProviderRequest: ...

    def cancel(self, request_id: str) -> None: ...

    def download_document(self, request_id: str, document_id: str) -> bytes: ...

    def download_audit_trail(self, request_id: str, signer_id: str) -> bytes: ...

