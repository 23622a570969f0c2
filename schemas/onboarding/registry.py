"""Company registry schemas: the cached extract (admin list "registry cache", its refresh, the
admin organization detail) and the registry check recorded on an onboarding envelope."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from backend import clock
from backend.onboarding.registry import CompanyState
from backend.onboarding.registry_cache import REGISTRY_CACHE_SORTS
from schemas.common import PageQuery, UtcDateTime, enum_of, page_of, sort_by


class RepresentativeOut(Schema):
    firstNames = fields.String(attribute="first_names", required=True,
                               metadata={"description": "every given name, as the registry lists them"})
    lastName = fields.String(attribute="last_name", required=True)
    role = fields.String(allow_none=True, metadata={"description": "the registry's `qualite` (Président de SAS ...)"})


class RegistryCompanyOut(Schema):
    """One SIREN's last answer from the registry."""

    siren = fields.String(required=True)
    legalName = fields.String(attribute="legal_name", allow_none=True, required=True)
    state = fields.String(required=True, metadata=enum_of(CompanyState))
    nafCode = fields.String(attribute="naf_code", allow_none=True)
    headOffice = fields.Function(lambda c: {"street": c.street, "postalCode": c.postal_code, "city": c.city},
                                 required=True)
    representatives = fields.List(fields.Nested(RepresentativeOut), required=True)
    representativesCount = fields.Function(lambda c: len(c.representatives), required=True)
    registryUpdatedOn = fields.Date(attribute="registry_updated_on", allow_none=True,
                                    metadata={"description": "the registry's own last update of the company"})
    fetchedAt = UtcDateTime(attribute="fetched_at", required=True)
    ageDays = fields.Function(lambda c: (clock.now() - c.fetched_at).days, required=True,
                              metadata={"description": "whole days since fetchedAt"})


class RegistryCacheQuery(PageQuery):
    sortBy = sort_by(REGISTRY_CACHE_SORTS, "fetchedAt")
    state = fields.String(load_default=None, validate=validate.OneOf([s.value for s in CompanyState]))


RegistryCachePage = page_of(RegistryCompanyOut, "RegistryCache")


class RegistryCompanyData(Schema):
    company = fields.Nested(RegistryCompanyOut, required=True)


class CheckedSignerOut(Schema):
    firstName = fields.String(attribute="first_name")
    lastName = fields.String(attribute="last_name")


class RegistryWarningOut(Schema):
    code = fields.String(required=True, metadata=enum_of(["legal_name_differs", "postal_code_differs"]))
    ours = fields.String(metadata={"description": "the billing profile's value"})
    registry = fields.String(metadata={"description": "the registry's value"})


class RegistryCheckOut(Schema):
    """What the registry said when the envelope was opened (or at the last admin refresh)."""

    reason = fields.String(allow_none=True, metadata={
        **enum_of(["registry_unavailable", "siren_unknown_to_registry", "signer_not_listed"]),
        "description": "why the signer is not on the extract (null when it is)"})
    message = fields.String(metadata={"description": "when the registry could not answer: why"})
    state = fields.String(metadata=enum_of(CompanyState))
    signer = fields.Nested(CheckedSignerOut)
    representative = fields.Nested(RepresentativeOut, allow_none=True,
                                   metadata={"description": "the listed representative the signer matched"})
    extractDate = fields.String(attribute="extract_date", metadata={"description": "date of the extract"})
    fetchedAt = fields.String(attribute="fetched_at")
    checkedAt = fields.String(attribute="checked_at")
    warnings = fields.List(fields.Nested(RegistryWarningOut),
                           metadata={"description": "differences shown to the reviewer; never a refusal"})


class OrganizationRegistryOut(Schema):
    """The registry's side of an organization, for the KYB reviewer."""

    extract = fields.Nested(RegistryCompanyOut, allow_none=True, required=True,
                            metadata={"description": "the cached extract of the organization's SIREN"})
    registryChecked = fields.Boolean(attribute="registry_checked", allow_none=True, required=True,
                                     metadata={"description": "on the latest envelope; null without one"})
    check = fields.Nested(RegistryCheckOut, allow_none=True, required=True)
