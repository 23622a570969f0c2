"""Progress lines for long commands (`vitrine seed-demo`, `vitrine bench`, billing commands): one
line per step on stderr when it is a terminal, nothing otherwise (logs and pipes stay clean)."""

from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, command: str, *, stream=None, enabled: bool | None = None) -> None:
        self.command = command
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.started = time.monotonic()

    def step(self, message: str, done: int | None = None, total: int | None = None) -> None:
        """`[seed-demo 2/3 4.1 s] marketplace`: what is being done, how far, since when."""
        if not self.enabled:
            return
        count = f" {done}/{total}" if done is not None and total is not None else ""
        print(f"[{self.command}{count} {time.monotonic() - self.started:.1f} s] {message}",
              file=self.stream, flush=True)


QUIET = Progress("", enabled=False)
