"""Company registry simulator: the `/search` route of the "API Recherche d'entreprises" and
control routes (companies, fault switches).

In-process (tests): `RegistrySimulator().start()`, then `sim.url` is the `REGISTRY_BASE_URL` to
give the client; `stop()` ends it. As a process (`vitrine dev`, port P+4):
`python -m ops.simulators.registry --port P`.

It knows the demo companies (those of `vitrine seed-demo`, plus a ceased one) and any company
registered through the control route; any other SIREN is unknown to it.

Routes:
- `GET /search?q=<siren or words>&page=&per_page=`: `{results, total_results, page, per_page,
  total_pages}`, each result in the directory's shape (`siren`, `nom_complet`,
  `nom_raison_sociale`, `etat_administratif` `A`|`C`, `activite_principale`, `nature_juridique`,
  `date_mise_a_jour`,
  `siege: {siret, adresse, numero_voie, type_voie, libelle_voie, code_postal, libelle_commune,
  est_siege}`, `dirigeants: [{nom, prenoms, qualite, type_dirigeant: "personne physique"}]`);
- `POST /_control/companies` (JSON `{siren, legalName, state: "active"|"ceased", address: {street,
  postalCode, city}, representatives: [{firstName, lastName, role}], nafCode?, legalCategory?}`
  (`legalCategory`: INSEE's catégorie juridique, default SAS): 201, the same
  SIREN again replaces it; `GET /_control/companies` lists them;
- `POST /_control/faults` (JSON, each key optional): `unknown` / `ceased` (lists of SIRENs answered
  as unknown / ceased), `delaySeconds` (every answer waits this long), `rateLimited` /
  `unavailable` / `malformed` (the next N searches answer 429 with `Retry-After:
  retryAfterSeconds`, 503, or a body that is not the directory's shape);
- `GET /_control/state` (faults and the count of searches), `POST /_control/reset` (demo
  companies only, no fault).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

from backend.identity.demo import DEMO_ORGANIZATIONS
from ops.simulators.server import BackgroundSimulator, SimulatorHandler, run_until_stopped

MAX_BODY = 64 * 1024
SIREN = re.compile(r"^\d{9}$")
DEFAULT_NAF = "73.11Z"  # Activités des agences de publicité
DEFAULT_LEGAL_CATEGORY = "5710"  # SAS, société par actions simplifiée

# The demo seed's organizations as the registry knows them (the demo managers are representatives).
_DEMO_DETAILS = {
    "552100554": ("active", ("12 rue des Alpages", "74000", "Annecy"), "10.51A",
                  [("Inès", "Industrielle", "Président de SAS"), ("Jean-Marc", "Fromager", "Directeur général")]),
    "385347927": ("active", ("1 avenue du Port", "13002", "Marseille"), "47.11F",
                  [("Denis", "Distributeur", "Président de SAS")]),
    "414217190": ("active", ("5 rue Gutenberg", "67000", "Strasbourg"), "18.12Z",
                  [("Irène", "Imprimeuse", "Gérant")]),
}
CEASED_DEMO = {"siren": "802312454", "legalName": "Ancienne Fromagerie Démo SARL", "state": "ceased",
               "address": {"street": "3 place du Marché", "postalCode": "39000", "city": "Lons-le-Saunier"},
               "representatives": [{"firstName": "Paul", "lastName": "Ancien", "role": "Gérant"}]}


def demo_companies() -> list[dict]:
    companies = [CEASED_DEMO]
    for _, _, siren, name, _ in DEMO_ORGANIZATIONS:
        state, (street, postal_code, city), naf, people = _DEMO_DETAILS[siren]
        companies.append({"siren": siren, "legalName": name, "state": state, "nafCode": naf,
                          "address": {"street": street, "postalCode": postal_code, "city": city},
                          "representatives": [{"firstName": f, "lastName": last, "role": role}
                                              for f, last, role in people]})
    return companies


class ControlError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def _company(body: object) -> dict:
    """A control-route company, checked."""
    if not isinstance(body, dict) or not SIREN.match(str(body.get("siren", ""))):
        raise ControlError(400, "siren: 9 digits")
    if body.get("state", "active") not in ("active", "ceased"):
        raise ControlError(400, "state: active or ceased")
    address = body.get("address") or {}
    people = body.get("representatives") or []
    if not isinstance(body.get("legalName"), str) or not isinstance(address, dict) or not isinstance(people, list):
        raise ControlError(400, "legalName, address {street, postalCode, city}, representatives [...]")
    for person in people:
        if not isinstance(person, dict) or not person.get("firstName") or not person.get("lastName"):
            raise ControlError(400, "representatives: [{firstName, lastName, role}]")
    return {"siren": body["siren"], "legalName": body["legalName"], "state": body.get("state", "active"),
            "nafCode": body.get("nafCode") or DEFAULT_NAF,
            "legalCategory": body.get("legalCategory") or DEFAULT_LEGAL_CATEGORY, "address": address,
            "representatives": people}


def directory_result(company: dict, *, ceased: bool = False) -> dict:
    """A company in the shape the directory answers."""
    address = company["address"]
    street = (address.get("street") or "").upper()
    number, _, rest = street.partition(" ")
    if not number.isdigit():
        number, rest = "", street
    kind, _, label = rest.partition(" ")
    postal_code, city = address.get("postalCode") or "", (address.get("city") or "").upper()
    legal_name = company["legalName"].upper()
    return {
        "siren": company["siren"],
        "nom_complet": legal_name,
        "nom_raison_sociale": legal_name,
        "etat_administratif": "C" if ceased or company["state"] == "ceased" else "A",
        "activite_principale": company["nafCode"],
        "nature_juridique": company.get("legalCategory") or DEFAULT_LEGAL_CATEGORY,
        "date_mise_a_jour": "2026-01-15T08:00:00",
        "siege": {"siret": company["siren"] + "00012", "est_siege": True, "adresse": f"{street} {postal_code} {city}",
                  "numero_voie": number or None, "type_voie": kind or None, "libelle_voie": label or None,
                  "code_postal": postal_code, "libelle_commune": city, "etat_administratif": "A"},
        "dirigeants": [{"nom": p["lastName"].upper(), "prenoms": p["firstName"].upper(), "qualite": p.get("role"),
                        "type_dirigeant": "personne physique"} for p in company["representatives"]],
    }


@dataclass
class Faults:
    unknown: set[str] = field(default_factory=set)
    ceased: set[str] = field(default_factory=set)
    delay_seconds: float = 0.0
    rate_limited: int = 0
    unavailable: int = 0
    malformed: int = 0
    retry_after_seconds: int = 1

    def update(self, body: dict) -> None:
        try:
            self.unknown.update(str(s) for s in body.get("unknown", ()))
            self.ceased.update(str(s) for s in body.get("ceased", ()))
            self.delay_seconds = float(body.get("delaySeconds", self.delay_seconds))
            self.rate_limited = int(body.get("rateLimited", self.rate_limited))
            self.unavailable = int(body.get("unavailable", self.unavailable))
            self.malformed = int(body.get("malformed", self.malformed))
            self.retry_after_seconds = int(body.get("retryAfterSeconds", self.retry_after_seconds))
        except (TypeError, ValueError):
            raise ControlError(400, "faults: unknown/ceased lists, numbers elsewhere") from None

    def as_dict(self) -> dict:
        return {"unknown": sorted(self.unknown), "ceased": sorted(self.ceased), "delaySeconds": self.delay_seconds,
                "rateLimited": self.rate_limited, "unavailable": self.unavailable, "malformed": self.malformed,
                "retryAfterSeconds": self.retry_after_seconds}


class Store:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        self.companies = {c["siren"]: _company(c) for c in demo_companies()}
        self.faults = Faults()
        self.searches = 0

    def search(self, query: str) -> list[dict]:
        query = query.strip()
        if SIREN.match(query):
            found = [self.companies[query]] if query in self.companies else []
        else:
            words = query.upper().split()
            found = [c for c in self.companies.values() if words and all(w in c["legalName"].upper() for w in words)]
        return [directory_result(c, ceased=c["siren"] in self.faults.ceased)
                for c in found if c["siren"] not in self.faults.unknown]


class Handler(SimulatorHandler):
    def _dispatch(self, method: str) -> None:
        split = urlsplit(self.path)
        route = (method, split.path.rstrip("/") or "/")
        handlers = {("GET", "/search"): self.search, ("POST", "/_control/companies"): self.put_company,
                    ("GET", "/_control/companies"): self.list_companies, ("POST", "/_control/faults"): self.set_faults,
                    ("GET", "/_control/state"): self.state, ("POST", "/_control/reset"): self.reset}
        try:
            body = self._read_body()
            handler = handlers.get(route)
            if handler is None:
                raise ControlError(404, "not found")
            handler(parse_qs(split.query), body)
        except ControlError as exc:
            self._json(exc.status, {"erreur": exc.message})

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self.close_connection = True
            raise ControlError(413, "body too large")
        return self.rfile.read(length) if length else b""

    def _json(self, status: int, data: object, headers: dict[str, str] | None = None) -> None:
        payload = json.dumps(data, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    @staticmethod
    def _loads(body: bytes) -> object:
        try:
            return json.loads(body or b"{}")
        except ValueError:
            raise ControlError(400, "JSON body expected") from None

    # --- the directory -----------------------------------------------------------------------

    def search(self, query: dict, body: bytes) -> None:
        store = self.server.store
        with store.lock:
            store.searches += 1
            faults = store.faults
            delay = faults.delay_seconds
            fault = next((name for name in ("rate_limited", "unavailable", "malformed") if getattr(faults, name)), None)
            if fault:
                setattr(faults, fault, getattr(faults, fault) - 1)
            results = store.search(query.get("q", [""])[0])
            retry_after = faults.retry_after_seconds
        if delay:
            time.sleep(delay)
        if fault == "rate_limited":
            self._json(429, {"erreur": "Trop de requêtes"}, {"Retry-After": str(retry_after)})
            return
        if fault == "unavailable":
            self._json(503, {"erreur": "Service indisponible"})
            return
        if fault == "malformed":
            self._json(200, {"resultats": "inattendu"})
            return
        try:
            page = max(1, int(query.get("page", ["1"])[0]))
            per_page = min(25, max(1, int(query.get("per_page", ["10"])[0])))
        except ValueError:
            raise ControlError(400, "page and per_page are integers") from None
        self._json(200, {"results": results[(page - 1) * per_page: page * per_page], "total_results": len(results),
                         "page": page, "per_page": per_page, "total_pages": math.ceil(len(results) / per_page)})

    # --- control ------------------------------------------------------------------------------

    def put_company(self, query: dict, body: bytes) -> None:
        company = _company(self._loads(body))
        with self.server.store.lock:
            self.server.store.companies[company["siren"]] = company
        self._json(201, company)

    def list_companies(self, query: dict, body: bytes) -> None:
        with self.server.store.lock:
            self._json(200, {"companies": list(self.server.store.companies.values())})

    def set_faults(self, query: dict, body: bytes) -> None:
        update = self._loads(body)
        if not isinstance(update, dict):
            raise ControlError(400, "a JSON object expected")
        with self.server.store.lock:
            self.server.store.faults.update(update)
            self._json(200, self.server.store.faults.as_dict())

    def state(self, query: dict, body: bytes) -> None:
        with self.server.store.lock:
            self._json(200, {"faults": self.server.store.faults.as_dict(), "searches": self.server.store.searches})

    def reset(self, query: dict, body: bytes) -> None:
        with self.server.store.lock:
            self.server.store.reset()
        self._json(200, {"reset": True})


class RegistrySimulator(BackgroundSimulator):
    """The simulator as an object: `start()`, `stop()`, `url` (the `REGISTRY_BASE_URL`), `store`."""

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__(Handler, host=host, port=port, name="registry-simulator")
        self.store = Store()
        self.server.store = self.store

    def add_company(self, company: dict) -> None:
        """What `POST /_control/companies` does, in process."""
        checked = _company(company)
        with self.store.lock:
            self.store.companies[checked["siren"]] = checked

    def set_faults(self, **faults) -> None:
        with self.store.lock:
            self.store.faults.update(faults)

    def clear_faults(self) -> None:
        with self.store.lock:
            self.store.faults = Faults()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="registry-simulator", description="Company registry simulator")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args(argv)
    simulator = RegistrySimulator(host=args.host, port=args.port)
    return run_until_stopped(simulator, f"company registry simulator at {simulator.url}")


if __name__ == "__main__":
    raise SystemExit(main())
