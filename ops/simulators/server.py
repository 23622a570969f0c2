"""What every simulator shares: a threading HTTP server with a deep backlog that shrugs off
clients that gave up, run in a background thread with `start()`/`stop()` and as a context manager."""

from __future__ import annotations

import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class SimulatorServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the default backlog (5) resets bursts of concurrent API calls

    def handle_error(self, request, client_address) -> None:
        """A client that gave up (a timeout on a slow answer) is expected: no traceback for it."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class BackgroundSimulator:
    """A simulator's server in a daemon thread; `url` is its base address."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], *, host: str, port: int, name: str) -> None:
        self.server = SimulatorServer((host, port), handler)
        self.url = f"http://{host}:{self.server.server_address[1]}"
        # A short poll interval: stop() returns quickly (tests start and stop many simulators).
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), name=name, daemon=True)

    def start(self):
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
