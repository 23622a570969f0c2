"""Identity tables: users, sessions, single-use tokens, organizations, memberships, billing
profiles and invitations. Migration `010_identity` creates them with their constraints."""

from __future__ import annotations

from enum import StrEnum

from peewee import BigAutoField, BigIntegerField, BooleanField, CharField, ForeignKeyField, TextField
from playhouse.postgres_ext import ArrayField, DateTimeTZField

from backend.identity.permissions import MembershipRole
from backend.model import BaseModel, created_at_field, new_id, status_field


class ActorType(StrEnum):
    INDUSTRIAL = "industrial"
    DISTRIBUTOR = "distributor"
    PRINTER = "printer"


class KybStatus(StrEnum):
    """`KYB_REVIEW_STATUSES` of Specification A; an organization that never submitted has none."""

    SUBMITTED = "submitted"
    IN_REVIEW = "in_review"
    APPROVED = "approved"
    REJECTED = "rejected"


KYB_REVIEW_STATUSES = tuple(s.value for s in KybStatus)
# Actor types whose workspace stays blocked until KYB is approved (Specification A).
KYB_GATED_ACTOR_TYPES = frozenset({ActorType.INDUSTRIAL, ActorType.DISTRIBUTOR})


class TokenPurpose(StrEnum):
    MAGIC_LINK = "magic_link"
    PASSWORD_RESET = "password_reset"  # noqa: S105 (a purpose, not a password)
    EMAIL_VERIFICATION = "email_verification"


class User(BaseModel):
    id = CharField(primary_key=True, max_length=36, default=new_id)
    email = CharField(max_length=320)  # stored lower-cased; unique
    name = CharField(max_length=200)
    password_hash = TextField(null=True)  # null: signs in by magic link only
    email_verified_at = DateTimeTZField(null=True)
    roles = ArrayField(TextField, default=list)
    permissions = ArrayField(TextField, default=list)  # granted beyond the roles' own
    blocked_at = DateTimeTZField(null=True)
    created_at = created_at_field()
    updated_at = created_at_field()

    class Meta:
        table_name = "app_user"


class Organization(BaseModel):
    id = CharField(primary_key=True, max_length=60)  # "<actorType>:<siren>"
    actor_type = status_field(ActorType)
    siren = CharField(max_length=9)
    legal_name = CharField(max_length=200)
    kyb_status = status_field(KybStatus, null=True)
    kyb_note = TextField(null=True)
    kyb_submitted_at = DateTimeTZField(null=True)
    kyb_reviewed_at = DateTimeTZField(null=True)
    created_at = created_at_field()
    updated_at = created_at_field()

    class Meta:
        table_name = "organization"

    @property
    def kyb_blocked(self) -> bool:
        return kyb_blocked(self.actor_type, self.kyb_status)


def kyb_blocked(actor_type: str, kyb_status: str | None) -> bool:
    """Whether an organization's business routes stay closed: an industrial or distributor
    organization until its KYB is approved (Specification A)."""
    return actor_type in KYB_GATED_ACTOR_TYPES and kyb_status != KybStatus.APPROVED


class Membership(BaseModel):
    id = BigAutoField()
    user = ForeignKeyField(User, backref="memberships", on_delete="CASCADE")
    organization = ForeignKeyField(Organization, backref="memberships", on_delete="CASCADE")
    role = status_field(MembershipRole)
    created_at = created_at_field()

    class Meta:
        table_name = "membership"


class AuthSession(BaseModel):
    id = CharField(primary_key=True, max_length=36, default=new_id)
    user = ForeignKeyField(User, backref="sessions", on_delete="CASCADE")
    token_hash = CharField(max_length=64)  # SHA-256 hex of the cookie value; the value is never stored
    active_organization = ForeignKeyField(Organization, null=True, on_delete="SET NULL")
    ip = CharField(max_length=64, null=True)
    user_agent = CharField(max_length=400, null=True)
    created_at = created_at_field()
    expires_at = DateTimeTZField()
    revoked_at = DateTimeTZField(null=True)

    class Meta:
        table_name = "auth_session"


class AuthToken(BaseModel):
    """A single-use, expiring token sent by e-mail (magic link, password reset, verification)."""

    id = BigAutoField()
    user = ForeignKeyField(User, on_delete="CASCADE")
    purpose = status_field(TokenPurpose)
    token_hash = CharField(max_length=64, null=True)  # None until its e-mail is delivered
    # A magic link's: the digest of the cookie of the browser that asked (only that one may use it).
    browser_hash = CharField(max_length=64, null=True)
    created_at = created_at_field()
    expires_at = DateTimeTZField()
    used_at = DateTimeTZField(null=True)

    class Meta:
        table_name = "auth_token"


class BillingProfile(BaseModel):
    organization = ForeignKeyField(Organization, primary_key=True, on_delete="CASCADE")
    legal_name = CharField(max_length=200)
    siret = CharField(max_length=14)
    vat_number = CharField(max_length=14, null=True)  # of France or of another member state
    street = CharField(max_length=300)
    postal_code = CharField(max_length=20)
    city = CharField(max_length=120)
    country = CharField(max_length=2)
    iban = CharField(max_length=34, null=True)
    bic = CharField(max_length=11, null=True)  # of the IBAN's bank (ISO 9362), optional
    signer_first_name = CharField(max_length=120)
    signer_last_name = CharField(max_length=120)
    signer_email = CharField(max_length=320)
    signer_phone = CharField(max_length=20)  # E.164
    signer_on_registry_extract = BooleanField()
    billing_email = CharField(max_length=320, null=True)  # where invoices go (else the managers)
    # The company mentions its invoices print (backend.company_mentions); None until given.
    legal_form = CharField(max_length=60, null=True)
    share_capital_cents = BigIntegerField(null=True)
    registration = CharField(max_length=200, null=True)
    updated_at = created_at_field()

    class Meta:
        table_name = "billing_profile"


class Invitation(BaseModel):
    id = CharField(primary_key=True, max_length=36, default=new_id)
    organization = ForeignKeyField(Organization, backref="invitations", on_delete="CASCADE")
    email = CharField(max_length=320)
    role = status_field(MembershipRole)
    token_hash = CharField(max_length=64, null=True)  # None until its e-mail is delivered
    invited_by = ForeignKeyField(User, null=True, on_delete="SET NULL", column_name="invited_by_id")
    created_at = created_at_field()
    expires_at = DateTimeTZField()
    accepted_at = DateTimeTZField(null=True)
    accepted_by = ForeignKeyField(
        User, null=True, on_delete="SET NULL", column_name="accepted_by_id", backref="accepted_invitations"
    )

    class Meta:
        table_name = "invitation"
