"""Authentication routes of API.md: sign-up, sign-in, sign-out, session, magic link, password
reset and change, e-mail verification, role assignment, workspace resolution."""

from __future__ import annotations

import falcon

from api.access import ADMIN, PUBLIC, SESSION, Route
from api.policy import SESSION_COOKIE
from api.requests import load
from api.responses import send
from backend.config import Config
from backend.identity import accounts, memberships, sessions
from backend.identity.workspace import describe_session, resolve_path
from schemas.identity.accounts import (
    ActiveOrganizationIn,
    AssignRoleIn,
    ChangePasswordIn,
    EmailIn,
    PasswordResetConfirmIn,
    SessionOut,
    SignInIn,
    SignUpIn,
    TokenIn,
    UserOut,
    WorkspaceQuery,
)

DONE = {"done": True}


class AuthResource:
    def __init__(self, config: Config) -> None:
        self.config = config

    def client(self, req: falcon.Request) -> accounts.Client:
        return accounts.Client(ip=req.context.client_ip, user_agent=req.user_agent,
                               session_ttl_days=self.config.session_ttl_days)

    def set_cookie(self, resp: falcon.Response, token: str) -> None:
        resp.set_cookie(SESSION_COOKIE, token, max_age=self.config.session_ttl_days * 86_400, path="/",
                        secure=self.config.cookie_secure, http_only=True, same_site="Lax")

    def clear_cookie(self, resp: falcon.Response) -> None:
        resp.unset_cookie(SESSION_COOKIE, path="/", same_site="Lax")

    def signed_in(self, resp: falcon.Response, user, token: str, status: int = 200) -> None:
        self.set_cookie(resp, token)
        send(resp, {"user": UserOut().dump(user)}, status)


class SignUp(AuthResource):
    def on_post(self, req, resp) -> None:
        """Create an account and sign in.
        ---
        summary: Sign up (the user has no role until it creates or joins an organization)
        tags: [auth]
        requestBody: {content: {application/json: {schema: SignUpIn}}}
        responses:
          201: {description: signed up; sets the auth.session_token cookie; a verification e-mail is queued,
                content: {application/json: {schema: UserEnvelope}}}
          409: {description: CONFLICT, the e-mail address is taken}
        """
        body = load(req, SignUpIn())
        user, token = accounts.sign_up(email=body["email"], password=body["password"], name=body["name"],
                                       client=self.client(req))
        self.signed_in(resp, user, token, status=201)


class SignIn(AuthResource):
    def on_post(self, req, resp) -> None:
        """Sign in with e-mail and password.
        ---
        summary: Sign in
        tags: [auth]
        requestBody: {content: {application/json: {schema: SignInIn}}}
        responses:
          200: {description: signed in; sets the cookie, content: {application/json: {schema: UserEnvelope}}}
          401: {description: AUTH_INVALID_CREDENTIALS for an unknown e-mail, a wrong password or a blocked account}
        """
        body = load(req, SignInIn())
        user, token = accounts.sign_in(email=body["email"], password=body["password"], client=self.client(req))
        self.signed_in(resp, user, token)


class SignOut(AuthResource):
    def on_post(self, req, resp) -> None:
        """Revoke the session and clear the cookie.
        ---
        summary: Sign out
        tags: [auth]
        responses:
          200: {description: signed out, content: {application/json: {schema: DoneEnvelope}}}
        """
        accounts.sign_out(session_id=req.context.session_id, user_id=req.context.principal.user_id)
        self.clear_cookie(resp)
        send(resp, DONE)


class Session:
    def on_get(self, req, resp) -> None:
        """The signed-in user, its roles, permissions, organizations and workspace.
        ---
        summary: Current session
        tags: [auth]
        responses:
          200: {description: the session, content: {application/json: {schema: SessionEnvelope}}}
        """
        send(resp, SessionOut().dump(describe_session(req.context.principal, user=req.context.user)))


class ActiveOrganization:
    def on_post(self, req, resp) -> None:
        """Switch the session's active organization (must be a membership).
        ---
        summary: Set the active organization
        tags: [auth]
        requestBody: {content: {application/json: {schema: ActiveOrganizationIn}}}
        responses:
          200: {description: the updated session, content: {application/json: {schema: SessionEnvelope}}}
          403: {description: FORBIDDEN, not a member}
        """
        body = load(req, ActiveOrganizationIn())
        principal = req.context.principal
        sessions.set_active_organization(session_id=req.context.session_id, user_id=principal.user_id,
                                         organization_id=body["organizationId"])
        resolved = sessions.resolve_session(req.cookies.get(SESSION_COOKIE))
        send(resp, SessionOut().dump(describe_session(resolved.principal, user=resolved.user)))


class MagicLink(AuthResource):
    def on_post(self, req, resp) -> None:
        """E-mail a single-use sign-in link valid 15 minutes (200 whether the account exists or not).
        ---
        summary: Request a magic link
        tags: [auth]
        requestBody: {content: {application/json: {schema: EmailIn}}}
        responses:
          200: {description: always, content: {application/json: {schema: DoneEnvelope}}}
        """
        accounts.request_magic_link(email=load(req, EmailIn())["email"])
        send(resp, DONE)

    def on_get_verify(self, req, resp) -> None:
        """Open a magic link: signs in.
        ---
        summary: Verify a magic link
        tags: [auth]
        parameters: [{in: query, name: token, required: true, schema: {type: string}}]
        responses:
          200: {description: signed in; sets the cookie, content: {application/json: {schema: UserEnvelope}}}
          400: {description: VALIDATION_ERROR with details.reason invalid_token (unknown, used or expired)}
        """
        token = TokenIn().load({"token": req.get_param("token") or ""})["token"]
        user, session_token = accounts.verify_magic_link(token=token, client=self.client(req))
        self.signed_in(resp, user, session_token)


class PasswordReset:
    def on_post(self, req, resp) -> None:
        """E-mail a single-use reset token valid one hour (200 whether the account exists or not).
        ---
        summary: Request a password reset
        tags: [auth]
        requestBody: {content: {application/json: {schema: EmailIn}}}
        responses:
          200: {description: always, content: {application/json: {schema: DoneEnvelope}}}
        """
        accounts.request_password_reset(email=load(req, EmailIn())["email"])
        send(resp, DONE)

    def on_post_confirm(self, req, resp) -> None:
        """Set a new password with a reset token; the user's other sessions are revoked.
        ---
        summary: Confirm a password reset
        tags: [auth]
        requestBody: {content: {application/json: {schema: PasswordResetConfirmIn}}}
        responses:
          200: {description: password changed, content: {application/json: {schema: DoneEnvelope}}}
          400: {description: VALIDATION_ERROR with details.reason invalid_token}
        """
        body = load(req, PasswordResetConfirmIn())
        accounts.confirm_password_reset(token=body["token"], new_password=body["newPassword"],
                                        current_session_id=req.context.session_id)
        send(resp, DONE)


class ChangePassword:
    def on_post(self, req, resp) -> None:
        """Change the signed-in user's password; its other sessions are revoked.
        ---
        summary: Change password
        tags: [auth]
        requestBody: {content: {application/json: {schema: ChangePasswordIn}}}
        responses:
          200: {description: password changed, content: {application/json: {schema: DoneEnvelope}}}
          401: {description: AUTH_INVALID_CREDENTIALS, the current password is wrong}
        """
        body = load(req, ChangePasswordIn())
        accounts.change_password(user_id=req.context.principal.user_id, session_id=req.context.session_id,
                                 current_password=body["currentPassword"], new_password=body["newPassword"])
        send(resp, DONE)


class EmailVerification:
    def on_post(self, req, resp) -> None:
        """Confirm the e-mail address with the token of the verification e-mail.
        ---
        summary: Confirm e-mail verification
        tags: [auth]
        requestBody: {content: {application/json: {schema: TokenIn}}}
        responses:
          200: {description: verified, content: {application/json: {schema: UserEnvelope}}}
          400: {description: VALIDATION_ERROR with details.reason invalid_token}
        """
        user = accounts.confirm_email_verification(token=load(req, TokenIn())["token"])
        send(resp, {"user": UserOut().dump(user)})


class AssignRole:
    def on_post(self, req, resp) -> None:
        """Add a role to a user (and set its granted permissions when given); audited.
        ---
        summary: Assign a role (admin)
        tags: [auth]
        requestBody: {content: {application/json: {schema: AssignRoleIn}}}
        responses:
          200: {description: the user, content: {application/json: {schema: UserEnvelope}}}
          404: {description: NOT_FOUND, no such user}
        """
        body = load(req, AssignRoleIn())
        user = memberships.assign_role(user_id=body["userId"], role=body["role"], permissions=body["permissions"],
                                       actor_user_id=req.context.principal.user_id)
        send(resp, {"user": UserOut().dump(user)})


class WorkspaceResolve:
    def on_get(self, req, resp) -> None:
        """May the signed-in user open this front-end path, and where to send it otherwise.
        ---
        summary: Resolve a workspace path
        tags: [auth]
        parameters: [{in: query, name: path, required: true, schema: {type: string}, example: /industrial/reservations}]
        responses:
          200: {description: the decision, content: {application/json: {schema: WorkspaceResolveEnvelope}}}
        """
        path = WorkspaceQuery().load({"path": req.get_param("path") or ""})["path"]
        send(resp, resolve_path(req.context.principal, path))


def routes(deps) -> list[Route]:
    config = deps.config
    magic, reset = MagicLink(config), PasswordReset()
    return [
        Route("/api/auth/sign-up", SignUp(config), PUBLIC),
        Route("/api/auth/sign-in", SignIn(config), PUBLIC),
        Route("/api/auth/sign-out", SignOut(config), SESSION),
        Route("/api/auth/session", Session(), SESSION),
        Route("/api/auth/active-organization", ActiveOrganization(), SESSION),
        Route("/api/auth/magic-link", magic, PUBLIC),
        Route("/api/auth/magic-link/verify", magic, PUBLIC, suffix="verify"),
        Route("/api/auth/password-reset", reset, PUBLIC),
        Route("/api/auth/password-reset/confirm", reset, PUBLIC, suffix="confirm"),
        Route("/api/auth/change-password", ChangePassword(), SESSION),
        Route("/api/auth/email-verification/confirm", EmailVerification(), PUBLIC),
        Route("/api/auth/assign-role", AssignRole(), ADMIN),
        Route("/api/workspace/resolve", WorkspaceResolve(), SESSION),
    ]
