"""`create_app()`: the Falcon WSGI application (gunicorn: `api.app:create_app()`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import falcon
import swagger_ui_bundle

from api import conflicts, errors
from api.access import Route
from api.middleware import BodyLimit, CountRequests, DatabaseSession, RateLimit, RequestId
from api.policy import Policy
from api.ratelimit import RateLimiter
from api.routes import all_routes
from api.telemetry import Telemetry
from backend.config import Config
from backend.runtime import boot
from storage import Storage


@dataclass
class Deps:
    """What resources are built with: made once per process and passed in."""

    config: Config
    storage: Storage
    telemetry: Telemetry
    limiter: RateLimiter
    routes: list[Route] = field(default_factory=list)


class App(falcon.App):
    """The Falcon app, carrying the dependencies it was built with (`app.deps`)."""

    deps: Deps


def create_app(config: Config | None = None) -> App:
    runtime = boot(config, role="web")
    import actors  # noqa: F401  (the broker the outbox hands committed work to)

    deps = Deps(
        config=runtime.config,
        storage=runtime.storage,
        telemetry=Telemetry(),
        limiter=RateLimiter(runtime.config.rate_limit_storage_url),
    )
    app = App(
        middleware=[
            RequestId(),
            CountRequests(deps.telemetry),
            RateLimit(deps.limiter, deps.config.trusted_proxy_count),
            BodyLimit(),
            DatabaseSession(),
            Policy(lambda: deps.routes, deps.config.public_base_url),
        ]
    )
    app.req_options.strip_url_path_trailing_slash = True
    errors.register(app)
    conflicts.register(app)
    deps.routes = all_routes(deps)
    for route in deps.routes:
        app.add_route(route.path, conflicts.retrying(route.resource),
                      **({"suffix": route.suffix} if route.suffix else {}))
    app.add_static_route("/api/docs/static", swagger_ui_bundle.swagger_ui_path)
    app.deps = deps
    return app
