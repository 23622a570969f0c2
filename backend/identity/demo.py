"""Demo accounts of `vitrine seed-demo` (listed in the README): an admin, an industrial manager, a
distributor manager and a printer user, with their organizations (KYB approved, so the demo
workspaces are open). Idempotent: existing rows are left as they are."""

from __future__ import annotations

from backend import clock
from backend.identity.models import Membership, Organization, User
from backend.identity.permissions import Role
from backend.identity.secrets import hash_password

DEMO_PASSWORD = "vitrine-demo"  # noqa: S105 (published demo login, seeded only by seed-demo)
DEMO_ORGANIZATIONS = (
    ("industrial:552100554", "industrial", "552100554", "Laiterie Démo SA", "approved"),
    ("distributor:385347927", "distributor", "385347927", "Hyper Démo SAS", "approved"),
    ("printer:414217190", "printer", "414217190", "Imprimerie Démo SARL", None),
)
# (e-mail, name, role, organization id, membership role)
DEMO_USERS = (
    ("admin@vitrine.example", "Admin Démo", Role.ADMIN, None, None),
    ("industriel@vitrine.example", "Inès Industrielle", Role.INDUSTRIAL, "industrial:552100554", "manager"),
    ("distributeur@vitrine.example", "Denis Distributeur", Role.DISTRIBUTOR, "distributor:385347927", "manager"),
    ("imprimeur@vitrine.example", "Irène Imprimeuse", Role.PRINTER, "printer:414217190", "member"),
)


def seed_demo_identity() -> str:
    now = clock.now()
    organizations = sum(
        Organization.insert(id=id_, actor_type=actor_type, siren=siren, legal_name=name, kyb_status=kyb,
                            kyb_reviewed_at=now if kyb else None)
        .on_conflict_ignore().as_rowcount().execute()
        for id_, actor_type, siren, name, kyb in DEMO_ORGANIZATIONS
    )
    password_hash = hash_password(DEMO_PASSWORD)
    users = 0
    for email, name, role, organization_id, membership_role in DEMO_USERS:
        users += User.insert(email=email, name=name, password_hash=password_hash, roles=[role],
                             email_verified_at=now).on_conflict_ignore().as_rowcount().execute()
        if organization_id:
            user_id = User.get(User.email == email).id
            Membership.insert(user=user_id, organization=organization_id, role=membership_role).on_conflict_ignore(
            ).execute()
    return f"{users} demo users and {organizations} demo organizations created (password {DEMO_PASSWORD!r})"
