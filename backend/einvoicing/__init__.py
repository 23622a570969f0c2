"""E-invoicing (Specification C): transmissions of issued invoices to the dematerialization
operator, their lifecycle (dispatch, polling), the operator client and the reconciliation."""
