"""A worker process of `dramatiq actors` freezes what it holds once booted, the PDF renderer
included (`actors.broker.FrozenBootHeap`), as a web worker does (tests/test_gunicorn_conf.py)."""

import gc
import sys

import dramatiq

from actors.broker import WORKER_GC_THRESHOLD, FrozenBootHeap


def test_the_broker_freezes_a_worker_process_heap_once_the_actors_and_the_renderer_are_loaded():
    broker = dramatiq.get_broker()
    [hook] = [middleware for middleware in broker.middleware if isinstance(middleware, FrozenBootHeap)]
    gc.unfreeze()
    threshold = gc.get_threshold()
    try:
        hook.after_process_boot(broker)  # what `dramatiq actors` runs in each worker process
        assert "weasyprint" in sys.modules  # loaded first: its modules are frozen with the rest
        assert gc.get_freeze_count() > 10_000
        assert gc.get_threshold() == WORKER_GC_THRESHOLD != threshold  # renders collect less often
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)
