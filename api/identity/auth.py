"""Authentication routes of API.md: sign-up, sign-in, sign-out, session, magic link, password
reset and change, e-mail verification, role assignment, workspace resolution."""

from __future__ import annotations

import falcon

from api.access import ADMIN, PUBLIC, SESSION, Route
from api.operations import operation
from api.policy import SESSION_COOKIE
from backend.config import Config
from backend.identity import accounts, memberships, sessions
from backend.identity.secrets import new_token
from backend.identity.workspace import describe_session, resolve_path
from schemas.identity.accounts import (
    ActiveOrganizationIn,
    AssignRoleIn,
    ChangePasswordIn,
    DoneOut,
    EmailIn,
    PasswordResetConfirmIn,
    SessionOut,
    SignInIn,
    SignUpIn,
    TokenIn,
    TokenQuery,
    UserData,
    WorkspaceQuery,
    WorkspaceResolveOut,
)

DONE = {"done": True}
TAGS = ("auth",)
# The browser that asked for a magic link: only a request carrying it may use the link.
MAGIC_LINK_COOKIE = "auth.magic_link_browser"
MAGIC_LINK_COOKIE_SECONDS = 86_400  # outlives the link's 15 minutes: the same value for a day's links
INVALID_TOKEN = {400: "VALIDATION_ERROR with details.reason invalid_token (unknown, used or expired)"}


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

    def signed_in(self, resp: falcon.Response, user, token: str) -> dict:
        """Set the session cookie; the `UserData` answer."""
        self.set_cookie(resp, token)
        return {"user": user}


class SignUp(AuthResource):
    @operation("Sign up (the user has no role until it creates or joins an organization)",
               description="Create an account and sign in.", tags=TAGS, body=SignUpIn, answer=UserData, status=201,
               answer_description="signed up; sets the auth.session_token cookie; a verification e-mail is queued",
               errors={409: "CONFLICT, the e-mail address is taken"})
    def on_post(self, req, resp, body: dict) -> dict:
        user, token = accounts.sign_up(email=body["email"], password=body["password"], name=body["name"],
                                       client=self.client(req))
        return self.signed_in(resp, user, token)


class SignIn(AuthResource):
    @operation("Sign in", tags=TAGS, body=SignInIn, answer=UserData, answer_description="signed in; sets the cookie",
               errors={401: "AUTH_INVALID_CREDENTIALS for an unknown e-mail or a wrong password"})
    def on_post(self, req, resp, body: dict) -> dict:
        user, token = accounts.sign_in(email=body["email"], password=body["password"], client=self.client(req))
        return self.signed_in(resp, user, token)


class SignOut(AuthResource):
    @operation("Sign out", description="Revoke the session and clear the cookie.", tags=TAGS, answer=DoneOut,
               answer_description="signed out")
    def on_post(self, req, resp) -> dict:
        accounts.sign_out(session_id=req.context.session_id, user_id=req.context.principal.user_id)
        self.clear_cookie(resp)
        return DONE


class Session:
    reads_organizations = True  # the policy reads them with the session, in one statement

    @operation("Current session",
               description="The signed-in user, its roles, permissions, organizations and workspace.",
               tags=TAGS, answer=SessionOut, answer_description="the session")
    def on_get(self, req, resp) -> dict:
        return describe_session(req.context.principal, user=req.context.user,
                                organizations=req.context.organizations)


class ActiveOrganization:
    @operation("Set the active organization",
               description="Switch the session's active organization (must be a membership).",
               tags=TAGS, body=ActiveOrganizationIn, answer=SessionOut, answer_description="the updated session",
               errors={403: "FORBIDDEN, not a membership of the user"})
    def on_post(self, req, resp, body: dict) -> dict:
        principal = req.context.principal
        sessions.set_active_organization(session_id=req.context.session_id, user_id=principal.user_id,
                                         organization_id=body["organizationId"])
        resolved = sessions.resolve_session(req.cookies.get(SESSION_COOKIE), organizations=True)
        return describe_session(resolved.principal, user=resolved.user, organizations=resolved.organizations)


class MagicLink(AuthResource):
    @operation("Request a magic link",
               description="E-mail a single-use sign-in link valid 15 minutes (200 whether the account exists or "
                           "not). The link works only in the browser that asked: the answer sets the "
                           f"`{MAGIC_LINK_COOKIE}` cookie, which opening the link must send back.",
               tags=TAGS, body=EmailIn, answer=DoneOut, answer_description="always; sets the browser's cookie")
    def on_post(self, req, resp, body: dict) -> dict:
        browser = req.cookies.get(MAGIC_LINK_COOKIE) or ""
        browser = browser if 32 <= len(browser) <= 64 else new_token()  # ours, or a new one
        accounts.request_magic_link(email=body["email"], browser=browser)
        resp.set_cookie(MAGIC_LINK_COOKIE, browser, max_age=MAGIC_LINK_COOKIE_SECONDS, path="/api/auth/magic-link",
                        secure=self.config.cookie_secure, http_only=True, same_site="Lax")
        return DONE

    @operation("Verify a magic link",
               description="Open a magic link: signs in, in the browser that asked for it (its "
                           f"`{MAGIC_LINK_COOKIE}` cookie); 400 `invalid_token` in any other.",
               tags=TAGS, query=TokenQuery,
               answer=UserData, answer_description="signed in; sets the cookie", errors=INVALID_TOKEN)
    def on_get_verify(self, req, resp, query: dict) -> dict:
        user, session_token = accounts.verify_magic_link(
            token=query["token"], browser=req.cookies.get(MAGIC_LINK_COOKIE), client=self.client(req))
        return self.signed_in(resp, user, session_token)


class PasswordReset:
    @operation("Request a password reset",
               description="E-mail a single-use reset token valid one hour (200 whether the account exists or not).",
               tags=TAGS, body=EmailIn, answer=DoneOut, answer_description="always")
    def on_post(self, req, resp, body: dict) -> dict:
        accounts.request_password_reset(email=body["email"])
        return DONE

    @operation("Confirm a password reset",
               description="Set a new password with a reset token; the user's other sessions are revoked.",
               tags=TAGS, body=PasswordResetConfirmIn, answer=DoneOut, answer_description="password changed",
               errors=INVALID_TOKEN)
    def on_post_confirm(self, req, resp, body: dict) -> dict:
        accounts.confirm_password_reset(token=body["token"], new_password=body["newPassword"],
                                        current_session_id=req.context.session_id)
        return DONE


class ChangePassword:
    @operation("Change password",
               description="Change the signed-in user's password; its other sessions are revoked.",
               tags=TAGS, body=ChangePasswordIn, answer=DoneOut, answer_description="password changed",
               errors={401: "AUTH_INVALID_CREDENTIALS, the current password is wrong"})
    def on_post(self, req, resp, body: dict) -> dict:
        accounts.change_password(user_id=req.context.principal.user_id, session_id=req.context.session_id,
                                 current_password=body["currentPassword"], new_password=body["newPassword"])
        return DONE


class EmailVerification:
    @operation("Confirm e-mail verification",
               description="Confirm the e-mail address with the token of the verification e-mail.",
               tags=TAGS, body=TokenIn, answer=UserData, answer_description="verified", errors=INVALID_TOKEN)
    def on_post(self, req, resp, body: dict) -> dict:
        return {"user": accounts.confirm_email_verification(token=body["token"],
                                                            current_session_id=req.context.session_id)}


class AssignRole:
    @operation("Assign a role (admin)",
               description="Add a role to a user (and set its granted permissions when given); audited.",
               tags=TAGS, body=AssignRoleIn, answer=UserData, answer_description="the user",
               errors={404: "NOT_FOUND, no such user"})
    def on_post(self, req, resp, body: dict) -> dict:
        user = memberships.assign_role(user_id=body["userId"], role=body["role"], permissions=body["permissions"],
                                       actor_user_id=req.context.principal.user_id)
        return {"user": user}


class WorkspaceResolve:
    @operation("Resolve a workspace path",
               description="May the signed-in user open this front-end path, and where to send it otherwise.",
               tags=TAGS, query=WorkspaceQuery, answer=WorkspaceResolveOut, answer_description="the decision")
    def on_get(self, req, resp, query: dict) -> dict:
        return resolve_path(req.context.principal, query["path"])


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
