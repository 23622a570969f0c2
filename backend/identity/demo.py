"""Demo accounts of `vitrine seed-demo` (listed in the README): an admin, an industrial manager, a
distributor manager and a printer user, with their organizations (KYB approved, so the demo
workspaces are open). The industrial and the distributor, whom the demo invoices name, have a
complete billing profile (legal name, SIRET, VAT number, postal address): an invoice never prints
a placeholder (API.md). Idempotent: existing rows are left as they are."""

from __future__ import annotations

from backend import clock
from backend.identity import bank_details
from backend.identity.models import BillingProfile, Membership, Organization, User
from backend.identity.permissions import Role
from backend.identity.secrets import hash_password

DEMO_PASSWORD = "vitrine-demo"  # noqa: S105 (published demo login, seeded only by seed-demo)
DEMO_ORGANIZATIONS = (
    ("industrial:552100554", "industrial", "552100554", "Laiterie Démo SA", "approved"),
    ("distributor:385347927", "distributor", "385347927", "Hyper Démo SAS", "approved"),
    ("printer:414217190", "printer", "414217190", "Imprimerie Démo SARL", None),
)
# organization id -> billing profile (SIRET and VAT number of its SIREN, Luhn- and key-valid)
DEMO_BILLING_PROFILES = {
    "industrial:552100554": {
        "legal_name": "Laiterie Démo SA", "siret": "55210055400013", "vat_number": "FR96552100554",
        "street": "12 rue des Lilas", "postal_code": "74000", "city": "Annecy", "country": "FR", "iban": None,
        "signer_first_name": "Inès", "signer_last_name": "Industrielle", "signer_email": "industriel@vitrine.example",
        "legal_form": "SA", "share_capital_cents": 12_000_000, "registration": "RCS Annecy 552 100 554",
    },
    "distributor:385347927": {
        "legal_name": "Hyper Démo SAS", "siret": "38534792700019", "vat_number": "FR24385347927",
        "street": "1 avenue de la République", "postal_code": "69001", "city": "Lyon", "country": "FR",
        "iban": "FR7630004000031234567890143", "signer_first_name": "Denis", "signer_last_name": "Distributeur",
        "signer_email": "distributeur@vitrine.example",
        "legal_form": "SAS", "share_capital_cents": 3_700_000, "registration": "RCS Lyon 385 347 927",
    },
}
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
    for organization_id, profile in DEMO_BILLING_PROFILES.items():
        BillingProfile.insert(organization=organization_id, signer_phone="+33612345678",
                              signer_on_registry_extract=True, updated_at=now, **profile).on_conflict_ignore().execute()
    for id_, _, _, _, kyb in DEMO_ORGANIZATIONS:  # approved with the profile's account
        if kyb == "approved" and bank_details.approved_account(id_) is None:
            bank_details.record_approved(id_)
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
