"""Accounts, sessions and workspace routing: request and response shapes."""

from __future__ import annotations

from marshmallow import EXCLUDE, Schema, fields, validate

from backend import clock
from backend.identity.models import KybStatus
from backend.identity.permissions import MEMBERSHIP_ROLES, PERMISSIONS, ROLES
from schemas.common import AnsweredDirectly, enum_of

PASSWORD = validate.Length(min=8, max=128)


class SignUpIn(Schema):
    email = fields.Email(required=True, validate=validate.Length(max=320))
    password = fields.String(required=True, validate=PASSWORD)
    name = fields.String(required=True, validate=validate.Length(min=1, max=200))


class SignInIn(Schema):
    email = fields.String(required=True, validate=validate.Length(min=1, max=320))
    password = fields.String(required=True, validate=validate.Length(min=1, max=1024))


class EmailIn(Schema):
    email = fields.Email(required=True, validate=validate.Length(max=320))


class TokenIn(Schema):
    token = fields.String(required=True, validate=validate.Length(min=1, max=200))


class TokenQuery(TokenIn):
    class Meta:
        unknown = EXCLUDE


class PasswordResetConfirmIn(TokenIn):
    newPassword = fields.String(required=True, validate=PASSWORD)


class ChangePasswordIn(Schema):
    currentPassword = fields.String(required=True, validate=validate.Length(min=1, max=1024))
    newPassword = fields.String(required=True, validate=PASSWORD)


class ActiveOrganizationIn(Schema):
    organizationId = fields.String(required=True, validate=validate.Length(min=1, max=60))


class AssignRoleIn(Schema):
    userId = fields.String(required=True)
    role = fields.String(required=True, validate=validate.OneOf(sorted(ROLES)))
    permissions = fields.List(fields.String(validate=validate.OneOf(sorted(PERMISSIONS))), load_default=None)


class WorkspaceQuery(Schema):
    path = fields.String(required=True, validate=[validate.Length(min=1, max=2000),
                                                  validate.Regexp("^/", error="must start with /")])

    class Meta:
        unknown = EXCLUDE


class UserOut(Schema):
    id = fields.String(required=True)
    email = fields.String(required=True)
    name = fields.String(required=True)
    emailVerified = fields.Function(lambda user: user.email_verified_at is not None, required=True)
    roles = fields.Function(lambda user: sorted(user.roles), required=True)
    createdAt = fields.Function(lambda user: clock.iso(user.created_at), required=True)


class UserData(Schema):
    user = fields.Nested(UserOut, required=True)


class MembershipOrganizationOut(Schema):
    id = fields.String(required=True)
    actorType = fields.String(required=True)
    legalName = fields.String(required=True)
    kybStatus = fields.String(allow_none=True, metadata=enum_of(KybStatus))
    membershipRole = fields.String(required=True, validate=validate.OneOf(sorted(MEMBERSHIP_ROLES)))


class WorkspaceOut(Schema):
    home = fields.String(allow_none=True, metadata={"description": "/admin, /industrial, /distributor, /printer; "
                                                                   "null before the user has a role"})
    redirectTo = fields.String(allow_none=True)


def _user_answer(user) -> dict:
    """`UserOut`'s dump of `user`, in one pass."""
    return {"id": user.id, "email": user.email, "name": user.name, "emailVerified": user.email_verified_at is not None,
            "roles": sorted(user.roles), "createdAt": clock.iso(user.created_at)}


class SessionOut(AnsweredDirectly):
    user = fields.Nested(UserOut, required=True)
    roles = fields.List(fields.String(), required=True)
    permissions = fields.List(fields.String(), required=True)
    activeOrganizationId = fields.String(allow_none=True)
    organizations = fields.List(fields.Nested(MembershipOrganizationOut), required=True)
    workspace = fields.Nested(WorkspaceOut, required=True)

    @staticmethod
    def answer(session: dict) -> dict:
        """`backend.identity.workspace.describe_session`'s dict (its user a model, the rest plain values)."""
        workspace = session["workspace"]
        return {
            "user": _user_answer(session["user"]), "roles": list(session["roles"]),
            "permissions": list(session["permissions"]), "activeOrganizationId": session["activeOrganizationId"],
            "organizations": [
                {"id": org["id"], "actorType": org["actorType"], "legalName": org["legalName"],
                 "kybStatus": org["kybStatus"], "membershipRole": org["membershipRole"]}
                for org in session["organizations"]],
            "workspace": {"home": workspace["home"], "redirectTo": workspace["redirectTo"]},
        }


class WorkspaceResolveOut(Schema):
    allowed = fields.Boolean(required=True)
    redirectTo = fields.String(allow_none=True)


class DoneOut(Schema):
    done = fields.Boolean(required=True)
