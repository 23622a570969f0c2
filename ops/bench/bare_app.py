"""The reference of `vitrine bench health`: bare Falcon, one resource answering the JSON of
`GET /api/health`, no middleware, served by the same gunicorn settings as Vitrine."""

from __future__ import annotations

import time

import falcon


class Health:
    def __init__(self) -> None:
        self.started = time.monotonic()

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        # The same envelope and fields as Vitrine's, so both serialize the same amount of JSON.
        resp.media = {
            "ok": True,
            "data": {
                "service": "vitrine",
                "status": "ok",
                "environment": "bench",
                "uptimeSeconds": round(time.monotonic() - self.started, 3),
                "telemetry": {"apiRequestsTotal": 0, "apiErrorsTotal": 0},
            },
        }


def create_app() -> falcon.App:
    app = falcon.App()
    app.add_route("/api/health", Health())
    return app
