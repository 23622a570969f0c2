"""The embedded servers never outlive their `vitrine dev`.

`vitrine dev` stops its embedded PostgreSQL and Redis when it stops. When it is killed outright
(SIGKILL: `script(1)` and some terminals do that shortly after the terminal goes away), it cannot:
this guard, started by `vitrine dev` in a session of its own (the terminal's hang-up does not reach
it), waits for it to end, then takes the data directory's lock and stops the servers still
running (a no-op after a clean stop). When another `vitrine dev` already owns the directory it leaves them to that one.

    python -m ops.devguard PID DATA_DIR [postgres] [redis]
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import subprocess
import sys
from pathlib import Path

from ops.datadir import LOCK_NAME


def start(data_dir: Path, *, postgres: bool, redis: bool) -> subprocess.Popen | None:
    """Start the guard of this process (None when no embedded server is used)."""
    servers = [name for name, used in (("postgres", postgres), ("redis", redis)) if used]
    if not servers:
        return None
    return subprocess.Popen([sys.executable, "-m", "ops.devguard", str(os.getpid()), str(data_dir), *servers],
                            start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def wait_for_exit(pid: int) -> None:
    """Block until process `pid` has ended (a pidfd: no polling, no pid reuse)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        select.select([fd], [], [])
    finally:
        os.close(fd)


def main(argv: list[str]) -> int:
    pid, data_dir, servers = int(argv[0]), Path(argv[1]), set(argv[2:])
    wait_for_exit(pid)
    try:
        handle = (data_dir / LOCK_NAME).open("r")
    except OSError:
        return 0  # the data directory is gone
    with handle:
        try:  # held, not written: the file keeps saying who owns the directory
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return 0  # another `vitrine dev` owns the directory and its servers now
        from backend import embedded  # imported once needed: the guard waits with little memory

        if "redis" in servers:
            with contextlib.suppress(Exception):  # PostgreSQL is stopped whatever Redis does
                embedded.stop_redis(data_dir)
        if "postgres" in servers:
            embedded.stop_postgres(data_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
