"""The platform API this process speaks, chosen at boot (`build_operator_client`, the `operator`
client of `backend.runtime.Runtime`): the test-mode stub under `E2E_TEST_MODE`, else the API
`EINVOICING_OPERATOR` names (docs/einvoicing.md, "Choosing a platform")."""

from __future__ import annotations

from backend.config import Config
from backend.einvoicing.afnor_client import AfnorClient
from backend.einvoicing.operator_client import OdpClient, OperatorClient, StubOperatorClient


def build_operator_client(config: Config) -> OperatorClient:
    if config.e2e_test_mode:
        return StubOperatorClient()
    if config.einvoicing_operator == "afnor":
        return AfnorClient.from_config(config)
    return OdpClient.from_config(config)
