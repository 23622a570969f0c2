"""The client's IP address: the socket peer, or the N-th X-Forwarded-For entry from the right."""

from __future__ import annotations

import falcon


def client_ip(req: falcon.Request, trusted_proxy_count: int) -> str:
    peer = req.remote_addr or "unknown"
    if trusted_proxy_count <= 0:
        return peer
    forwarded = [part.strip() for part in (req.get_header("X-Forwarded-For") or "").split(",") if part.strip()]
    if not forwarded:
        return peer
    # Each trusted proxy appends the address it received the request from; the entry the
    # outermost of the N trusted proxies wrote, N-th from the right, is the client.
    index = len(forwarded) - trusted_proxy_count
    return forwarded[max(index, 0)]
