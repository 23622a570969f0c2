"""ops/gunicorn.conf.py: settings gunicorn accepts, and a worker's boot heap frozen out of the collector."""

import gc
import runpy

from gunicorn.config import Config

from tests.conftest import ROOT


def test_a_worker_freezes_what_it_loaded_and_gunicorn_accepts_the_hook():
    settings = runpy.run_path(str(ROOT / "ops" / "gunicorn.conf.py"))
    config = Config()
    config.set("post_worker_init", settings["post_worker_init"])  # gunicorn checks a one-argument callable
    gc.unfreeze()
    try:
        config.post_worker_init(None)
        assert gc.get_freeze_count() > 10_000  # the modules and objects loaded so far
    finally:
        gc.unfreeze()
