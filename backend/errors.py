"""Domain errors: each carries a stable code; `api/errors.py` maps codes to HTTP statuses."""

from __future__ import annotations


class DomainError(Exception):
    code = "VALIDATION_ERROR"

    def __init__(self, message: str, **details: object) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class ValidationError(DomainError):
    code = "VALIDATION_ERROR"


class Unauthenticated(DomainError):
    code = "UNAUTHENTICATED"


class InvalidCredentials(DomainError):
    """Wrong e-mail or password, or a blocked account: one answer for all three."""

    code = "AUTH_INVALID_CREDENTIALS"


class WebhookSignatureInvalid(DomainError):
    code = "AUTH_SIGNATURE_WEBHOOK_INVALID"


class Forbidden(DomainError):
    code = "FORBIDDEN"


class NotFound(DomainError):
    code = "NOT_FOUND"


class Conflict(DomainError):
    code = "CONFLICT"


class TemplateLastActiveVersion(Conflict):
    code = "TEMPLATE_LAST_ACTIVE_VERSION"


class PrintConfigurationUnavailable(Conflict):
    """Spec B: a stock declaration on a reservation whose furniture has no printable zone."""

    code = "PRINT_CONFIGURATION_UNAVAILABLE"


class PayloadTooLarge(DomainError):
    code = "PAYLOAD_TOO_LARGE"


class UnsupportedMediaType(DomainError):
    """A JSON route called with a body of another `Content-Type`."""

    code = "UNSUPPORTED_MEDIA_TYPE"


class RateLimited(DomainError):
    code = "RATE_LIMITED"

    def __init__(self, message: str, retry_after_seconds: int) -> None:
        super().__init__(message)
        self.retry_after_seconds = retry_after_seconds


class ServiceUnavailable(DomainError):
    code = "SERVICE_UNAVAILABLE"


class EinvoiceMissingPdf(Conflict):
    """Spec C: a transmission dispatched without its invoice PDF (outside `E2E_TEST_MODE`)."""

    code = "EINVOICE_MISSING_PDF"


class EinvoiceRecipientUnknown(Conflict):
    """The buyer's electronic address (its SIREN) is not in the operator's directory."""

    code = "EINVOICE_RECIPIENT_UNKNOWN"


class EinvoiceProviderFailed(DomainError):
    """Spec C: the e-invoicing operator refused the credentials or the call, or did not answer."""

    code = "EINVOICE_PROVIDER_FAILED"


class WebhookDeprecated(DomainError):
    """Spec C: the operator's inbound webhook is gone; status progress comes from polling."""

    code = "WEBHOOK_DEPRECATED"
