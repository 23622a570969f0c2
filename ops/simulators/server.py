"""What every simulator shares: a request handler base, a threading HTTP server with a deep
backlog that shrugs off clients that gave up, run in a background thread with
`start()`/`stop()` and as a context manager; and `run_until_stopped`, the body of a simulator run
as a process (`python -m ops.simulators.X`)."""

from __future__ import annotations

import contextlib
import os
import signal
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


class SimulatorHandler(BaseHTTPRequestHandler):
    """The request handler every simulator builds on: HTTP/1.1, quiet, GET and POST handed to
    `_dispatch(method)`."""

    server: SimulatorServer
    protocol_version = "HTTP/1.1"
    # An answer leaves in two writes (the headers, then the body): with Nagle's algorithm the body
    # waited for the client's delayed acknowledgement of the headers, some 40 ms on Linux, on every
    # answer, a wait no provider's server adds (it made a round trip to a simulator cost 40 ms).
    disable_nagle_algorithm = True

    def log_message(self, format, *args) -> None:  # the simulator stays quiet
        pass

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def _dispatch(self, method: str) -> None:
        raise NotImplementedError

    def _body_within(self, max_bytes: int) -> bytes | None:
        """The request's body; None when its `Content-Length` is over `max_bytes` (nothing read, the
        connection closed after the answer)."""
        length = int(self.headers.get("Content-Length") or 0)
        if length > max_bytes:
            self.close_connection = True
            return None
        return self.rfile.read(length) if length else b""


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


STOP_GRACE_SECONDS = 5.0  # a stop taking longer than this (a wedged client, a full pipe) ends the process


def run_until_stopped(simulator: BackgroundSimulator, banner: str) -> int:
    """Serve until SIGTERM or SIGINT, then stop within `STOP_GRACE_SECONDS`; a second signal ends
    the process at once. Started by a supervisor (`vitrine dev` sets `VITRINE_SUPERVISOR`), it also
    stops when that parent dies, so a killed `vitrine dev` never leaves a simulator holding its port."""
    stop = threading.Event()

    def on_signal(*_) -> None:
        if stop.is_set():
            os._exit(0)
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    watch_parent = bool(os.environ.get("VITRINE_SUPERVISOR"))
    parent = os.getppid()
    simulator.start()
    with contextlib.suppress(OSError):  # the supervisor may be gone already
        print(banner, flush=True)
    while not stop.wait(1.0):
        if watch_parent and os.getppid() != parent:
            break
    stopper = threading.Thread(target=simulator.stop, name="simulator-stop", daemon=True)
    stopper.start()
    stopper.join(STOP_GRACE_SECONDS)
    if stopper.is_alive():
        os._exit(0)
    return 0
