"""Actors and queues as operators see them: every actor's explicit limits, `vitrine queues`."""

import json
import os
import subprocess
import sys

import dramatiq
import pytest

from actors.broker import QUEUES
from backend import outbox
from backend.db import database, transaction
from tests.conftest import ROOT


def test_every_actor_declares_its_queue_retries_time_limit_and_throws():
    actors = dramatiq.get_broker().actors
    assert "deliver_email" in actors and "sweep_outbox" in actors
    for name, actor in actors.items():
        assert actor.queue_name in QUEUES, name
        assert {"max_retries", "time_limit", "throws"} <= set(actor.options), name


@pytest.mark.committed
def test_vitrine_queues_prints_queue_dead_letter_and_unsent_outbox_sizes():
    outbox.set_sender(None)  # as if Redis were down at commit: the row stays unsent
    try:
        with database.connection_context(), transaction():
            outbox.enqueue("noop", 1)
    finally:
        from actors.broker import install_outbox_sender

        install_outbox_sender(dramatiq.get_broker())
    command = [sys.executable, "-m", "ops.cli", "queues"]
    as_json = subprocess.run([*command, "--json"], cwd=ROOT, env=os.environ, capture_output=True, text=True,
                             timeout=120)
    assert as_json.returncode == 0, as_json.stderr
    report = json.loads(as_json.stdout)  # the report alone: log lines go to stderr
    assert report["outboxUnsent"] == 1
    assert {row["queue"] for row in report["queues"]} == set(QUEUES)
    assert all(set(row) == {"queue", "messages", "delayed", "dead"} for row in report["queues"])
    table = subprocess.run(command, cwd=ROOT, env=os.environ, capture_output=True, text=True, timeout=120)
    assert table.returncode == 0, table.stderr
    assert "dead" in table.stdout and "outbox rows not yet sent: 1" in table.stdout


def test_stop_embedded_stops_the_data_directorys_servers(tmp_path):
    from backend import embedded

    url = embedded.ensure_redis(tmp_path)
    assert embedded._answers(url)
    env = {key: value for key, value in os.environ.items() if key not in ("DATABASE_URL", "REDIS_URL")}
    done = subprocess.run([sys.executable, "-m", "ops.cli", "--data-dir", str(tmp_path), "stop-embedded"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert not embedded._answers(url)  # PostgreSQL never ran there: nothing to stop, no error
    assert "stopped" in done.stdout
