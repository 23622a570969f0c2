"""The child process that renders admin-written templates (`python -m backend.documents.render_worker`).

It reads jobs from stdin and writes answers to stdout, each a 4-byte big-endian length and a
payload: a job is a pickle from the web process (trusted) `(content, variables, cpu_seconds,
memory_bytes)`; an answer is JSON (the web process never unpickles what template code produced):
`{"ok": [markdown, anchors]}` or `{"error": message, "limit": bool, "exiting"?: true}`.

Before the first job it takes its limits: address space (`RLIMIT_AS`, the job's `memory_bytes`)
and CPU time (`RLIMIT_CPU`, the job's `cpu_seconds` on top of what it used so far; SIGXCPU then
ends the process). The parent adds the wall-clock timeout and replaces a worker that died. A
worker that hit a MemoryError answers, then exits: its heap is not trusted any more.
"""

from __future__ import annotations

import json
import os
import pickle
import resource
import sys

from backend.documents.render_pool import HEADER


def read_frame(stream) -> bytes | None:
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        return None
    (size,) = HEADER.unpack(header)
    payload = stream.read(size)
    return payload if len(payload) == size else None


def write_frame(stream, payload: bytes) -> None:
    stream.write(HEADER.pack(len(payload)) + payload)
    stream.flush()


def _cpu_used() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _limit(cpu_seconds: int, memory_bytes: int) -> None:
    _, cpu_hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = int(_cpu_used()) + 1 + cpu_seconds
    resource.setrlimit(resource.RLIMIT_CPU, (soft if cpu_hard == resource.RLIM_INFINITY else min(soft, cpu_hard),
                                             cpu_hard))
    _, as_hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes if as_hard == resource.RLIM_INFINITY
                                            else min(memory_bytes, as_hard), as_hard))


def render(content: str, variables: dict) -> dict:
    from jinja2.sandbox import SecurityError  # noqa: F401  (imported before the limits apply)

    from backend.documents import sandbox
    from backend.errors import ValidationError

    try:
        markdown, anchors = sandbox.render_in_process(content, variables)
    except ValidationError as exc:
        return {"error": exc.message, "limit": bool(exc.details.get("reason") == sandbox.LIMIT_REASON)}
    return {"ok": [markdown, anchors]}


def serve(jobs, answers) -> None:
    from backend.documents import sandbox  # noqa: F401  (imports happen before the limits)

    while True:
        frame = read_frame(jobs)
        if frame is None:
            return  # the parent closed the pipe (or exited): nothing more to do
        content, variables, cpu_seconds, memory_bytes = pickle.loads(frame)  # noqa: S301 (from the parent)
        _limit(cpu_seconds, memory_bytes)
        try:
            answer = render(content, variables)
        except MemoryError:
            answer, exhausted = {"error": "the template needs more memory than allowed", "limit": True,
                                 "exiting": True}, True
        else:
            exhausted = False
        write_frame(answers, json.dumps(answer).encode("utf-8"))
        if exhausted:
            return


def main() -> None:
    # The answers get a private copy of stdout; anything else printed goes to stderr.
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    serve(sys.stdin.buffer, answers)


if __name__ == "__main__":
    main()
