"""A template whose literals grow through filters is refused by the render worker: the web process
only parses it, building no text and compiling nothing."""

from __future__ import annotations

import time
import tracemalloc

from backend.documents.render_pool import default_pool
from tests.factories import make_admin, signed_in

DRAFT = "/api/admin/document-templates/cgu_acceptance/draft"
GROWTH = "{{ 'aaa'" + "|replace('a','aaaa')" * 9 + " }}\n"  # 3 * 4**9 = 786,432 characters, once folded


def _refused(client, content: str) -> None:
    answer = client.simulate_post(DRAFT, json={"content": content}, headers=signed_in(make_admin()))
    assert answer.status_code == 400, answer.json
    assert answer.json["error"]["details"]["reason"] == "template_limit"


def test_a_draft_of_folding_filters_is_refused_fast_without_growing_the_web_process(client):
    default_pool().render("x", {})  # the render workers started
    # Folded while compiling in the web process, today: about 1 GB and 5 s for these 250 lines.
    started = time.monotonic()
    _refused(client, GROWTH * 250)
    # About 0.5 s on an idle machine (the worker's parse, compile and first line); the bound leaves
    # room for a loaded CI machine.
    assert time.monotonic() - started < 5.0
    tracemalloc.start()
    try:
        _refused(client, GROWTH * 249 + "fin\n")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 30 * 1024 * 1024, peak
