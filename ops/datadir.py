"""One owner per data directory: the `vitrine dev` that runs on it holds `<data dir>/dev.lock`.

The lock is an `flock` on the file, so it dies with its process whatever the way (no stale lock
after a `kill -9`); the file says who holds it (pid and port) for the messages of the others.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from dataclasses import dataclass
from pathlib import Path

LOCK_NAME = "dev.lock"


@dataclass(frozen=True)
class Owner:
    pid: int
    port: int


class DataDirBusy(Exception):
    def __init__(self, data_dir: Path, holder: Owner | None) -> None:
        who = f"pid {holder.pid}, port {holder.port}" if holder else "another process"
        super().__init__(
            f"data directory {data_dir} is already used by vitrine dev ({who}); stop it first "
            "or choose another --data-dir"
        )
        self.holder = holder


def _read(path: Path) -> Owner | None:
    try:
        data = json.loads(path.read_text() or "{}")
        return Owner(pid=int(data["pid"]), port=int(data["port"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def owner(data_dir: Path) -> Owner | None:
    """The live `vitrine dev` holding `data_dir`, or None."""
    path = data_dir / LOCK_NAME
    if not path.exists():
        return None
    with path.open("r") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read(path) or Owner(pid=0, port=0)
        fcntl.flock(handle, fcntl.LOCK_UN)
    return None


class DataDirLock:
    """Held for the life of a `vitrine dev`: `acquire()` raises DataDirBusy naming the holder."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.path = data_dir / LOCK_NAME
        self._handle = None

    def acquire(self, port: int) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        handle = os.fdopen(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600), "r+")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise DataDirBusy(self.data_dir, _read(self.path)) from None
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps({"pid": os.getpid(), "port": port}))
        handle.flush()
        self._handle = handle

    def release(self) -> None:
        if self._handle is None:
            return
        with contextlib.suppress(OSError):
            self._handle.seek(0)
            self._handle.truncate()
        fcntl.flock(self._handle, fcntl.LOCK_UN)
        self._handle.close()
        self._handle = None
