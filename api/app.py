"""`create_app()`: the Falcon WSGI application (gunicorn: `api.app:create_app()`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import dramatiq
import falcon
import swagger_ui_bundle

from api import conflicts, errors, json_media, openapi
from api.access import Route
from api.middleware import (
    AccountRateLimit,
    BodyLimit,
    CanonicalPath,
    CountRequests,
    DatabaseSession,
    RateLimit,
    RefuseNul,
    RequestId,
)
from api.policy import Policy
from api.ratelimit import RateLimiter
from api.requests import Request
from api.routes import all_routes
from api.telemetry import Telemetry
from backend.config import Config
from backend.einvoicing.operator_client import OperatorClient
from backend.onboarding.provider import SignatureProvider
from backend.onboarding.registry import CompanyRegistry
from backend.runtime import boot
from storage import Storage


@dataclass
class Deps:
    """What resources are built with: made once per process and passed in."""

    config: Config
    storage: Storage
    esign: SignatureProvider
    operator: OperatorClient
    registry: CompanyRegistry
    telemetry: Telemetry
    limiter: RateLimiter
    queue_sizes: Callable[[], list[dict]] = list  # per Dramatiq queue: messages, delayed, dead
    routes: list[Route] = field(default_factory=list)


class App(falcon.App):
    """The Falcon app, carrying the dependencies it was built with (`app.deps`)."""

    deps: Deps


def create_app(config: Config | None = None, **clients) -> App:
    """The app of `config`; `clients` given by name replace those boot builds (tests)."""
    runtime = boot(config, role="web", **clients)
    import actors  # noqa: F401  (the broker the outbox hands committed work to)
    from actors.broker import queue_sizes

    deps = Deps(
        config=runtime.config,
        storage=runtime.storage,
        esign=runtime.esign,
        operator=runtime.operator,
        registry=runtime.registry,
        telemetry=Telemetry(),
        limiter=RateLimiter(runtime.config.rate_limit_storage_url or runtime.config.redis_url),
        queue_sizes=lambda: queue_sizes(dramatiq.get_broker()),
    )
    app = App(
        request_type=Request,
        middleware=[
            CanonicalPath(),
            RequestId(),
            RefuseNul(),
            CountRequests(deps.telemetry),
            RateLimit(deps.limiter, deps.config.trusted_proxy_count),
            BodyLimit(),
            DatabaseSession(),
            Policy(lambda: deps.routes, deps.config.public_base_url),
            AccountRateLimit(deps.limiter),
        ]
    )
    app.req_options.strip_url_path_trailing_slash = True
    json_media.install(app)
    errors.register(app)
    conflicts.register(app)
    deps.routes = all_routes(deps)
    for route in deps.routes:
        app.add_route(route.path, conflicts.retrying(route.resource),
                      **({"suffix": route.suffix} if route.suffix else {}))
    app.add_static_route("/api/docs/static", swagger_ui_bundle.swagger_ui_path)
    app.add_sink(openapi.root_redirect, r"^/$")  # `/` leads to the API docs
    app.deps = deps
    return app
