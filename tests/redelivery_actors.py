"""Actors for tests/test_broker_healing.py's worker processes (`dramatiq tests.redelivery_actors`):
the broker of the platform on a namespace of the test's own, and one actor that holds its first
message (until its worker is killed) and records every start in a Redis list."""

import os
import time

import dramatiq
import redis

from actors import broker as platform_broker  # (importing `actors` sets up the platform's broker)
from backend.runtime import current_runtime

config = current_runtime().config
platform_broker._broker = None  # a second broker, of the same make, on the test's namespace
broker = platform_broker.setup_broker(config, namespace=os.environ["REDELIVERY_NAMESPACE"])


@dramatiq.actor(queue_name="default", max_retries=0, time_limit=600_000)
def hold(key: str) -> None:
    client = redis.Redis.from_url(config.redis_url)
    starts = client.rpush(key, f"start {os.getpid()}")
    if starts == 1:
        time.sleep(300)  # held until the test kills this worker
    client.rpush(key, "done")
