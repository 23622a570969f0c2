"""A small pool of render workers (`render_worker`): template code runs there, never in the web
or actor process, with hard bounds on memory (`RLIMIT_AS`), CPU time (`RLIMIT_CPU`) and wall
time (the parent kills a worker that does not answer in time).

Workers are started on first use and kept (rendering stays fast: one pipe round trip per
document); one that died or was killed is replaced by the next render. A render waits for a free
worker when all are busy. An over-limit template is a VALIDATION_ERROR whose `details.reason` is
`template_limit`.
"""

from __future__ import annotations

import json
import os
import pickle
import queue
import select
import struct
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

from backend.errors import ServiceUnavailable, ValidationError

LIMIT_REASON = "template_limit"
HEADER = struct.Struct(">I")  # the length before each job and answer on the worker's pipes
MEMORY_BYTES = 768 * 1024 * 1024  # address space of a worker: Python, Jinja and the template's data
CPU_SECONDS = 3
WALL_SECONDS = 6
POOL_SIZE = 2
# An answer is at most the sandbox's MAX_TEXT characters as JSON (escaped: up to 6 bytes each).
MAX_ANSWER_BYTES = 8 * 1024 * 1024


def over_limit(message: str) -> ValidationError:
    return ValidationError(f"the template exceeds the rendering limits: {message}", reason=LIMIT_REASON)


class _Worker:
    def __init__(self) -> None:
        self.process = subprocess.Popen(  # our own module, with this interpreter
            [sys.executable, "-m", "backend.documents.render_worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, close_fds=True,
        )

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            stream.close()

    def _read(self, size: int, deadline: float) -> bytes:
        out = bytearray()
        fd = self.process.stdout.fileno()
        while len(out) < size:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                raise TimeoutError
            chunk = os.read(fd, size - len(out))
            if not chunk:
                raise EOFError
            out += chunk
        return bytes(out)

    def ask(self, job: bytes, wall_seconds: float) -> dict:
        self.process.stdin.write(HEADER.pack(len(job)) + job)
        self.process.stdin.flush()
        deadline = time.monotonic() + wall_seconds
        (size,) = HEADER.unpack(self._read(HEADER.size, deadline))
        if size > MAX_ANSWER_BYTES:
            raise EOFError
        return json.loads(self._read(size, deadline))


@dataclass
class RenderPool:
    size: int = POOL_SIZE
    memory_bytes: int = MEMORY_BYTES
    cpu_seconds: int = CPU_SECONDS
    wall_seconds: float = WALL_SECONDS

    def __post_init__(self) -> None:
        self._idle: queue.LifoQueue[_Worker] = queue.LifoQueue()
        self._lock = threading.Lock()
        self._started = 0

    def _acquire(self) -> _Worker:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        with self._lock:
            if self._started < self.size:
                self._started += 1
                try:
                    return _Worker()
                except BaseException:
                    self._started -= 1
                    raise
        try:  # every worker busy: wait for one, as long as a render may take
            return self._idle.get(timeout=self.wall_seconds * 2)
        except queue.Empty:
            raise ServiceUnavailable("every document renderer is busy; retry shortly") from None

    def _retire(self, worker: _Worker) -> None:
        worker.kill()
        with self._lock:
            self._started -= 1

    def render(self, content: str, variables: dict) -> tuple[str, list[str]]:
        """(markdown, anchors) of `content` rendered with `variables` in a bounded worker."""
        job = pickle.dumps((content, variables, self.cpu_seconds, self.memory_bytes))
        worker = self._acquire()
        try:
            answer = worker.ask(job, self.wall_seconds)
        except TimeoutError:
            self._retire(worker)
            raise over_limit(f"it did not finish within {self.wall_seconds} s") from None
        except (EOFError, OSError, ValueError):
            # The worker died: its CPU limit (SIGXCPU) or memory limit ended it mid-render.
            self._retire(worker)
            raise over_limit("it used more CPU time or memory than allowed") from None
        except BaseException:
            self._retire(worker)
            raise
        if answer.get("exiting") or worker.process.poll() is not None:
            self._retire(worker)  # it answered, then leaves (after a MemoryError)
        else:
            self._idle.put(worker)
        if "ok" in answer:
            markdown, anchors = answer["ok"]
            return markdown, anchors
        if answer.get("limit"):
            raise ValidationError(answer["error"], reason=LIMIT_REASON)
        raise ValidationError(answer["error"])

    def close(self) -> None:
        while True:
            try:
                self._retire(self._idle.get_nowait())
            except queue.Empty:
                return


_POOL = RenderPool()


def default_pool() -> RenderPool:
    return _POOL
