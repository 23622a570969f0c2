"""`vitrine worker` (the Procfile's worker): Dramatiq's own command line, started so that a stop
drains the work instead of cutting it.

A platform stopping a process (a deploy, a restart, honcho's Ctrl-C) sends SIGTERM to its whole
process group. Dramatiq's master forwards the SIGTERM it receives to its worker processes, and a
worker process that receives a second SIGTERM while draining exits at once ("Killing worker
process..."): in one group every worker process would get the platform's signal and the master's,
and the messages in progress would be cut. So the Dramatiq master runs in a session of its own,
below this small supervisor: the platform's signal reaches the supervisor, which hands it to the
master once, which hands it to each worker process once. Each then stops taking messages, gives
those in progress `WORKER_SHUTDOWN_TIMEOUT` seconds (Dramatiq's public `--worker-shutdown-timeout`)
and hands the rest back to Redis, where another worker takes them.

Should the supervisor itself die without a word (SIGKILL), the master is told by the kernel
(the parent-death signal), so no worker outlives the process the platform knows about.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import signal
import subprocess
import sys

from backend.config import Config

_PR_SET_PDEATHSIG = 1  # the prctl option naming the signal a process gets when its parent dies (Linux)


def dramatiq_command(config: Config, extra: list[str]) -> list[str]:
    """Dramatiq's command line: the shutdown bound, the actors, then the caller's own modules and
    options (`--processes`, `--threads`, `--queues`), which come last and so win."""
    return [sys.executable, "-m", "dramatiq", "--worker-shutdown-timeout", str(config.worker_shutdown_timeout * 1000),
            "actors", *extra]


def _die_with_parent() -> None:
    """In the child before it runs Dramatiq: SIGTERM when the supervisor goes, however it goes."""
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def run_worker(config: Config, extra: list[str]) -> int:
    """Run Dramatiq's master in its own session until it ends; its exit status."""
    master = subprocess.Popen(dramatiq_command(config, extra), start_new_session=True,
                              preexec_fn=_die_with_parent if sys.platform == "linux" else None)
    forwarded = False

    def forward(signum, frame) -> None:
        nonlocal forwarded
        if not forwarded:  # one stop request: a second SIGTERM to Dramatiq's processes would kill them
            forwarded = True
            master.send_signal(signal.SIGTERM)

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, forward)
    return master.wait()
