"""The client's IP address: the socket peer, or the N-th X-Forwarded-For entry from the right.

Only a syntactically valid IP address is ever returned from the header. When the header holds
fewer entries than `TRUSTED_PROXY_COUNT`, or the chosen entry is not an IP address, the request
did not come through the expected proxies (or a client wrote the header): the socket peer is used.
"""

from __future__ import annotations

import ipaddress

import falcon


def valid_ip(candidate: str) -> str | None:
    """The address in canonical form, or None when `candidate` is not an IPv4 or IPv6 address."""
    try:
        return str(ipaddress.ip_address(candidate.strip()))
    except ValueError:
        return None


def client_ip(req: falcon.Request, trusted_proxy_count: int) -> str:
    peer = req.remote_addr or "unknown"
    if trusted_proxy_count <= 0:
        return peer
    forwarded = [part.strip() for part in (req.get_header("X-Forwarded-For") or "").split(",")]
    forwarded = [part for part in forwarded if part]
    # Each trusted proxy appends the address it received the request from; the entry the
    # outermost of the N trusted proxies wrote, N-th from the right, is the client.
    if len(forwarded) < trusted_proxy_count:
        return peer
    return valid_ip(forwarded[-trusted_proxy_count]) or peer
