"""Configuration: every environment variable, read and checked once at start.

`load_config()` is the only place that reads `os.environ` for settings. It raises
`ConfigError` naming every value that must stop boot (a bad commission rate, a malformed number),
not only the first one, and collects warnings (absent commission rate, missing platform identity) that the process logs
once at boot. Secrets are never logged: `Config.describe()` reports them as present or absent.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field, fields
from datetime import date
from decimal import Decimal, InvalidOperation
from pathlib import Path
from urllib.parse import urlsplit

from stdnum import bic, iban
from stdnum.eu import at_02

from backend import company_mentions
from backend.logs import url_without_password


class ConfigError(Exception):
    """Settings that must stop the process: each of `problems` says which and why."""

    def __init__(self, *problems: str) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


class _Env(dict):
    """The environment being read, and the problems found in it so far: a reader that finds a bad
    value records it and goes on with the default, so that one run reports every problem."""

    def __init__(self, source) -> None:
        super().__init__(source)
        self.problems: list[str] = []

    def problem(self, message: str, fallback=None):
        self.problems.append(message)
        return fallback


SECRET_SETTINGS = frozenset(
    {"esign_api_key", "esign_webhook_secret", "odp_client_secret", "afnor_client_secret", "afnor_webhook_secret",
     "smtp_url", "metrics_token"}
)

ENVIRONMENTS = ("development", "test", "staging", "production")
LOG_LEVELS = ("debug", "info", "warn", "error")
# How a `vitrine` command writes its log lines (the web, worker and clock always write JSON):
# auto: short lines when stderr is a terminal, JSON otherwise.
LOG_FORMATS = ("auto", "json", "text")


@dataclass(frozen=True)
class Config:
    environment: str = "development"
    service_name: str = "vitrine"
    public_base_url: str = "http://127.0.0.1:8000"
    data_dir: Path = Path("var")
    log_level: str = "info"
    log_format: str = "auto"

    database_url: str | None = None
    # The role that owns the tables, for `vitrine migrate` (docs/operations.md "Database roles").
    database_owner_url: str | None = None
    redis_url: str | None = None
    # None: Redis at REDIS_URL, shared by every web process; `vitrine dev` sets memory:// (one process).
    rate_limit_storage_url: str | None = None
    trusted_proxy_count: int = 0
    cookie_secure: bool = True
    session_ttl_days: int = 7
    # Argon2id cost (OWASP: 19 MiB, 2 passes, 1 lane); tests lower it through the environment.
    argon2_time_cost: int = 2
    argon2_memory_cost_kib: int = 19_456
    argon2_parallelism: int = 1

    storage_backend: str = "local"
    # The operator says the data directory is on a disk that outlives a deploy (production with local storage).
    storage_persistent_volume: bool = False
    gcs_bucket: str | None = None
    storage_emulator_host: str | None = None

    smtp_url: str | None = None
    mail_from: str = "Vitrine <no-reply@vitrine.example>"
    platform_name: str = "Vitrine"  # named in e-mails

    esign_api_key: str | None = None
    esign_base_url: str = "https://api.esign.example/v3"
    esign_webhook_secret: str | None = None
    esign_contract_threshold_cents: int = 1_000_000
    # Envelopes pending longer than this are asked of the provider by the reconciliation schedule.
    esign_reconcile_after_seconds: int = 3600
    platform_sepa_creditor_id: str | None = None  # ICS printed on the SEPA mandate
    registry_base_url: str = "https://recherche-entreprises.api.gouv.fr"
    registry_cache_days: int = 30  # a company's registry extract is reused this long

    platform_commission_rate_bps: int = 2000
    legacy_deposit_rate_bps: int = 3000  # legacy_mandate: the deposit's share of the store base
    accounting_fiscal_year_end: str = "12-31"  # MM-DD: the books' fiscal year closes that day
    auto_collection_retry_minutes: int = 15  # a failed auto-collection is retried after this long
    bank_transfer_due_days: int = 30  # a bank transfer not on a statement this long after its due date is overdue
    platform_vat_rate_percent: Decimal = Decimal(20)  # up to two decimals, in [0, 100)
    # The platform opted to pay VAT on debits (CGI art. 269, 2-c): its invoices say so (mention and BT-8).
    platform_vat_on_debits: bool = False
    platform_country_code: str = "FR"
    platform_legal_company_name: str | None = None
    platform_legal_siret: str | None = None
    platform_legal_vat_number: str | None = None
    platform_legal_street: str | None = None
    platform_legal_postal_code: str | None = None
    platform_legal_city: str | None = None
    platform_legal_country: str = "FR"
    platform_legal_email: str | None = None
    platform_legal_iban: str | None = None
    platform_legal_bic: str | None = None  # the platform's bank, named in the files for the bank
    # The company mentions of the platform's invoices (Code de commerce, art. R123-237).
    platform_legal_form: str | None = None
    platform_share_capital_cents: int | None = None
    platform_registration: str | None = None  # normal form: "RCS Paris 732 829 320"
    # Where a reply to the platform's billing e-mails goes (their Reply-To); PLATFORM_LEGAL_EMAIL when unset.
    platform_billing_contact_email: str | None = None

    odp_client_id: str | None = None
    odp_client_secret: str | None = None
    odp_token_url: str = "https://auth.odp.example/oauth/token"  # noqa: S105 (a URL, not a secret)
    odp_base_url: str = "https://api.odp.example"
    odp_entity_id: str | None = None
    odp_flow_mode: str = "Sandbox"
    odp_scope: str = "einvoicing:public-api"  # the OAuth scope asked with the client credentials
    odp_seller_ap: str | None = None
    odp_seller_ap_scheme: str = "0225"
    # The platform API the e-invoicing area speaks: the spec's operator, or an approved platform's
    # AFNOR XP Z12-013 Flow Service (and its Directory Service).
    einvoicing_operator: str = "odp"
    afnor_client_id: str | None = None
    afnor_client_secret: str | None = None
    afnor_token_url: str = "https://auth.pa.example/oauth/token"  # noqa: S105 (a URL, not a secret)
    afnor_flow_url: str = "https://api.flow.pa.example/flow-service"
    afnor_directory_url: str = "https://api.directory.pa.example/directory-service"
    afnor_scope: str | None = None  # the OAuth scope asked with the client credentials, when the PA wants one
    afnor_webhook_secret: str | None = None  # the PA's callbacks' HMAC key; unset, every callback is refused
    einvoicing_polling_enabled: bool = False
    einvoicing_polling_interval_ms: int = 900_000
    einvoicing_self_billing_enabled: bool = False
    self_billing_scheduler_enabled: bool = False
    self_billing_scheduler_interval_ms: int = 3_600_000
    e2e_test_mode: bool = False

    default_printer_organization_id: str | None = None
    print_asset_max_bytes: int = 200 * 1024 * 1024
    upload_quota_bytes: int = 10 * 1024**3  # what one organization may keep in storage (uploads)
    advance_status_concurrency: int = 10
    batch_advance_wait_seconds: int = 20

    outbox_resend_after_seconds: int = 60
    outbox_redeliver_after_seconds: int = 600
    outbox_max_handovers: int = 8
    metrics_token: str | None = None
    # Seconds a stopping worker gives the messages in progress before handing them back (below a PaaS's grace period).
    worker_shutdown_timeout: int = 20
    warnings: tuple[str, ...] = field(default=(), compare=False)

    def __repr__(self) -> str:
        """What `describe` shows: a Config in a traceback, a debugger or a log never prints a secret."""
        return f"Config({self.describe()!r})"

    def secrets(self) -> list[str]:
        """The secret values in force, for the log redaction filter."""
        return [v for name in SECRET_SETTINGS if (v := getattr(self, name, None))]

    def describe(self) -> dict[str, object]:
        """Settings as they may be logged: secrets only named as present or absent."""
        out: dict[str, object] = {}
        present, absent = [], []
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "warnings":
                continue
            if f.name in SECRET_SETTINGS:
                (present if value else absent).append(f.name.upper())
            elif f.name in ("database_url", "database_owner_url", "redis_url", "rate_limit_storage_url"):
                out[f.name] = url_without_password(value) if value else (
                    "REDIS_URL" if f.name == "rate_limit_storage_url" else "embedded")
            else:
                out[f.name] = str(value) if isinstance(value, Path | Decimal) else value
        out["credentialsPresent"], out["credentialsAbsent"] = present, absent
        return out


def _int(env: _Env, name: str, default: int, *, minimum: int | None = None) -> int:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        return env.problem(f"{name} must be an integer, got {raw!r}", default)
    if minimum is not None and value < minimum:
        return env.problem(f"{name} must be at least {minimum}, got {value}", default)
    return value


def _vat_rate(env: _Env) -> Decimal:
    """`PLATFORM_VAT_RATE_PERCENT`: a percentage with at most two decimals in [0, 100) (`20`, `5.5`,
    `2.1`); anything else stops boot (API.md)."""
    raw = (env.get("PLATFORM_VAT_RATE_PERCENT") or "").strip()
    if not raw:
        return Decimal(20)
    try:
        value = Decimal(raw)
    except InvalidOperation:
        value = None
    if value is None or not value.is_finite() or not 0 <= value < 100 or value != value.quantize(Decimal("0.01")):
        return env.problem(f"PLATFORM_VAT_RATE_PERCENT must be a percentage in [0, 100) with at most two decimals, "
                           f"got {raw!r}", Decimal(20))
    return value


def _bool(env: _Env, name: str, default: bool) -> bool:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    return env.problem(f"{name} must be true or false, got {raw!r}", default)


def _str(env: _Env, name: str, default: str | None = None) -> str | None:
    raw = env.get(name)
    return raw.strip() if raw and raw.strip() else default


def _commission_rate(env: _Env, warnings: list[str]) -> int:
    raw = env.get("PLATFORM_COMMISSION_RATE_BPS")
    if raw is None or raw.strip() == "":
        warnings.append("PLATFORM_COMMISSION_RATE_BPS is not set: using the default 2000 bps (20 %)")
        return 2000
    try:
        value = int(raw.strip())
    except ValueError:
        return env.problem(
            f"PLATFORM_COMMISSION_RATE_BPS must be an integer number of basis points, got {raw!r}", 2000)
    if not 0 <= value <= 10_000:
        return env.problem(f"PLATFORM_COMMISSION_RATE_BPS must be within [0, 10000], got {value}", 2000)
    return value


def _month_day(env: _Env, name: str, default: str) -> str:
    raw = (env.get(name) or "").strip()
    if not raw:
        return default
    try:
        month, day = (int(part) for part in raw.split("-"))
        date(2001, month, day)  # a day of every year: never 02-29
    except ValueError:
        return env.problem(f"{name} must be a day MM-DD (not 02-29), got {raw!r}", default)
    return f"{month:02d}-{day:02d}"


def _bps(env: _Env, name: str, default: int) -> int:
    value = _int(env, name, default, minimum=0)
    if value > 10_000:
        return env.problem(f"{name} must be within [0, 10000] basis points, got {value}", default)
    return value


# The platform's bank identifiers, checked when set: the files for the bank carry them
# (docs/bank.md); a value failing its check would make the bank refuse every file.
_BANK_IDENTIFIERS = (
    ("PLATFORM_SEPA_CREDITOR_ID", at_02, "a SEPA creditor identifier (ICS) with valid ISO 7064 check digits"),
    ("PLATFORM_LEGAL_IBAN", iban, "an IBAN with valid check digits"),
    ("PLATFORM_LEGAL_BIC", bic, "a BIC (ISO 9362: 8 or 11 characters)"),
)


def _check_bank_identifiers(env: _Env) -> None:
    for name, number, what in _BANK_IDENTIFIERS:
        value = _str(env, name)
        if value is not None and not number.is_valid(value):
            shown = "" if "IBAN" in name else f", got {value!r}"  # an IBAN is never logged (backend.logs)
            env.problem(f"{name} must be {what}{shown}")


def _share_capital(env: _Env) -> int | None:
    value = _int(env, "PLATFORM_SHARE_CAPITAL_CENTS", 0)
    if value and (problem := company_mentions.share_capital_problem(value)):
        return env.problem(f"PLATFORM_SHARE_CAPITAL_CENTS {problem}, got {value}", None)
    return value or None


def _legal_form(env: _Env) -> str | None:
    form = _str(env, "PLATFORM_LEGAL_FORM")
    if form is not None and (problem := company_mentions.legal_form_problem(form)):
        return env.problem(f"PLATFORM_LEGAL_FORM {problem}, got {form!r}", None)
    return form


def _registration(env: _Env, siret: str | None) -> str | None:
    """PLATFORM_REGISTRATION in its normal form; its SIREN must be PLATFORM_LEGAL_SIRET's."""
    raw = _str(env, "PLATFORM_REGISTRATION")
    if raw is None:
        return None
    try:
        return company_mentions.normal_registration(raw, siren=siret[:9] if siret else None)
    except ValueError as exc:
        return env.problem(f"PLATFORM_REGISTRATION {exc}, got {raw!r}", None)


_PLATFORM_IDENTITY = (
    "PLATFORM_LEGAL_COMPANY_NAME",
    "PLATFORM_LEGAL_FORM",
    "PLATFORM_SHARE_CAPITAL_CENTS",
    "PLATFORM_REGISTRATION",
    "PLATFORM_LEGAL_SIRET",
    "PLATFORM_LEGAL_STREET",
    "PLATFORM_LEGAL_POSTAL_CODE",
    "PLATFORM_LEGAL_CITY",
    "PLATFORM_LEGAL_EMAIL",
    "PLATFORM_LEGAL_IBAN",
)
ONE_DATABASE_ROLE = (
    "DATABASE_OWNER_URL is not set (or is DATABASE_URL): the processes use the role that owns the tables, "
    "which could disable the triggers keeping invoices, journals and audit entries unchanged "
    "(docs/operations.md, \"Database roles\")")
_OPERATOR_IDENTITY = ("ODP_CLIENT_ID", "ODP_CLIENT_SECRET", "ODP_ENTITY_ID")
_AFNOR_IDENTITY = ("AFNOR_CLIENT_ID", "AFNOR_CLIENT_SECRET")
EINVOICING_OPERATORS = ("odp", "afnor")
# What production must name: without them a process would start the embedded servers of development.
_PRODUCTION_SERVICES = ("DATABASE_URL", "REDIS_URL")
# The providers' credentials: without them every signature, webhook or e-invoice is refused.
_PROVIDER_CREDENTIALS = ("ESIGN_API_KEY", "ESIGN_WEBHOOK_SECRET")
_LOOPBACK_HOSTS = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


def _is_loopback(url: str) -> bool:
    """Whether `url` names this machine (nobody else can follow a link to it)."""
    host = (urlsplit(url).hostname or "").lower()
    if host in _LOOPBACK_HOSTS or host.endswith(".localhost") or not host:
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def _operator_identity(env: _Env) -> tuple[str, ...]:
    """The identity variables of the platform API `EINVOICING_OPERATOR` names."""
    return _AFNOR_IDENTITY if (_str(env, "EINVOICING_OPERATOR") or "").lower() == "afnor" else _OPERATOR_IDENTITY


def _production_refusals(env: _Env, storage_backend: str, warnings: list[str]) -> None:
    """What production refuses to start with, because it loses data or breaks for every user, and
    what it only warns about. Each refusal names its variable."""
    if storage_backend == "local" and not _bool(env, "STORAGE_PERSISTENT_VOLUME", False):
        env.problem("STORAGE_BACKEND=local in production needs STORAGE_PERSISTENT_VOLUME=true (VITRINE_DATA_DIR on a "
                    "disk that outlives a deploy), or STORAGE_BACKEND=gcs: a PaaS's local disk is lost at each deploy")
    if not _str(env, "SMTP_URL"):
        env.problem("SMTP_URL is not set: production would write its e-mails as files nobody receives")
    public_base_url = _str(env, "PUBLIC_BASE_URL", Config.public_base_url)
    if _is_loopback(public_base_url):
        env.problem(f"PUBLIC_BASE_URL must be the address users reach, not this machine, got {public_base_url!r}")
    missing = [name for name in (*_PROVIDER_CREDENTIALS, *_operator_identity(env)) if not _str(env, name)]
    if missing:
        env.problem("provider credentials missing in production (signatures, webhooks and e-invoices would be "
                    "refused): " + ", ".join(missing))
    missing = [name for name in _PLATFORM_IDENTITY if not _str(env, name)]
    if missing:
        env.problem("platform legal identity incomplete in production (invoices would print fallback values): "
                    + ", ".join(missing))
    if _int(env, "TRUSTED_PROXY_COUNT", 0, minimum=0) == 0:
        warnings.append("TRUSTED_PROXY_COUNT=0: behind a PaaS router every client has the router's address, so the "
                        "whole site shares one sign-in budget (set it to the number of proxies in front)")


def load_config(environ: dict[str, str] | None = None) -> Config:
    """Read every setting from the environment; raise ConfigError naming every blocking problem."""
    env = _Env(os.environ if environ is None else environ)
    warnings: list[str] = []

    log_level = (_str(env, "LOG_LEVEL", "info") or "info").lower()
    if log_level == "warning":
        log_level = "warn"
    if log_level not in LOG_LEVELS:
        log_level = env.problem(f"LOG_LEVEL must be one of {', '.join(LOG_LEVELS)}, got {log_level!r}", "info")

    log_format = (_str(env, "LOG_FORMAT", "auto") or "auto").lower()
    if log_format not in LOG_FORMATS:
        log_format = env.problem(f"LOG_FORMAT must be one of {', '.join(LOG_FORMATS)}, got {log_format!r}", "auto")

    flow_mode = _str(env, "ODP_FLOW_MODE", "Sandbox")
    if flow_mode not in ("Sandbox", "Production"):
        flow_mode = env.problem(f"ODP_FLOW_MODE must be Sandbox or Production, got {flow_mode!r}", "Sandbox")

    operator = (_str(env, "EINVOICING_OPERATOR", "odp") or "odp").lower()
    if operator not in EINVOICING_OPERATORS:
        operator = env.problem(f"EINVOICING_OPERATOR must be odp or afnor, got {operator!r}", "odp")

    environment = (_str(env, "ENVIRONMENT", "development") or "development").lower()
    if environment not in ENVIRONMENTS:
        environment = env.problem(f"ENVIRONMENT must be one of {', '.join(ENVIRONMENTS)}, got {environment!r}",
                                  "development")
    if env.get("E2E_TEST_MODE", "").strip() == "1" and environment == "production":
        # The stub operator marks every invoice acknowledged without sending it: never in production.
        env.problem("E2E_TEST_MODE=1 is refused when ENVIRONMENT=production")

    storage_backend = (_str(env, "STORAGE_BACKEND", "local") or "local").lower()
    if storage_backend not in ("local", "gcs"):
        storage_backend = env.problem(f"STORAGE_BACKEND must be local or gcs, got {storage_backend!r}", "local")
    if storage_backend == "gcs" and not _str(env, "GCS_BUCKET"):
        env.problem("STORAGE_BACKEND=gcs needs GCS_BUCKET")

    siret = _str(env, "PLATFORM_LEGAL_SIRET")
    if siret is not None and not (len(siret) == 14 and siret.isdigit()):
        env.problem(f"PLATFORM_LEGAL_SIRET must be 14 digits, got {siret!r}")

    _check_bank_identifiers(env)

    smtp_url = _str(env, "SMTP_URL")
    if smtp_url is not None and not smtp_url.lower().startswith(("smtp://", "smtps://")):
        # The message must not repeat the URL: it may hold the SMTP password.
        env.problem("SMTP_URL must start with smtp:// (STARTTLS) or smtps:// (implicit TLS)")

    unset = [name for name in _PRODUCTION_SERVICES if not _str(env, name)]
    if environment == "production" and unset:
        env.problem("ENVIRONMENT=production needs its own servers, not the embedded ones of development: "
                    f"set {', '.join(unset)}")

    if environment == "production":
        _production_refusals(env, storage_backend, warnings)
    missing = [name for name in _PLATFORM_IDENTITY if not _str(env, name)]
    if missing and environment != "production":
        warnings.append(
            "platform legal identity incomplete (documents use fallback values): " + ", ".join(missing)
        )
    missing = [name for name in _operator_identity(env) if not _str(env, name)]
    if missing and environment != "production":
        warnings.append(
            "e-invoicing operator identity incomplete (transmissions refused until set): "
            + ", ".join(missing)
        )
    if _str(env, "DATABASE_URL") and _str(env, "DATABASE_OWNER_URL") in (None, _str(env, "DATABASE_URL")):
        warnings.append(ONE_DATABASE_ROLE)
    if environment == "production":
        for name in ("ESIGN_BASE_URL", "ODP_BASE_URL", "ODP_TOKEN_URL", "AFNOR_TOKEN_URL", "AFNOR_FLOW_URL",
                     "AFNOR_DIRECTORY_URL"):  # they carry API keys, secrets and tokens
            if not (_str(env, name) or getattr(Config, name.lower())).lower().startswith("https://"):
                env.problem(f"{name} must be an https:// URL in production")
    if not _str(env, "ESIGN_WEBHOOK_SECRET") and environment != "production":
        warnings.append("ESIGN_WEBHOOK_SECRET is not set: every e-signature webhook will be refused")

    config = Config(
        environment=environment,
        service_name=_str(env, "SERVICE_NAME", "vitrine"),
        public_base_url=(_str(env, "PUBLIC_BASE_URL", "http://127.0.0.1:8000") or "").rstrip("/"),
        data_dir=Path(_str(env, "VITRINE_DATA_DIR", "var")),
        log_level=log_level,
        log_format=log_format,
        database_url=_str(env, "DATABASE_URL"),
        database_owner_url=_str(env, "DATABASE_OWNER_URL"),
        redis_url=_str(env, "REDIS_URL"),
        rate_limit_storage_url=_str(env, "RATE_LIMIT_STORAGE_URL"),
        trusted_proxy_count=_int(env, "TRUSTED_PROXY_COUNT", 0, minimum=0),
        cookie_secure=_bool(env, "COOKIE_SECURE", True),
        session_ttl_days=_int(env, "SESSION_TTL_DAYS", 7, minimum=1),
        argon2_time_cost=_int(env, "ARGON2_TIME_COST", 2, minimum=1),
        argon2_memory_cost_kib=_int(env, "ARGON2_MEMORY_COST_KIB", 19_456, minimum=8),
        argon2_parallelism=_int(env, "ARGON2_PARALLELISM", 1, minimum=1),
        storage_backend=storage_backend,
        storage_persistent_volume=_bool(env, "STORAGE_PERSISTENT_VOLUME", False),
        gcs_bucket=_str(env, "GCS_BUCKET"),
        storage_emulator_host=_str(env, "STORAGE_EMULATOR_HOST"),
        smtp_url=_str(env, "SMTP_URL"),
        mail_from=_str(env, "MAIL_FROM", Config.mail_from),
        platform_name=_str(env, "PLATFORM_NAME", Config.platform_name),
        esign_api_key=_str(env, "ESIGN_API_KEY"),
        esign_base_url=(_str(env, "ESIGN_BASE_URL", Config.esign_base_url) or "").rstrip("/"),
        esign_webhook_secret=_str(env, "ESIGN_WEBHOOK_SECRET"),
        esign_contract_threshold_cents=_int(env, "ESIGN_CONTRACT_THRESHOLD_CENTS", 1_000_000, minimum=0),
        esign_reconcile_after_seconds=_int(env, "ESIGN_RECONCILE_AFTER_SECONDS", 3600, minimum=60),
        platform_sepa_creditor_id=_str(env, "PLATFORM_SEPA_CREDITOR_ID"),
        registry_base_url=(_str(env, "REGISTRY_BASE_URL", Config.registry_base_url) or "").rstrip("/"),
        registry_cache_days=_int(env, "REGISTRY_CACHE_DAYS", 30, minimum=0),
        platform_commission_rate_bps=_commission_rate(env, warnings),
        legacy_deposit_rate_bps=_bps(env, "LEGACY_DEPOSIT_RATE_BPS", 3000),
        accounting_fiscal_year_end=_month_day(env, "ACCOUNTING_FISCAL_YEAR_END", "12-31"),
        auto_collection_retry_minutes=_int(env, "AUTO_COLLECTION_RETRY_MINUTES", 15, minimum=1),
        bank_transfer_due_days=_int(env, "BANK_TRANSFER_DUE_DAYS", 30, minimum=0),
        platform_vat_rate_percent=_vat_rate(env),
        platform_vat_on_debits=_bool(env, "PLATFORM_VAT_ON_DEBITS", False),
        platform_country_code=(_str(env, "PLATFORM_COUNTRY_CODE", "FR") or "FR").upper(),
        platform_legal_company_name=_str(env, "PLATFORM_LEGAL_COMPANY_NAME"),
        platform_legal_siret=siret,
        platform_legal_vat_number=_str(env, "PLATFORM_LEGAL_VAT_NUMBER"),
        platform_legal_street=_str(env, "PLATFORM_LEGAL_STREET"),
        platform_legal_postal_code=_str(env, "PLATFORM_LEGAL_POSTAL_CODE"),
        platform_legal_city=_str(env, "PLATFORM_LEGAL_CITY"),
        platform_legal_country=(_str(env, "PLATFORM_LEGAL_COUNTRY", "FR") or "FR").upper(),
        platform_legal_email=_str(env, "PLATFORM_LEGAL_EMAIL"),
        platform_legal_iban=_str(env, "PLATFORM_LEGAL_IBAN"),
        platform_legal_bic=_str(env, "PLATFORM_LEGAL_BIC"),
        platform_legal_form=_legal_form(env),
        platform_share_capital_cents=_share_capital(env),
        platform_registration=_registration(env, siret),
        platform_billing_contact_email=(_str(env, "PLATFORM_BILLING_CONTACT_EMAIL")
                                        or _str(env, "PLATFORM_LEGAL_EMAIL")),
        odp_client_id=_str(env, "ODP_CLIENT_ID"),
        odp_client_secret=_str(env, "ODP_CLIENT_SECRET"),
        odp_token_url=_str(env, "ODP_TOKEN_URL", Config.odp_token_url),
        odp_base_url=(_str(env, "ODP_BASE_URL", Config.odp_base_url) or "").rstrip("/"),
        odp_entity_id=_str(env, "ODP_ENTITY_ID"),
        odp_flow_mode=flow_mode,
        odp_scope=_str(env, "ODP_SCOPE", Config.odp_scope) or Config.odp_scope,
        odp_seller_ap=_str(env, "ODP_SELLER_AP"),
        odp_seller_ap_scheme=_str(env, "ODP_SELLER_AP_SCHEME", "0225"),
        einvoicing_operator=operator,
        afnor_client_id=_str(env, "AFNOR_CLIENT_ID"),
        afnor_client_secret=_str(env, "AFNOR_CLIENT_SECRET"),
        afnor_token_url=_str(env, "AFNOR_TOKEN_URL", Config.afnor_token_url),
        afnor_flow_url=(_str(env, "AFNOR_FLOW_URL", Config.afnor_flow_url) or "").rstrip("/"),
        afnor_directory_url=(_str(env, "AFNOR_DIRECTORY_URL", Config.afnor_directory_url) or "").rstrip("/"),
        afnor_scope=_str(env, "AFNOR_SCOPE"),
        afnor_webhook_secret=_str(env, "AFNOR_WEBHOOK_SECRET"),
        einvoicing_polling_enabled=_bool(env, "EINVOICING_POLLING_ENABLED", False),
        einvoicing_polling_interval_ms=_int(env, "EINVOICING_POLLING_INTERVAL_MS", 900_000, minimum=1),
        einvoicing_self_billing_enabled=_bool(env, "EINVOICING_SELF_BILLING_ENABLED", False),
        self_billing_scheduler_enabled=_bool(env, "SELF_BILLING_SCHEDULER_ENABLED", False),
        self_billing_scheduler_interval_ms=_int(
            env, "SELF_BILLING_SCHEDULER_INTERVAL_MS", 3_600_000, minimum=1
        ),
        e2e_test_mode=env.get("E2E_TEST_MODE", "").strip() == "1",
        default_printer_organization_id=_str(env, "DEFAULT_PRINTER_ORGANIZATION_ID"),
        print_asset_max_bytes=_int(env, "PRINT_ASSET_MAX_BYTES", 200 * 1024 * 1024, minimum=1),
        upload_quota_bytes=_int(env, "UPLOAD_QUOTA_BYTES", 10 * 1024**3, minimum=1),
        advance_status_concurrency=_int(env, "ADVANCE_STATUS_CONCURRENCY", 10, minimum=1),
        batch_advance_wait_seconds=_int(env, "BATCH_ADVANCE_WAIT_SECONDS", 20, minimum=0),
        outbox_resend_after_seconds=_int(env, "OUTBOX_RESEND_AFTER_SECONDS", 60, minimum=1),
        outbox_redeliver_after_seconds=_int(env, "OUTBOX_REDELIVER_AFTER_SECONDS", 600, minimum=1),
        outbox_max_handovers=_int(env, "OUTBOX_MAX_HANDOVERS", 8, minimum=1),
        metrics_token=_str(env, "METRICS_TOKEN"),
        worker_shutdown_timeout=_int(env, "WORKER_SHUTDOWN_TIMEOUT", 20, minimum=1),
        warnings=tuple(warnings),
    )
    if env.problems:
        raise ConfigError(*env.problems)
    return config
