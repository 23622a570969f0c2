"""`vitrine clock` (the Procfile's clock): periodiq's scheduler, made to survive its broker.

periodiq sends each due periodic actor at the top of its minute; a send that fails (Redis away)
raised out of its loop and stopped the clock with a traceback. Here a failed send is logged and
the clock waits for the next tick, when Redis may be back; the job itself is idempotent and runs
at the next tick anyway.
"""

from __future__ import annotations

import signal
import time

import pendulum
from periodiq import Scheduler

from backend.logs import get_logger

log = get_logger("clock")


class Clock(Scheduler):
    def send_actors(self, actors, now) -> None:
        for actor in actors:
            try:
                actor.send_with_options(scheduled_at=str(now))
            except Exception as exc:
                log.error(
                    "periodic job not scheduled; the next tick tries again",
                    extra={"fields": {"actor": actor.actor_name, "error": f"{type(exc).__name__}: {exc}"}},
                )


def periodic_actors(broker) -> list:
    return [actor for actor in broker.actors.values() if "periodic" in actor.options]


def boot_clock() -> None:
    """Boot as the clock, then declare the actors (which would otherwise boot as the worker)."""
    from backend.runtime import boot

    boot(role="clock")
    import actors  # noqa: F401  (sets up the broker, declares the actors)


def run_clock() -> int:
    import dramatiq

    boot_clock()

    scheduled = periodic_actors(dramatiq.get_broker())
    log.info("clock started", extra={"fields": {
        "schedules": {actor.actor_name: str(actor.options["periodic"]) for actor in scheduled}}})
    clock = Clock(actors=scheduled)
    # SIGTERM (the platform stopping the process) ends the loop between two ticks.
    signal.signal(signal.SIGTERM, lambda signum, frame: clock.alarm_q.put_nowait(False))
    try:
        if pendulum.now().second > 55:  # as periodiq: a start late in a minute waits for the next
            time.sleep(60 - pendulum.now().second)
        clock.schedule()
        clock.loop()
    except KeyboardInterrupt:
        pass
    return 0
