"""Self-billing (spec C, article 289 of the French tax code): the `supplier_self_billed` invoice
issued in the distributor's name, its mandate (lifecycle, provider events, document, demo), the
scheduler pass, reservation incidents and the French business days they count in."""
