"""External clients are built once at boot from the configuration and handed in, never looked
up: a client given to boot replaces the built one, for the web's dependencies and the worker's
runtime alike."""

from __future__ import annotations

import pytest

from backend.einvoicing.operator_client import OperatorClient
from backend.onboarding.esign_client import EsignClient
from backend.onboarding.registry_client import RegistryClient
from backend.runtime import boot, build_runtime, client_names, current_runtime
from storage import Storage


def test_boot_builds_each_client_from_the_configuration(config):
    runtime = build_runtime(config)
    assert set(client_names()) == {"storage", "esign", "operator", "registry"}
    assert isinstance(runtime.storage, Storage)
    assert isinstance(runtime.esign, EsignClient) and runtime.esign.base_url == config.esign_base_url.rstrip("/")
    assert isinstance(runtime.operator, OperatorClient)
    assert isinstance(runtime.registry, RegistryClient) and runtime.registry.base_url == config.registry_base_url
    assert runtime.clients() == {name: getattr(runtime, name) for name in client_names()}


def test_a_handed_in_client_reaches_the_web_and_the_worker(make_app):
    fake = object()
    app = make_app(esign=fake)
    assert app.deps.esign is fake and current_runtime().esign is fake
    assert app.deps.operator is current_runtime().operator and app.deps.storage is current_runtime().storage


def test_an_unknown_client_is_refused(config):
    with pytest.raises(TypeError, match="unknown client"):
        boot(config, role="test", printer_api=object())
