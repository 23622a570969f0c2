"""The payment terms of each kind of document, worded once for the PDF and the XML.

An invoice (a sale, a self-billed invoice) states its due date, how it is paid, the late-payment
penalties (three times the legal interest rate) and the 40 EUR recovery indemnity owed from the
day after the due date, and that no discount is given for early payment (Code de commerce,
art. L. 441-10 and D. 441-5). A self-billed invoice is due once the distributor could no longer
contest it and the payout delay of its mandate has run (the due date its issuer computed), so its
terms say so. A credit note asks for no payment: it says what is refunded, and to which account,
or what is to deduct, and none of the penalties; its XML still carries the three notes the French
rules ask for on every type code (BR-FR-05), saying they do not apply.
"""

from __future__ import annotations

from backend.billing.documents.snapshot import InvoiceSnapshot, PaymentMethod

# BG-1 notes (UNTDID 4451 subject codes) of an invoice, and their "not applicable" on a credit note.
LATE_PAYMENT_PENALTIES = (
    "PMD",
    "En cas de retard de paiement, pénalités exigibles à compter du lendemain de la date d'échéance au taux "
    "égal à trois fois le taux d'intérêt légal (article L. 441-10 du code de commerce).",
)
RECOVERY_INDEMNITY = (
    "PMT",
    "Indemnité forfaitaire pour frais de recouvrement due en cas de retard de paiement : 40 € "
    "(articles L. 441-10 et D. 441-5 du code de commerce).",
)
NO_DISCOUNT = ("AAB", "Pas d'escompte pour paiement anticipé.")
CREDIT_NOTE_TERMS = (
    ("PMD", "Sans objet : un avoir n'appelle aucun paiement, aucune pénalité de retard ne s'applique."),
    ("PMT", "Sans objet : un avoir n'appelle aucun paiement, aucune indemnité forfaitaire pour frais de "
            "recouvrement ne s'applique."),
    ("AAB", "Sans objet : un avoir n'appelle aucun paiement, aucun escompte ne s'applique."),
)
# What an invoice (never a credit note) prints about late and early payment.
LATE_PAYMENT_TERMS = (
    "À défaut de paiement à l'échéance, des pénalités égales à trois fois le taux d'intérêt légal, "
    "exigibles à compter du lendemain de la date d'échéance, et une indemnité forfaitaire de 40 € pour "
    "frais de recouvrement sont dues (articles L. 441-10 et D. 441-5 du code de commerce). Pas d'escompte "
    "pour paiement anticipé."
)
SELF_BILLED_DUE = ("qui est la fin du délai de contestation prévu par le mandat d'autofacturation, augmentée du "
                   "délai de règlement qu'il fixe")


def payment_notes(snapshot: InvoiceSnapshot) -> tuple[tuple[str, str], ...]:
    """The PMD, PMT and AAB notes of the XML (BR-FR-05)."""
    return CREDIT_NOTE_TERMS if snapshot.is_credit_note else (LATE_PAYMENT_PENALTIES, RECOVERY_INDEMNITY, NO_DISCOUNT)


def late_payment_terms(snapshot: InvoiceSnapshot) -> str | None:
    """The penalties and discount sentence of the PDF; None on a credit note."""
    return None if snapshot.is_credit_note else LATE_PAYMENT_TERMS


def amount_due_label(snapshot: InvoiceSnapshot) -> str:
    """What the last amount is: what the buyer pays on an invoice; on a credit note (which asks
    nothing), what is refunded (a refund's credit note, paid back with it) or to deduct."""
    if not snapshot.is_credit_note:
        return "Net à payer"
    return "Montant remboursé" if snapshot.payment_means else "Montant à déduire"


def payment_terms(snapshot: InvoiceSnapshot) -> str:
    """How the document is paid: the sentence of the PDF and the XML's payment terms (BT-20)."""
    means = snapshot.payment_means
    if snapshot.is_credit_note:
        if means is None:
            return "Montant à déduire des sommes dues."
        account = f" sur le compte IBAN {means.creditor_iban}" if means.creditor_iban else ""
        return f"Montant remboursé par virement{account}."
    if snapshot.due_cents == 0:
        how = " par prélèvement SEPA" if means and means.method == PaymentMethod.SEPA_DIRECT_DEBIT else ""
        return f"Facture réglée{how} à la réservation."
    if means and means.method == PaymentMethod.SEPA_DIRECT_DEBIT:
        reference = f" (mandat {means.mandate_reference})" if means.mandate_reference else ""
        how = f"Règlement par prélèvement SEPA{reference}."
    elif means and means.creditor_iban:
        how = f"Règlement par virement sur le compte IBAN {means.creditor_iban}."
    else:
        how = "Règlement par virement."
    if snapshot.is_self_billed:
        return f"{how[:-1]} à l'échéance, {SELF_BILLED_DUE}."
    return how
