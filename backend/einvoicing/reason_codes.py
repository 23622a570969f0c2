"""The reform's closed list of status reasons (BR-FR-CDV-CL-09 of the CDAR lifecycle profile, XP
Z12-012 annex A "Tableau des motifs de statuts"): the code a 206, 207, 208, 210, 213 or 221
carries, with its label, and which codes each of those statuses admits (the same rule's per-status
lists, `BR-FR-CDV-CL-09_MDT-113_<status>` in the FNFE-MPE CDAR schematron). A reason outside the
list, or outside its status's list, is refused before a status leaves (`cdar_validation`), and by
the operator.

`DEFAULT_CONTEST` is the code of a distributor's contest of its self-billed invoice: a contest
says the amounts or the lines do not match what was done, so the invoice is not conforming until
the adjustment settles it. It is admitted for a 207 and for a 210 alike.
"""

from __future__ import annotations

LABELS = {
    "NON_TRANSMISE": "Destinataire non connecté",
    "JUSTIF_ABS": "Justificatif absent ou insuffisant",
    "ROUTAGE_ERR": "Erreur de routage",
    "AUTRE": "Autre",
    "COORD_BANC_ERR": "Coordonnées bancaires erronées",
    "TX_TVA_ERR": "Taux de TVA erroné",
    "MONTANTTOTAL_ERR": "Montant total erroné",
    "CALCUL_ERR": "Erreur de calcul de la facture",
    "NON_CONFORME": "Mention légale manquante ou facture non conforme",
    "DOUBLON": "Facture en doublon",
    "DEST_INC": "Destinataire inconnu",
    "DEST_ERR": "Erreur de destinataire",
    "TRANSAC_INC": "Transaction inconnue",
    "EMMET_INC": "Émetteur inconnu",
    "CONTRAT_TERM": "Contrat terminé",
    "DOUBLE_FACT": "Double facture",
    "CMD_ERR": "Référence de commande erronée",
    "ADR_ERR": "Adresse de facturation erronée",
    "SIRET_ERR": "SIRET erroné ou absent",
    "CODE_ROUTAGE_ERR": "Code de routage erroné ou absent",
    "REF_CT_ABSENT": "Référence contractuelle absente",
    "REF_ERR": "Référence erronée",
    "PU_ERR": "Prix unitaires erronés",
    "REM_ERR": "Remise erronée",
    "QTE_ERR": "Quantité facturée erronée",
    "ART_ERR": "Article facturé erroné",
    "MODPAI_ERR": "Modalités de paiement erronées",
    "QUALITE_ERR": "Qualité d'article livré erronée",
    "LIVR_INCOMP": "Problème de livraison",
    "REJ_SEMAN": "Rejet pour erreur sémantique",
    "REJ_UNI": "Rejet sur contrôle d'unicité",
    "REJ_COH": "Rejet sur contrôle de cohérence de données",
    "REJ_ADR": "Rejet sur contrôle d'adressage",
    "REJ_CONT_B2G": "Rejet sur contrôles métier B2G",
    "REJ_REF_PJ": "Rejet sur référence de pièce jointe",
    "REJ_ASS_PJ": "Rejet pour erreur d'association de la pièce jointe",
    "IRR_VIDE_F": "Fichier vide",
    "IRR_TYPE_F": "Type de fichier non autorisé",
    "IRR_SYNTAX": "Erreur de syntaxe",
    "IRR_TAILLE_PJ": "Taille de pièce jointe non autorisée",
    "IRR_NOM_PJ": "Nom de pièce jointe non autorisé",
    "IRR_VID_PJ": "Pièce jointe vide",
    "IRR_EXT_DOC": "Extension de document non autorisée",
    "IRR_TAILLE_F": "Taille de fichier non autorisée",
    "IRR_ANTIVIRUS": "Fichier infecté",
}
# The codes each status admits (a status absent here carries no reason).
_DISPUTE_AND_REFUSAL = ("TX_TVA_ERR", "MONTANTTOTAL_ERR", "CALCUL_ERR", "NON_CONFORME", "DOUBLON", "DEST_ERR",
                        "TRANSAC_INC", "EMMET_INC", "CONTRAT_TERM", "DOUBLE_FACT", "CMD_ERR", "ADR_ERR",
                        "REF_CT_ABSENT")
_LINES = ("CMD_ERR", "SIRET_ERR", "CODE_ROUTAGE_ERR", "REF_CT_ABSENT", "REF_ERR", "PU_ERR", "REM_ERR", "QTE_ERR",
          "ART_ERR", "MODPAI_ERR", "QUALITE_ERR", "LIVR_INCOMP")
ALLOWED: dict[int, frozenset[str]] = {
    200: frozenset({"NON_TRANSMISE"}),
    206: frozenset({"AUTRE", *_LINES}),
    207: frozenset({"AUTRE", "COORD_BANC_ERR", "DEST_INC", "SIRET_ERR", *_DISPUTE_AND_REFUSAL, *_LINES}),
    208: frozenset({"JUSTIF_ABS", "COORD_BANC_ERR", "CMD_ERR", "SIRET_ERR", "CODE_ROUTAGE_ERR", "REF_CT_ABSENT",
                    "REF_ERR"}),
    210: frozenset(_DISPUTE_AND_REFUSAL),
    213: frozenset({"MONTANTTOTAL_ERR", "CALCUL_ERR", "DOUBLON", "DEST_INC", "ADR_ERR", "REJ_SEMAN", "REJ_UNI",
                    "REJ_COH", "REJ_ADR", "REJ_CONT_B2G", "REJ_REF_PJ", "REJ_ASS_PJ"}),
    221: frozenset({"ROUTAGE_ERR"}),
}
DEFAULT_CONTEST = "NON_CONFORME"
# An operator `Error` at the deposit whose answer names no code of the list: a semantic rejection.
DEFAULT_REJECTION = "REJ_SEMAN"


def label(code: str) -> str:
    return LABELS.get(code, code)


def admitted(reason_code: str | None, status: int) -> bool:
    """Whether `reason_code` is one the reform admits for `status` (any code of the list for a
    status without a list of its own)."""
    return reason_code in ALLOWED.get(status, LABELS)
