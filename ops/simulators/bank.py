"""Bank simulator: takes the platform's pain files and answers camt.053 statements settling them,
with switches for what goes wrong at a bank (docs/bank.md "The bank simulator").

In-process (tests): `BankSimulator().start()`, `sim.url`; `stop()` ends it. As a process (`vitrine
dev`, port P+3): `python -m ops.simulators.bank --port PORT`.

Routes:
- `POST /files` (the XML of a pain.008 or pain.001): 201 `{kind, transactions}`; its debits are
  credited to the account (each booked on the next statement), its transfers debited;
- `POST /statements`: the next camt.053.001.08 (XML), booking every movement due, numbered in order;
  `GET /statements/{n}` the n-th again (1 first);
- `POST /_control/returns` (JSON `{endToEndId, reason}`): the debit with that end-to-end id comes back
  on the statement that books it, with that ISO reason code (`MD06`, `AM04`...);
- `POST /_control/incoming` (JSON `{amountCents, remittance?, payerName?, payerIban?, times?,
  delayStatements?}`): a transfer from a customer, paid `times` times (twice: 2), booked that many
  statements later (late); short is a smaller `amountCents`; no remittance is an unknown payer;
- `POST /_control/account` (JSON `{iban}`): the account the statements are of (else the creditor
  account of the last pain.008, or a demo IBAN); `GET /_control/state`: files and pending
  movements; `POST /_control/reset`.
"""

from __future__ import annotations

import argparse
import json
import re
from datetime import date

from ops.simulators.bank_store import MAX_FILE, BankState, Movement
from ops.simulators.server import BackgroundSimulator, SimulatorHandler, run_until_stopped

_STATEMENT = re.compile(r"^/statements/(\d+)$")
_REASON = re.compile(r"^[A-Z0-9]{4}$")


class ControlError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


class Handler(SimulatorHandler):
    def _dispatch(self, method: str) -> None:
        path = self.path.split("?", 1)[0].rstrip("/") or "/"
        handlers = {("POST", "/files"): self.post_file, ("POST", "/statements"): self.post_statement,
                    ("POST", "/_control/returns"): self.set_return, ("POST", "/_control/incoming"): self.incoming,
                    ("POST", "/_control/account"): self.set_account, ("GET", "/_control/state"): self.state,
                    ("POST", "/_control/reset"): self.reset}
        try:
            body = self._read_body()
            found = _STATEMENT.match(path)
            if method == "GET" and found:
                self.get_statement(int(found.group(1)))
                return
            handler = handlers.get((method, path))
            if handler is None:
                raise ControlError(404, "not found")
            handler(body)
        except ControlError as exc:
            self._send(exc.status, json.dumps({"error": exc.message}).encode(), "application/json")

    def _read_body(self) -> bytes:
        body = self._body_within(MAX_FILE)
        if body is None:
            raise ControlError(413, "body too large")
        return body

    def _send(self, status: int, payload: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _json(self, status: int, data: object) -> None:
        self._send(status, json.dumps(data).encode(), "application/json")

    @staticmethod
    def _object(body: bytes) -> dict:
        try:
            value = json.loads(body or b"{}")
        except ValueError:
            raise ControlError(400, "JSON body expected") from None
        if not isinstance(value, dict):
            raise ControlError(400, "a JSON object expected")
        return value

    @property
    def bank(self) -> BankState:
        return self.server.bank

    def post_file(self, body: bytes) -> None:
        try:
            received = self.bank.receive(body)
        except Exception as exc:  # any document the simulator cannot read is the client's fault
            raise ControlError(400, f"not a pain.008 or pain.001 file: {exc}") from None
        self._json(201, received)

    def post_statement(self, body: bytes) -> None:
        self._send(201, self.bank.statement(date.today()), "application/xml")

    def get_statement(self, number: int) -> None:
        with self.bank.lock:
            documents = list(self.bank.statements)
        if not 1 <= number <= len(documents):
            raise ControlError(404, "no such statement")
        self._send(200, documents[number - 1], "application/xml")

    def set_return(self, body: bytes) -> None:
        value = self._object(body)
        reason = str(value.get("reason", ""))
        if not value.get("endToEndId") or not _REASON.match(reason):
            raise ControlError(400, "endToEndId and a four-character ISO reason code are required")
        with self.bank.lock:
            self.bank.returns[str(value["endToEndId"])] = reason
        self._json(200, {"endToEndId": value["endToEndId"], "reason": reason})

    def incoming(self, body: bytes) -> None:
        value = self._object(body)
        amount, times, delay = value.get("amountCents"), value.get("times", 1), value.get("delayStatements", 0)
        if not all(isinstance(n, int) and not isinstance(n, bool) for n in (amount, times, delay)) or amount <= 0 \
                or not 1 <= times <= 10 or not 0 <= delay <= 30:
            raise ControlError(400, "amountCents > 0, times 1-10 and delayStatements 0-30 are integers")
        self.bank.add(Movement(credit=True, amount_cents=amount, remittance=value.get("remittance"),
                               name=value.get("payerName", "Payeur inconnu"), iban=value.get("payerIban"),
                               delay=delay), times)
        self._json(201, {"pending": len(self.bank.pending)})

    def set_account(self, body: bytes) -> None:
        iban = str(self._object(body).get("iban", "")).replace(" ", "").upper()
        if not re.match(r"^[A-Z]{2}\d{2}[A-Z0-9]{10,30}$", iban):
            raise ControlError(400, "an IBAN is expected")
        with self.bank.lock:
            self.bank.iban = iban
        self._json(200, {"iban": iban})

    def state(self, body: bytes) -> None:
        with self.bank.lock:
            self._json(200, {"iban": self.bank.iban, "files": self.bank.files, "pending": len(self.bank.pending),
                             "statements": len(self.bank.statements), "balanceCents": self.bank.balance_cents})

    def reset(self, body: bytes) -> None:
        self.server.bank = BankState(iban=self.bank.iban)
        self._json(200, {"reset": True})


class BankSimulator(BackgroundSimulator):
    """The simulator as an object: `start()`, `stop()`, `url`, `bank` (its state)."""

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, iban: str | None = None) -> None:
        super().__init__(Handler, host=host, port=port, name="bank-simulator")
        self.server.bank = BankState(**({"iban": iban} if iban else {}))

    @property
    def bank(self) -> BankState:
        return self.server.bank


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bank-simulator", description="Bank simulator (pain in, camt.053 out)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--iban", default=None, help="the platform's account (default: a demo IBAN)")
    args = parser.parse_args(argv)
    simulator = BankSimulator(host=args.host, port=args.port, iban=args.iban)
    return run_until_stopped(simulator, f"bank simulator at {simulator.url}")


if __name__ == "__main__":
    raise SystemExit(main())
