"""The SEPA mandate reference (RUM, "référence unique du mandat"): one value from the signed
document to the debit (API.md "Money that always balances").

The onboarding's `sepa_mandate` document prints it, billing records it when the envelope is signed,
prints it on invoices (BT-89) and quotes it in debits: both call this function, so a debit always
quotes the reference the customer signed. `VIT-` and the first 8 characters of the onboarding
envelope's id, upper case: 12 characters, within SEPA's 35 and its alphabet.
"""

from __future__ import annotations


def mandate_reference(signature_request_id: str) -> str:
    return f"VIT-{signature_request_id[:8].upper()}"
