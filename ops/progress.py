"""Progress lines for long commands (`vitrine seed-demo`, `vitrine bench`, billing commands): one
line per step on stderr when it is a terminal, nothing otherwise (logs and pipes stay clean).

A terminal that goes away while a command runs (a closed window: the pty answers EIO; a closed
pipe: EPIPE; a closed stream: ValueError) costs the command nothing: the line is dropped, and so
are the next ones, as the log handler does."""

from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, command: str, *, stream=None, enabled: bool | None = None) -> None:
        self.command = command
        self.stream = stream or sys.stderr
        self.enabled = is_terminal(self.stream) if enabled is None else enabled
        self.started = time.monotonic()

    def step(self, message: str, done: int | None = None, total: int | None = None) -> None:
        """`[seed-demo 2/3 4.1 s] marketplace`: what is being done, how far, since when."""
        if not self.enabled:
            return
        count = f" {done}/{total}" if done is not None and total is not None else ""
        try:
            print(f"[{self.command}{count} {time.monotonic() - self.started:.1f} s] {message}",
                  file=self.stream, flush=True)
        except (OSError, ValueError):  # the terminal is gone: nobody to tell, the work goes on
            self.enabled = False


def is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (OSError, ValueError):  # closed already
        return False


QUIET = Progress("", enabled=False)
