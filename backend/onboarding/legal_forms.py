"""The legal form a company directory's legal category names, as an invoice prints it.

The directory answers INSEE's catégorie juridique (`nature_juridique`, four digits, the third
level of the classification); its first two digits are the second level. The labels are the
short forms invoices use (Code de commerce, art. R123-237, 2°: the legal form). A category this
table does not name pre-fills nothing: the organization enters its legal form itself.
"""

from __future__ import annotations

# Third-level categories, by their code.
_CATEGORIES = {
    "1000": "Entrepreneur individuel",
    "5202": "SNC",
    "5306": "SCS",
    "5308": "SCA",
    "5485": "SELARL",
    "5498": "EURL",
    "5720": "SASU",
    "5785": "SELAS",
    "5800": "SE",
    "6540": "SCI",
}
# Second-level families whose every category is that form.
_FAMILIES = {
    "54": "SARL",
    "55": "SA à conseil d'administration",
    "56": "SA à directoire",
    "57": "SAS",
}


def legal_form_of(category: str | None) -> str | None:
    """The legal form of a catégorie juridique code (`5710` -> `SAS`); None when unknown."""
    if not category or len(category) != 4 or not category.isdigit():
        return None
    return _CATEGORIES.get(category) or _FAMILIES.get(category[:2])
