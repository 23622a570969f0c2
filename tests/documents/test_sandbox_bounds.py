"""Templates render in bounded worker processes: a template that would take gigabytes or minutes
is refused (400 VALIDATION_ERROR, `details.reason = template_limit`) when saved or previewed,
quickly, and the web process does not grow."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from backend.documents.render_pool import RenderPool
from backend.documents.sandbox import one_line
from backend.errors import ValidationError
from tests.factories import make_admin, signed_in

BASE = "/api/admin/document-templates"
KEY = "cgu_acceptance"
FOUR_GB = '# CGU\n\n{{ "%(a)4000000000s" % {"a": 1} }}\n'
FOUR_GB_NESTED = '# CGU\n\n{{ "%((a))4000000000s" % {"(a)": 1} }}\n'
ONE_MINUTE = "# CGU\n\n{% set s = 'a' * 100000 %}{% for x in s %}{% for y in s %}{% endfor %}{% endfor %}\n"
# Fast with the catalog's short examples, a CPU sink with a long organization name.
QUADRATIC = "# CGU\n\n{% for x in organizationName %}{% for y in organizationName %}{% endfor %}{% endfor %}\n"


def _rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


@pytest.fixture
def as_admin():
    return signed_in(make_admin())


def _refused(answer) -> None:
    assert answer.status_code == 400, answer.json
    assert answer.json["error"]["code"] == "VALIDATION_ERROR"
    assert answer.json["error"]["details"]["reason"] == "template_limit"


def test_gigabyte_and_minute_templates_are_refused_quickly_without_growing_the_web_process(
        client, seeded, as_admin):
    client.simulate_post(f"{BASE}/{KEY}/preview", headers=as_admin)  # workers started, fonts loaded
    before = _rss_bytes()
    for content in (FOUR_GB, FOUR_GB_NESTED, ONE_MINUTE):
        started = time.monotonic()
        _refused(client.simulate_post(f"{BASE}/{KEY}/draft", headers=as_admin, json={"content": content}))
        assert time.monotonic() - started < 10  # the bound: the renderer is stopped well before
    assert client.simulate_post(f"{BASE}/{KEY}/draft", headers=as_admin, json={"content": QUADRATIC}).status_code == 201
    started = time.monotonic()
    _refused(client.simulate_post(f"{BASE}/{KEY}/preview", headers=as_admin,
                                  json={"context": {"organizationName": "a" * 200_000}}))
    assert time.monotonic() - started < 10
    assert _rss_bytes() - before < 50 * 1024 * 1024
    # The pool recovered: a normal preview still renders.
    client.simulate_delete(f"{BASE}/{KEY}/draft", headers=as_admin, json={"reason": "essai"})
    assert client.simulate_post(f"{BASE}/{KEY}/preview", headers=as_admin).status_code == 200


def test_a_worker_over_its_memory_limit_is_replaced():
    pool = RenderPool(size=1)
    try:
        assert pool.render("{{ a }}", {"a": "x"})[0] == "x"
        worker = pool._idle.get_nowait()
        pid = worker.process.pid
        vm = next(int(line.split()[1]) * 1024 for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                  if line.startswith("VmSize:"))
        pool._idle.put(worker)
        pool.memory_bytes = vm + 16 * 1024 * 1024
        # Twelve 3.6 MB strings (900,000 4-byte characters each), every one within the sandbox's
        # size checks, together over the limit.
        hog = "{% set s = '\U0001F600' * 100000 %}{% set t = s ~ s ~ s ~ s ~ s ~ s ~ s ~ s ~ s %}" + "".join(
            f"{{% set u{i} = t ~ '{i}' %}}" for i in range(12)) + "{{ u0|length + u11|length }}"
        with pytest.raises(ValidationError) as refused:
            pool.render(hog, {})
        assert refused.value.details["reason"] == "template_limit"
        pool.memory_bytes = RenderPool.memory_bytes
        assert pool.render("{{ a }}", {"a": "y"})[0] == "y"
        assert pool._idle.get_nowait().process.pid != pid
    finally:
        pool.close()


def test_a_worker_over_its_cpu_time_is_killed_and_replaced():
    pool = RenderPool(size=1, cpu_seconds=1, wall_seconds=30)
    try:
        with pytest.raises(ValidationError) as refused:
            pool.render(ONE_MINUTE, {})
        assert refused.value.details["reason"] == "template_limit"
        assert pool.render("{{ a }}", {"a": "z"})[0] == "z"
    finally:
        pool.close()


def test_one_line_is_linear_and_matches_the_rule():
    assert one_line("a \n\n  b\r\nc") == "a b c"
    assert one_line("\n") == " " and one_line("a\n") == "a " and one_line("a  b") == "a  b"
    spaces = " " * 2_000_000 + "x"  # the old regex took minutes on this
    assert one_line(spaces + "\n") == spaces + " "
