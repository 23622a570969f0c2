"""Nothing outlives its `vitrine dev`: neither its processes nor the embedded servers.

`vitrine dev` stops its children and its embedded PostgreSQL and Redis when it stops. When it is
killed outright (SIGKILL: `script(1)` and some terminals do that shortly after the terminal goes
away), it cannot. This guard, started by `vitrine dev` in a session of its own (the terminal's
hang-up does not reach it), then does it:

1. `vitrine dev` tells it, on the guard's standard input, the process group of each child it
   starts (`+PGID`) and of each one it has ended (`-PGID`). End of input means `vitrine dev` is
   gone.
2. It sends SIGTERM to the groups still listed (the children also get one from the kernel), waits
   up to `--grace` seconds for them to end, then SIGKILLs what is left. A child can be stuck
   without this: a Dramatiq worker process blocks writing its log lines to its main process once
   nobody reads that one's output (the dead supervisor read it).
3. It takes the data directory's lock and stops the embedded servers still running (a no-op
   after a clean stop). When another `vitrine dev` already owns the directory it leaves them to
   that one.

    python -m ops.devguard [--grace SECONDS] PID DATA_DIR [postgres] [redis]
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path

from ops.datadir import LOCK_NAME

GRACE = 10.0  # seconds the dead supervisor's children get to end on their own SIGTERM


class Guard:
    """The supervisor's end of the guard: the process, and the pipe that lists the groups."""

    def __init__(self, data_dir: Path, servers: list[str], grace: float = GRACE) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "ops.devguard", "--grace", str(grace), str(os.getpid()), str(data_dir), *servers],
            start_new_session=True, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def _tell(self, line: str) -> None:
        with contextlib.suppress(OSError, ValueError):  # a guard that is gone cannot help any more
            self.process.stdin.write(f"{line}\n".encode())
            self.process.stdin.flush()

    def watch(self, pgid: int) -> None:
        self._tell(f"+{pgid}")

    def forget(self, pgid: int) -> None:
        self._tell(f"-{pgid}")


def start(data_dir: Path, *, postgres: bool, redis: bool) -> Guard:
    """Start the guard of this process, naming the embedded servers it must stop."""
    return Guard(data_dir, [name for name, used in (("postgres", postgres), ("redis", redis)) if used])


def read_groups(lines: Iterable[bytes]) -> set[int]:
    """The groups still listed when the input ends (when the supervisor is gone)."""
    groups: set[int] = set()
    for line in lines:
        text = line.decode("ascii", errors="replace").strip()
        with contextlib.suppress(ValueError):
            if text.startswith("+"):
                groups.add(int(text[1:]))
            elif text.startswith("-"):
                groups.discard(int(text[1:]))
    return groups


def _signal(pgid: int, signum: int) -> bool:
    """Signal a process group; False when it has no process left."""
    try:
        os.killpg(pgid, signum)
    except ProcessLookupError:
        return False
    except PermissionError:  # not ours (cannot happen for the supervisor's own groups)
        return False
    return True


def end_groups(groups: set[int], grace: float) -> None:
    """SIGTERM, up to `grace` seconds to end, then SIGKILL for what is left."""
    alive = {pgid for pgid in groups if _signal(pgid, signal.SIGTERM)}
    deadline = time.monotonic() + grace
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = {pgid for pgid in alive if _signal(pgid, 0)}
    for pgid in alive:
        _signal(pgid, signal.SIGKILL)


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


def stop_servers(data_dir: Path, servers: set[str]) -> None:
    try:
        handle = (data_dir / LOCK_NAME).open("r")
    except OSError:
        return  # the data directory is gone
    with handle:
        try:  # held, not written: the file keeps saying who owns the directory
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return  # another `vitrine dev` owns the directory and its servers now
        from backend import embedded  # imported once needed: the guard waits with little memory

        if "redis" in servers:
            with contextlib.suppress(Exception):  # PostgreSQL is stopped whatever Redis does
                embedded.stop_redis(data_dir)
        if "postgres" in servers:
            embedded.stop_postgres(data_dir)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m ops.devguard")
    parser.add_argument("--grace", type=float, default=GRACE)
    parser.add_argument("pid", type=int)
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("servers", nargs="*", help="postgres, redis: the embedded servers to stop")
    args = parser.parse_args(argv)
    if set(args.servers) - {"postgres", "redis"}:
        parser.error(f"unknown servers: {args.servers}")
    groups = read_groups(sys.stdin.buffer)  # until the supervisor's end of the pipe closes
    wait_for_exit(args.pid)
    end_groups(groups, args.grace)  # its children first: they may still use the servers
    if args.servers:
        stop_servers(args.data_dir, set(args.servers))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
