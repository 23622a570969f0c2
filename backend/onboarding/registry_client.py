"""HTTP client of the French public company directory, "API Recherche d'entreprises"
(`REGISTRY_BASE_URL`, default `https://recherche-entreprises.api.gouv.fr`; no key).

One call per lookup: `GET /search?q=<siren>&page=1&per_page=5`, answered
`{results: [...], total_results, page, per_page, total_pages}`. The result whose `siren` is the one
asked is the company; none means the directory does not know it. Fields read (everything else is
ignored): `siren`, `nom_raison_sociale` (else `nom_complet`), `etat_administratif` (`A` active,
`C` ceased), `activite_principale` (NAF code), `nature_juridique` (INSEE's catégorie juridique, the
legal form), `date_mise_a_jour_rne` (else `date_mise_a_jour`),
`siege.{numero_voie, indice_repetition, type_voie, libelle_voie, code_postal, libelle_commune}`,
and `dirigeants[]` of `type_dirigeant = "personne physique"` with their `nom`, `prenoms` and
`qualite` (a legal person listed as representative cannot sign itself: its signer needs the
delegation proof).

Every call has a connect and a read timeout and is retried by tenacity on 429, on 5xx and on
network errors, waiting the directory's `Retry-After` when it sends one (capped), else a growing
delay. When it still cannot answer, or answers something that is not the shape above (logged,
size-limited), `lookup` raises `RegistryUnavailable`.
"""

from __future__ import annotations

import json
import logging
import time

import requests

from backend.config import Config
from backend.http_retries import Retryable, retry_after, retrying
from backend.logs import get_logger
from backend.onboarding.registry import CompanyExtract, CompanyState, RegistryUnavailable, Representative

log = get_logger("registry.client")

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_ANSWER_BYTES = 1024 * 1024  # a SIREN search answers a few kilobytes
LOGGED_BODY_CHARS = 500  # of an answer the client does not understand
STATES = {"A": CompanyState.ACTIVE, "C": CompanyState.CEASED}


class _Malformed(Exception):
    """The answer is not the directory's shape."""


class RegistryClient:
    """`CompanyRegistry` for the API Recherche d'entreprises."""

    def __init__(self, base_url: str, *, connect_timeout: float = 3.0, read_timeout: float = 5.0,
                 attempts: int = 3, backoff_seconds: float = 0.5, max_backoff_seconds: float = 2.0,
                 session: requests.Session | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = (connect_timeout, read_timeout)
        self.attempts = attempts
        self.backoff_seconds = backoff_seconds
        self.max_backoff_seconds = max_backoff_seconds
        self.session = session or requests.Session()

    @classmethod
    def from_config(cls, config: Config) -> RegistryClient:
        return cls(config.registry_base_url)

    def __repr__(self) -> str:
        return f"RegistryClient({self.base_url!r})"

    def lookup(self, siren: str) -> CompanyExtract | None:
        body = self._search(siren)
        try:
            return _extract_of(body, siren)
        except (_Malformed, AttributeError, KeyError, TypeError) as exc:
            log.error("company registry answer not understood", extra={"fields": {
                "siren": siren, "error": f"{type(exc).__name__}: {exc}"[:200],
                "body": repr(body)[:LOGGED_BODY_CHARS]}})
            raise RegistryUnavailable("the company registry gave an answer the platform does not understand") from None

    # --- transport ----------------------------------------------------------------------------

    def _search(self, siren: str) -> object:
        try:
            return retrying(attempts=self.attempts, backoff_seconds=self.backoff_seconds,
                            max_backoff_seconds=self.max_backoff_seconds)(self._send, siren)
        except Retryable as exc:
            raise RegistryUnavailable(
                f"the company registry is unavailable ({exc}) after {self.attempts} attempts") from None

    def _send(self, siren: str) -> object:
        started = time.monotonic()
        fields: dict[str, object] = {"siren": siren}
        try:
            with self.session.get(f"{self.base_url}/search", params={"q": siren, "page": 1, "per_page": 5},
                                  headers={"Accept": "application/json"}, timeout=self.timeout,
                                  stream=True) as response:
                status = response.status_code
                fields.update(status=status, durationMs=round((time.monotonic() - started) * 1000))
                log.log(logging.INFO if status < 400 else logging.WARNING, "company registry call",
                        extra={"fields": fields})
                if status in RETRY_STATUSES:
                    raise Retryable(f"HTTP {status}", status=status, retry_after=retry_after(response))
                content = _read_capped(response)
        except (requests.ConnectionError, requests.Timeout) as exc:
            log.warning("company registry unreachable", extra={"fields": {**fields, "error": type(exc).__name__}})
            raise Retryable(type(exc).__name__) from None
        if status != 200:
            log.error("company registry refused the search", extra={"fields": {
                **fields, "body": content[:LOGGED_BODY_CHARS].decode("utf-8", "replace")}})
            raise RegistryUnavailable(f"the company registry refused the search (HTTP {status})")
        try:
            return json.loads(content)
        except ValueError:
            log.error("company registry answer is not JSON", extra={"fields": {
                **fields, "body": content[:LOGGED_BODY_CHARS].decode("utf-8", "replace")}})
            raise RegistryUnavailable("the company registry gave an answer the platform does not understand") from None


def _read_capped(response: requests.Response) -> bytes:
    chunks, size = [], 0
    for chunk in response.iter_content(64 * 1024):
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            log.error("company registry answer too large", extra={"fields": {"limitBytes": MAX_ANSWER_BYTES}})
            raise RegistryUnavailable("the company registry gave an answer larger than expected")
        chunks.append(chunk)
    return b"".join(chunks)


def _text(value: object, name: str, *, required: bool = False) -> str | None:
    if value is None or value == "":
        if required:
            raise _Malformed(f"{name} missing")
        return None
    if not isinstance(value, str):
        raise _Malformed(f"{name} is not a string")
    return value.strip() or None


def _extract_of(body: object, siren: str) -> CompanyExtract | None:
    if not isinstance(body, dict) or not isinstance(body.get("results"), list):
        raise _Malformed("no results list")
    match = next((r for r in body["results"] if isinstance(r, dict) and r.get("siren") == siren), None)
    if match is None:
        return None
    state = STATES.get(match.get("etat_administratif"))
    if state is None:
        raise _Malformed("etat_administratif is neither A nor C")
    head_office = match.get("siege") or {}
    if not isinstance(head_office, dict):
        raise _Malformed("siege is not an object")
    people = match.get("dirigeants") or []
    if not isinstance(people, list):
        raise _Malformed("dirigeants is not a list")
    street = " ".join(part for part in (_text(head_office.get(k), f"siege.{k}") for k in
                                        ("numero_voie", "indice_repetition", "type_voie", "libelle_voie")) if part)
    updated = _text(match.get("date_mise_a_jour_rne"), "date_mise_a_jour_rne") or _text(
        match.get("date_mise_a_jour"), "date_mise_a_jour")
    return CompanyExtract(
        siren=siren,
        legal_name=_text(match.get("nom_raison_sociale"), "nom_raison_sociale")
        or _text(match.get("nom_complet"), "nom_complet", required=True),
        state=state,
        naf_code=_text(match.get("activite_principale"), "activite_principale"),
        street=street or None,
        postal_code=_text(head_office.get("code_postal"), "siege.code_postal"),
        city=_text(head_office.get("libelle_commune"), "siege.libelle_commune"),
        representatives=tuple(
            Representative(first_names=_text(p.get("prenoms"), "prenoms", required=True),
                           last_name=_text(p.get("nom"), "nom", required=True),
                           role=_text(p.get("qualite"), "qualite"))
            for p in people
            if isinstance(p, dict) and p.get("type_dirigeant") == "personne physique" and p.get("nom")
            and p.get("prenoms")
        ),
        updated_on=updated[:10] if updated else None,
        legal_category=_text(match.get("nature_juridique"), "nature_juridique"),
    )
