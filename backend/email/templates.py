"""The e-mails the platform sends, in French, each naming the platform."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Template:
    subject: str
    body: str
    # The message asks its reader to write back: it is sent with a `Reply-To` naming the
    # platform's billing contact (`PLATFORM_BILLING_CONTACT_EMAIL`), never the no-reply sender.
    invites_reply: bool = False


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
    # Documents (backend/billing/documents/mailing.py): the Factur-X PDF is attached; no link
    # carries a session or a token, the link opens the signed-in space.
    "billing_document": Template(
        "{document} {number} : {platform}",
        "Bonjour,\n\nVeuillez trouver ci-joint {document_phrase} {number} du {issued_on} ({issuer}), d'un montant "
        "de {amount} TTC.\n{payment}\n\n{copy}Le PDF joint est au format Factur-X : les données structurées du "
        "document (factur-x.xml) y sont incluses, lisibles par votre logiciel comptable.\n\nVos documents sont aussi "
        "dans votre espace {platform} :\n\n{link}",
    ),
    "self_billed_document": Template(
        "Autofacturation : {document} {number} {issued} en votre nom sur {platform}",
        "Bonjour,\n\nAu titre du mandat d'autofacturation que vous avez signé, {platform} a émis en votre nom "
        "{document_phrase} {number} du {issued_on}, d'un montant de {amount} TTC.\n{payment}\n\n{acceptance}\n\n"
        "{copy}Le PDF joint est au format Factur-X : les données structurées du document (factur-x.xml) y sont "
        "incluses.\n\nVos autofactures sont dans votre espace {platform} :\n\n{link}",
    ),
    "self_billing_contest_rejected": Template(
        "Votre contestation de la facture {number} : {platform}",
        "Bonjour,\n\nVotre contestation de la facture {number}, émise en votre nom par autofacturation, a été "
        "examinée et n'a pas été retenue.\n\nMotif : {note}\n\nLa facture est maintenue telle qu'émise et son "
        "paiement suit son cours. Pour en discuter, {contact}.\n\n{link}",
        invites_reply=True,
    ),
    # A lifecycle status the platform sends in the distributor's name (backend/einvoicing/decision_reports.py).
    "self_billing_status_sent": Template(
        "Facture {number} : statut « {status} » transmis en votre nom",
        "Bonjour,\n\nAu titre du mandat d'autofacturation que vous avez signé, {platform} transmet en votre nom, "
        "pour la facture électronique {number}, le statut « {status} »{reason} à sa plateforme de "
        "dématérialisation, qui l'inscrit dans le cycle de vie de la facture{recipients}.\n\n{link}",
    ),
    "bank_transfer_overdue": Template(
        "Facture {invoice_number} : virement non reçu",
        "Bonjour,\n\nSauf erreur de notre part, nous n'avons pas reçu le virement de {amount} TTC réglant la "
        "facture {invoice_number} de {organization}, échue le {due_date}.\n\nMerci d'effectuer le virement sur le "
        "compte de {platform} :\nIBAN : {iban}\nen indiquant la référence {invoice_number}.\n\n"
        "Si vous avez déjà payé, merci de ne pas tenir compte de ce message ; pour toute question, répondez à "
        "ce message.",
        invites_reply=True,
    ),
    "iban_changed": Template(
        "{organization} : l'IBAN de votre profil de facturation a changé",
        "Bonjour,\n\nL'IBAN du profil de facturation de {organization} sur {platform} vient de changer :\n"
        "ancien IBAN : {iban_before}\nnouvel IBAN : {iban_after}\n\nLe compte de l'entreprise repasse en "
        "vérification : aucun paiement ne part vers le nouvel IBAN avant qu'un administrateur l'ait approuvé, "
        "et les virements en attente sont retenus jusque-là.\n\nSi vous n'êtes pas à l'origine de ce "
        "changement, contactez-nous sans attendre.",
    ),
    "smoke_test": Template(
        "Test d'envoi d'e-mail {platform}",
        "Bonjour,\n\nCeci est un e-mail de test envoyé depuis {platform} à la demande de {requester}. "
        "Si vous le lisez, l'envoi d'e-mails fonctionne.",
    ),
}


def render(template: str, *, platform: str, **context: str) -> tuple[str, str]:
    """(subject, body) of `template` with the platform name and `context` filled in; the subject
    on one line, its spaces trimmed and collapsed (a value filled in may begin or end with one)."""
    chosen = TEMPLATES[template]
    values = {"platform": platform, **context}
    return " ".join(chosen.subject.format(**values).split()), (chosen.body + _SIGNATURE).format(**values)


def invites_reply(template: str) -> bool:
    chosen = TEMPLATES.get(template)
    return chosen is not None and chosen.invites_reply
