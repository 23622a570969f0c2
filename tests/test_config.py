import os
import subprocess
import sys

import pytest

from backend.config import ConfigError, load_config


@pytest.mark.parametrize("value", ["abc", "20.5", "-1", "10001", "1e3", "0x10"])
def test_a_bad_commission_rate_stops_boot(value):
    with pytest.raises(ConfigError, match="PLATFORM_COMMISSION_RATE_BPS"):
        load_config({"PLATFORM_COMMISSION_RATE_BPS": value})


@pytest.mark.parametrize("value,expected", [("0", 0), ("10000", 10000), (" 1500 ", 1500)])
def test_commission_rate_bounds_are_inclusive(value, expected):
    assert load_config({"PLATFORM_COMMISSION_RATE_BPS": value}).platform_commission_rate_bps == expected


@pytest.mark.parametrize("value", ["150", "100", "-1", "5.555", "abc", "NaN", "Infinity"])
def test_a_vat_rate_outside_0_100_or_with_more_than_two_decimals_stops_boot(value):
    with pytest.raises(ConfigError, match="PLATFORM_VAT_RATE_PERCENT"):
        load_config({"PLATFORM_VAT_RATE_PERCENT": value})


@pytest.mark.parametrize("value,bps", [("5.5", 550), ("2.1", 210), ("20", 2000), ("0", 0), ("99.99", 9999)])
def test_decimal_vat_rates_boot(value, bps):
    from backend.billing.vat import vat_rate_bps

    assert vat_rate_bps(load_config({"PLATFORM_VAT_RATE_PERCENT": value}).platform_vat_rate_percent) == bps


def test_absent_commission_rate_warns_and_defaults_to_2000():
    config = load_config({})
    assert config.platform_commission_rate_bps == 2000
    assert any("PLATFORM_COMMISSION_RATE_BPS" in w for w in config.warnings)


def test_missing_platform_and_operator_identity_only_warn():
    config = load_config({"PLATFORM_COMMISSION_RATE_BPS": "2000"})
    assert any("PLATFORM_LEGAL_SIRET" in w for w in config.warnings)
    assert any("ODP_CLIENT_ID" in w for w in config.warnings)


@pytest.mark.parametrize(
    "env,match",
    [
        ({"LOG_LEVEL": "verbose"}, "LOG_LEVEL"),
        ({"TRUSTED_PROXY_COUNT": "-2"}, "TRUSTED_PROXY_COUNT"),
        ({"ODP_FLOW_MODE": "Live"}, "ODP_FLOW_MODE"),
        ({"STORAGE_BACKEND": "gcs"}, "GCS_BUCKET"),
        ({"PLATFORM_LEGAL_SIRET": "123"}, "PLATFORM_LEGAL_SIRET"),
        ({"COOKIE_SECURE": "maybe"}, "COOKIE_SECURE"),
    ],
)
def test_other_malformed_settings_stop_boot(env, match):
    with pytest.raises(ConfigError, match=match):
        load_config(env)


def test_secrets_are_described_only_as_present_or_absent():
    config = load_config(
        {"ESIGN_API_KEY": "key-123456", "ODP_CLIENT_SECRET": "odp-secret-xyz", "SMTP_URL": "smtp://u:pw@h:25"}
    )
    described = config.describe()
    text = repr(described)
    assert "key-123456" not in text and "odp-secret-xyz" not in text and "pw@h" not in text
    assert "ESIGN_API_KEY" in described["credentialsPresent"]
    assert "ESIGN_WEBHOOK_SECRET" in described["credentialsAbsent"]


def test_database_password_is_hidden_in_the_description():
    described = load_config({"DATABASE_URL": "postgresql://app:hunter22@db:5432/vitrine"}).describe()
    assert described["database_url"] == "postgresql://app:***@db:5432/vitrine"


def test_the_cli_refuses_to_start_with_a_clear_message_on_a_bad_rate():
    env = dict(os.environ, PLATFORM_COMMISSION_RATE_BPS="twenty")
    result = subprocess.run(
        [sys.executable, "-m", "ops.cli", "migrate"], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert "PLATFORM_COMMISSION_RATE_BPS must be an integer" in result.stderr


def test_the_repr_of_a_configuration_never_shows_a_secret(config):
    from dataclasses import replace

    secret = "s3cr3t-value-never-printed"
    loaded = replace(config, esign_api_key=secret, odp_client_secret=secret, metrics_token=secret,
                     smtp_url=f"smtp://user:{secret}@mail.example")
    assert secret not in repr(loaded) and secret not in str(loaded)
    assert "ESIGN_API_KEY" in repr(loaded)


@pytest.mark.parametrize("urls,unset", [
    ({}, "DATABASE_URL, REDIS_URL"),
    ({"DATABASE_URL": "postgresql://app:pw@db:5432/vitrine"}, "REDIS_URL"),
    ({"REDIS_URL": "redis://cache:6379/0", "DATABASE_URL": " "}, "DATABASE_URL"),
])
def test_production_names_its_own_database_and_redis(urls, unset):
    with pytest.raises(ConfigError) as refused:
        load_config(_production(**{"DATABASE_URL": None, "REDIS_URL": None, **urls}))
    assert refused.value.problems == (
        f"ENVIRONMENT=production needs its own servers, not the embedded ones of development: set {unset}",)
    assert load_config(_production()).environment == "production"
    assert load_config({"ENVIRONMENT": "development", **urls}).environment == "development"  # embedded default


def _production(**changes: str | None) -> dict[str, str]:
    from tests.production_settings import PRODUCTION

    env = {**PRODUCTION, **changes}
    return {name: value for name, value in env.items() if value is not None}


def test_a_complete_production_configuration_starts_without_warning():
    config = load_config(_production())
    assert (config.environment, config.warnings) == ("production", ())


@pytest.mark.parametrize("value", ["prod", "Prod ", "live", "dev"])
def test_an_environment_outside_the_four_names_is_refused(value):
    with pytest.raises(ConfigError) as refused:
        load_config({"ENVIRONMENT": value})
    assert refused.value.problems == (
        f"ENVIRONMENT must be one of development, test, staging, production, got {value.strip().lower()!r}",)


@pytest.mark.parametrize("value", ["development", "test", "staging", "production", "Production"])
def test_the_four_environments_are_taken_in_any_case(value):
    assert load_config(_production(ENVIRONMENT=value)).environment == value.lower()


@pytest.mark.parametrize("changes,problem", [
    ({"STORAGE_BACKEND": "local", "GCS_BUCKET": None}, "STORAGE_BACKEND=local in production needs "
                                                       "STORAGE_PERSISTENT_VOLUME=true"),
    ({"SMTP_URL": None}, "SMTP_URL is not set"),
    ({"PUBLIC_BASE_URL": None}, "PUBLIC_BASE_URL must be the address users reach, not this machine, "
                                "got 'http://127.0.0.1:8000'"),
    ({"PUBLIC_BASE_URL": "https://localhost"}, "PUBLIC_BASE_URL must be the address users reach"),
    ({"PUBLIC_BASE_URL": "http://[::1]:8000"}, "PUBLIC_BASE_URL must be the address users reach"),
    ({"PUBLIC_BASE_URL": "http://0.0.0.0:8000"}, "PUBLIC_BASE_URL must be the address users reach"),
    ({"ESIGN_API_KEY": None}, "provider credentials missing in production (signatures, webhooks and e-invoices "
                              "would be refused): ESIGN_API_KEY"),
    ({"ESIGN_WEBHOOK_SECRET": None, "ODP_CLIENT_SECRET": None}, "provider credentials missing in production "
        "(signatures, webhooks and e-invoices would be refused): ESIGN_WEBHOOK_SECRET, ODP_CLIENT_SECRET"),
    ({"PLATFORM_LEGAL_IBAN": None, "PLATFORM_LEGAL_CITY": ""}, "platform legal identity incomplete in "
        "production (invoices would print fallback values): PLATFORM_LEGAL_CITY, PLATFORM_LEGAL_IBAN"),
])
def test_production_refuses_each_setting_that_would_lose_data_or_break_every_user(changes, problem):
    with pytest.raises(ConfigError) as refused:
        load_config(_production(**changes))
    assert len(refused.value.problems) == 1 and refused.value.problems[0].startswith(problem)
    assert load_config(_production(**changes, ENVIRONMENT="staging")).environment == "staging"  # production only


def test_local_storage_on_a_declared_persistent_volume_starts_in_production():
    config = load_config(_production(STORAGE_BACKEND="local", GCS_BUCKET=None, STORAGE_PERSISTENT_VOLUME="true"))
    assert (config.storage_backend, config.storage_persistent_volume) == ("local", True)


def test_production_warns_when_no_proxy_is_trusted():
    config = load_config(_production(TRUSTED_PROXY_COUNT="0"))
    assert [w.split(":")[0] for w in config.warnings] == ["TRUSTED_PROXY_COUNT=0"]


def test_the_worker_shutdown_timeout_stays_below_a_platform_s_thirty_seconds_by_default():
    assert load_config({}).worker_shutdown_timeout < 30
    assert load_config({"WORKER_SHUTDOWN_TIMEOUT": "8"}).worker_shutdown_timeout == 8
    with pytest.raises(ConfigError, match="WORKER_SHUTDOWN_TIMEOUT must be at least 1"):
        load_config({"WORKER_SHUTDOWN_TIMEOUT": "0"})
