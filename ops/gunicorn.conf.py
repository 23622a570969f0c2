"""gunicorn settings for `web` (Procfile) and `vitrine dev`: threaded workers, our own JSON logs."""

import gc
import os

bind = f"{os.environ.get('HOST', '0.0.0.0')}:{os.environ.get('PORT', '8000')}"  # noqa: S104 (PaaS routers connect from outside)
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
threads = int(os.environ.get("WEB_THREADS", "8"))
worker_class = "gthread"
timeout = int(os.environ.get("WEB_TIMEOUT", "30"))
graceful_timeout = 20
keepalive = 5
accesslog = None
errorlog = "-"
loglevel = "warning"
limit_request_line = 8190
forwarded_allow_ips = "*" if int(os.environ.get("TRUSTED_PROXY_COUNT", "0") or 0) > 0 else "127.0.0.1"
# No control socket (recent gunicorn opens one under $HOME, shared by every gunicorn of the user; unused here;
# older versions ignore the setting).
control_socket_disable = True
# gunicorn's own lines (worker timeouts, crashes) as JSON log lines too, on stdout like the app's.
logconfig_dict = {
    "root": {"level": "WARNING", "handlers": []},
    "loggers": {
        "gunicorn.error": {"level": loglevel.upper(), "handlers": ["json"], "propagate": False},
        "gunicorn.access": {"level": "WARNING", "handlers": [], "propagate": False},
    },
    "handlers": {"json": {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stdout"}},
    "formatters": {"json": {"()": "backend.logs.JsonFormatter"}},
}


def post_worker_init(worker) -> None:
    """Once the worker has loaded the app: what it loaded (modules, the app, its routes and
    schemas) lives as long as the worker, so it leaves the cyclic garbage collector's generations.
    Otherwise each full collection walks it all again, a pause for whichever request triggers one,
    which shows in the tail latency of the heavier routes. What requests allocate is collected as
    before."""
    gc.collect()
    gc.freeze()
