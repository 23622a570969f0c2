"""gunicorn settings for `web` (Procfile) and `vitrine dev`: threaded workers, our own JSON logs."""

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
