"""What production refuses: demo logins, secrets sent over plain HTTP, a token call redirected
elsewhere with the client secret."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from backend.config import ConfigError, load_config
from backend.einvoicing.operator_client import OdpClient, OperatorRejected
from backend.identity.models import User
from ops import cli
from tests.production_settings import PRODUCTION, production_over


def test_seed_demo_refuses_to_run_in_production(monkeypatch, capsys):
    for name, value in production_over({}).items():
        monkeypatch.setenv(name, value)
    assert cli.main(["seed-demo"]) == 1
    assert "ENVIRONMENT=production" in capsys.readouterr().err
    assert not User.select().where(User.email == "admin@vitrine.example").exists()


@pytest.mark.parametrize("name", ["ESIGN_BASE_URL", "ODP_BASE_URL", "ODP_TOKEN_URL"])
def test_provider_urls_must_be_https_in_production(name):
    production = PRODUCTION
    with pytest.raises(ConfigError, match=f"{name} must be an https:// URL in production"):
        load_config({**production, name: "http://provider.example/api"})
    assert load_config({**production, name: "https://provider.example/api"})
    assert load_config({"ENVIRONMENT": "development", name: "http://127.0.0.1:9000"})  # the simulators


class _Redirecting(BaseHTTPRequestHandler):
    """A token endpoint that sends the client elsewhere with a 307 (which keeps the POST body)."""

    received: list[bytes] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/token":
            self.send_response(307)
            self.send_header("Location", "/elsewhere")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.received.append(body)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        payload = b'{"access_token": "t", "expires_in": 60}'
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args) -> None:
        pass


def test_the_oauth_token_call_never_follows_a_redirect():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Redirecting)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        client = OdpClient(base_url=base, token_url=f"{base}/token", client_id="id", client_secret="s3cret",
                           entity_id="e")
        with pytest.raises(OperatorRejected, match="307"):
            client.tokens.get()
    finally:
        server.shutdown()
        server.server_close()
    assert _Redirecting.received == []  # the secret went nowhere else
