"""The one place where access rules are enforced: every route's rule from the route table.

Installed last in `create_app` (after `DatabaseSession`, so the connection is open). For each
request it resolves the session cookie into `req.context.principal` (None when anonymous),
binds the audit request context (IP, user agent), refuses every state-changing request from a
foreign `Origin` (with or without a session cookie: a foreign page must not even sign a browser
in), then applies the matched route's `Access` rule: 401 without a session, 403
`FORBIDDEN` for a role, permission, membership role or KYB gate refused.
"""

from __future__ import annotations

from collections.abc import Callable

import falcon

from api.access import Access, Route
from backend.audit import bind_request_context, reset_request_context
from backend.errors import Forbidden, Unauthenticated
from backend.identity.organizations import business_open
from backend.identity.principal import Principal
from backend.identity.sessions import resolve_session

SESSION_COOKIE = "auth.session_token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_UNDECLARED = object()  # a responder without an access rule (refused with 403)


class Policy:
    def __init__(self, routes_provider: Callable[[], list[Route]], public_base_url: str) -> None:
        self._routes_provider = routes_provider
        self._routes: dict[str, Route] | None = None
        # (route template, method) -> its rule, None (no responder) or _UNDECLARED: the route
        # table and its resources are fixed once built, so each is worked out once.
        self._rules: dict[tuple[str, str], Access | object | None] = {}
        self._public_origin = public_base_url.rstrip("/").lower()

    def _route(self, template: str | None) -> Route | None:
        if self._routes is None:  # the table is complete only once create_app has built it
            self._routes = {route.path: route for route in self._routes_provider()}
        return self._routes.get(template or "")

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        req.context.principal = None
        req.context.session_id = None
        req.context.user = None
        req.context.organizations = None
        req.context.audit_token = bind_request_context(
            getattr(req.context, "client_ip", None) or req.remote_addr, req.user_agent
        )

    def process_resource(self, req, resp, resource, params) -> None:
        if resource is None:
            return  # no route: Falcon answers 404 (static files are public)
        route = self._route(req.uri_template)
        if route is None:
            # Only a route added by hand beside the table (a test's probe resource) gets here:
            # `create_app` registers the table alone, and a test checks the router against it.
            return
        rule = self._rule(route, resource, req.method)
        if rule is None:
            return  # no responder for this method: Falcon answers 405
        if req.method not in SAFE_METHODS:
            self._refuse_foreign_origin(req)
        # A resource without the database (health) never reads a session: its cookies stay unparsed.
        token = req.cookies.get(SESSION_COOKIE) if getattr(resource, "uses_database", True) else None
        if token:
            # A resource that answers the user's organizations has them read with the session.
            resolved = resolve_session(token, organizations=getattr(resource, "reads_organizations", False))
            if resolved is not None:
                req.context.principal = resolved.principal
                req.context.session_id = resolved.session_id
                req.context.user = resolved.user
                req.context.organizations = resolved.organizations
        enforce(rule, req.context.principal)

    def process_response(self, req, resp, resource, req_succeeded) -> None:
        token = getattr(req.context, "audit_token", None)
        if token is not None:
            reset_request_context(token)
            req.context.audit_token = None

    def _rule(self, route: Route, resource: object, method: str) -> Access | None:
        """The rule of the method's responder; None when the resource has no responder for the
        method (405 before 401: an undeclared method is refused the same way signed in or not)."""
        key = (route.path, method)
        try:
            rule = self._rules[key]
        except KeyError:
            rule = self._rules[key] = _rule_of(route, resource, method)
        if rule is _UNDECLARED:
            raise Forbidden("this method declares no access rule")
        return rule

    def _refuse_foreign_origin(self, req: falcon.Request) -> None:
        origin = req.get_header("Origin")
        if origin is not None and origin.rstrip("/").lower() != self._public_origin:
            raise Forbidden("cross-origin request refused", reason="origin_not_allowed")


def _rule_of(route: Route, resource: object, method: str) -> Access | object | None:
    suffix = f"_{route.suffix}" if route.suffix else ""
    if getattr(resource, f"on_{method.lower()}{suffix}", None) is None:
        return None
    try:
        return route.access_for(method)
    except KeyError:
        return _UNDECLARED


def enforce(rule: Access, principal: Principal | None) -> None:
    """Apply one access rule to the caller (signature routes verify their own HMAC)."""
    if rule.kind in ("public", "signature"):
        return
    if principal is None:
        raise Unauthenticated("sign in first")
    if rule.kind == "roles" and not principal.roles & set(rule.roles):
        raise Forbidden("your role does not allow this", requiredRoles=list(rule.roles))
    if rule.permission and not principal.has_permission(rule.permission):
        raise Forbidden("a permission is missing", requiredPermission=rule.permission)
    if principal.is_admin:
        return
    if rule.membership_roles and principal.membership_role not in rule.membership_roles:
        raise Forbidden("your role in the organization does not allow this",
                        requiredMembershipRoles=list(rule.membership_roles))
    if rule.kyb_required and not _business_open(principal):
        raise Forbidden("the organization's KYB is not approved", reason="kyb_not_approved")


def _business_open(principal: Principal) -> bool:
    if principal.organization_open is not None:  # read with the session
        return principal.organization_open
    return business_open(principal.active_organization_id)
