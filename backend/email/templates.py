"""The e-mails the platform sends, in French, each naming the platform."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Template:
    subject: str
    body: str


_SIGNATURE = "\n\nL'équipe {platform}\n"

# Membership roles as the French e-mails name them.
MEMBERSHIP_ROLE_LABELS = {"manager": "responsable", "member": "membre", "billing": "facturation"}


def membership_role_label(role: str) -> str:
    return MEMBERSHIP_ROLE_LABELS.get(role, role)


TEMPLATES: dict[str, Template] = {
    "email_verification": Template(
        "Confirmez votre adresse e-mail sur {platform}",
        "Bonjour {name},\n\nBienvenue sur {platform}. Pour confirmer votre adresse e-mail, ouvrez ce "
        "lien (valable 48 heures) :\n\n{link}\n\nSi vous n'avez pas créé de compte, ignorez ce message.",
    ),
    "magic_link": Template(
        "Votre lien de connexion à {platform}",
        "Bonjour {name},\n\nPour vous connecter à {platform}, ouvrez ce lien dans le navigateur où vous "
        "l'avez demandé. Il est valable 15 minutes et ne peut servir qu'une fois :\n\n{link}\n\n"
        "Si vous n'avez rien demandé, ignorez ce message.",
    ),
    "password_reset": Template(
        "Réinitialisation de votre mot de passe {platform}",
        "Bonjour {name},\n\nPour choisir un nouveau mot de passe, ouvrez ce lien. Il est valable une "
        "heure et ne peut servir qu'une fois :\n\n{link}\n\nSi vous n'avez rien demandé, ignorez ce "
        "message : votre mot de passe actuel reste valable.",
    ),
    "invitation": Template(
        "Invitation à rejoindre {organization} sur {platform}",
        "Bonjour,\n\n{inviter} vous invite à rejoindre l'organisation {organization} sur {platform} "
        "avec le rôle « {role} ». Pour accepter, connectez-vous avec cette adresse e-mail puis ouvrez "
        "ce lien (valable 7 jours) :\n\n{link}",
    ),
    "print_order_delivery": Template(
        "Livraison de votre commande d'impression {code}",
        "Bonjour,\n\nL'imprimeur {printer} a mis à jour la livraison de la commande d'impression {code} "
        "(campagne « {campaign} », magasin {store}).\n\nStatut de la commande : {status}\n"
        "Livraison : {address}\nTransporteur : {carrier}\nNuméro de suivi : {tracking_number}\n"
        "Suivi en ligne : {tracking_url}\n\nLe détail de la commande est dans votre espace :\n\n{link}",
    ),
    "bank_transfer_overdue": Template(
        "Facture {invoice_number} : virement non reçu",
        "Bonjour,\n\nSauf erreur de notre part, nous n'avons pas reçu le virement de {amount} TTC réglant la "
        "facture {invoice_number} de {organization}, échue le {due_date}.\n\nMerci d'effectuer le virement sur le "
        "compte de {platform} :\nIBAN : {iban}\nen indiquant la référence {invoice_number}.\n\n"
        "Si vous avez déjà payé, merci de ne pas tenir compte de ce message.",
    ),
    "smoke_test": Template(
        "Test d'envoi d'e-mail {platform}",
        "Bonjour,\n\nCeci est un e-mail de test envoyé depuis {platform} à la demande de {requester}. "
        "Si vous le lisez, l'envoi d'e-mails fonctionne.",
    ),
}


def render(template: str, *, platform: str, **context: str) -> tuple[str, str]:
    """(subject, body) of `template` with the platform name and `context` filled in."""
    chosen = TEMPLATES[template]
    values = {"platform": platform, **context}
    return chosen.subject.format(**values), (chosen.body + _SIGNATURE).format(**values)
