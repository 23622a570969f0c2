"""A template whose literals grow through filters is refused by the render worker: the web process
only parses it, building no text and compiling nothing."""

from __future__ import annotations

import time
import tracemalloc
from pathlib import Path

import pytest

from backend.documents import sandbox
from backend.documents.render_pool import default_pool
from backend.documents.sandbox import MAX_NESTING
from tests.factories import make_admin, signed_in

DRAFT = "/api/admin/document-templates/cgu_acceptance/draft"
GROWTH = "{{ 'aaa'" + "|replace('a','aaaa')" * 9 + " }}\n"  # 3 * 4**9 = 786,432 characters, once folded


def _refused(client, content: str, headers: dict | None = None) -> None:
    answer = client.simulate_post(DRAFT, json={"content": content}, headers=headers or signed_in(make_admin()))
    assert answer.status_code == 400, answer.json
    assert answer.json["error"]["details"]["reason"] == "template_limit"


def test_a_draft_of_folding_filters_is_refused_fast_without_growing_the_web_process(client):
    default_pool().render("x", {})  # the render workers started
    headers = signed_in(make_admin())  # the admin's password hash and session, outside the measure
    warm = client.simulate_post(DRAFT, json={"content": "Conditions\n"}, headers=headers)
    assert warm.status_code == 201, warm.json  # what a first request pays once (imports, caches), outside it too
    # Folded while compiling in the web process, this draft would cost about 1 GB and 5 s of its
    # CPU for these 250 lines. The web process only reads the body and parses it (under a second
    # of CPU on an idle machine); the worker compiles it and refuses it. The bound is on the CPU
    # time of the request's own thread, not wall time (a loaded CI machine stretches it) nor the
    # process's (its other threads count), with room for a slower machine below the folding's 5 s.
    started = time.thread_time()
    _refused(client, GROWTH * 250, headers)
    assert time.thread_time() - started < 2.0
    tracemalloc.start()
    try:
        _refused(client, GROWTH * 60 + "fin\n", headers)  # folded, ~230 MB
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 30 * 1024 * 1024, peak


@pytest.mark.parametrize("content, depth", [
    ("{{ " + "(" * 5000 + "1" + ")" * 5000 + " }}", 5000),
    ("{% if x %}" * 1000 + "{% endif %}" * 1000, 1000),
    ("{{ x" + ".y" * 3000 + " }}", 3000),
    ("{{ " + "-" * 20000 + "1 }}", 20000),
    ("{{ 1" + "+1" * 300 + " }}", 300),
    ("{{ x" + "|upper" * 200 + " }}", 200),
])
def test_a_deeply_nested_draft_is_a_422_naming_its_depth_never_a_500(client, content, depth):
    answer = client.simulate_post(DRAFT, json={"content": content}, headers=signed_in(make_admin()))
    assert answer.status_code == 422, answer.json
    assert answer.json["error"]["code"] == "TEMPLATE_TOO_DEEP"
    assert answer.json["error"]["details"] == {"depth": depth, "maxDepth": MAX_NESTING}


def test_the_shipped_templates_nest_far_below_the_limit():
    for path in (Path(sandbox.__file__).parent / "defaults").glob("*.md"):
        assert sandbox.nesting_depth(path.read_text()) <= MAX_NESTING // 4, path.name
