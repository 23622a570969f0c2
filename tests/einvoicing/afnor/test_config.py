"""EINVOICING_OPERATOR chooses the platform API; each choice names its own identity at boot and in
production's refusals."""

from __future__ import annotations

import pytest

from backend.config import ConfigError, load_config
from backend.einvoicing.afnor_client import AfnorClient
from backend.einvoicing.operator_choice import build_operator_client
from backend.einvoicing.operator_client import OdpClient
from tests.production_settings import PRODUCTION

AFNOR = {"EINVOICING_OPERATOR": "afnor", "AFNOR_CLIENT_ID": "vitrine", "AFNOR_CLIENT_SECRET": "s3cret",
         "AFNOR_FLOW_URL": "https://api.flow.pa.example/flow-service/",
         "AFNOR_DIRECTORY_URL": "https://api.directory.pa.example/directory-service"}


def test_afnor_builds_the_flow_service_client_and_odp_stays_the_default():
    config = load_config(AFNOR)
    client = build_operator_client(config)
    assert isinstance(client, AfnorClient) and client.missing_identity == []
    assert (client.base_url, client.directory_url) == ("https://api.flow.pa.example/flow-service",
                                                      "https://api.directory.pa.example/directory-service")
    assert "s3cret" not in repr(client) and "s3cret" not in repr(config)
    assert isinstance(build_operator_client(load_config({})), OdpClient)


def test_the_boot_warning_names_the_chosen_platform_s_identity():
    warnings = " ".join(load_config({"EINVOICING_OPERATOR": "AFNOR"}).warnings)
    assert "AFNOR_CLIENT_ID, AFNOR_CLIENT_SECRET" in warnings and "ODP_CLIENT_ID" not in warnings
    assert not any("operator identity" in warning for warning in load_config(AFNOR).warnings)


def test_an_unknown_operator_is_refused():
    with pytest.raises(ConfigError, match="EINVOICING_OPERATOR must be odp or afnor, got 'ppf'"):
        load_config({"EINVOICING_OPERATOR": "ppf"})


def test_production_needs_the_afnor_identity_and_https_urls_only_when_chosen():
    without_odp = {k: v for k, v in PRODUCTION.items() if not k.startswith("ODP_CLIENT")}
    with pytest.raises(ConfigError, match="AFNOR_CLIENT_ID, AFNOR_CLIENT_SECRET"):
        load_config({**without_odp, "EINVOICING_OPERATOR": "afnor"})
    with pytest.raises(ConfigError, match="AFNOR_FLOW_URL must be an https:// URL"):
        load_config({**without_odp, **AFNOR, "AFNOR_FLOW_URL": "http://pa.example/flow-service"})
    assert load_config({**without_odp, **AFNOR}).einvoicing_operator == "afnor"
