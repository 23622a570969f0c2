"""The e-invoicing walks of docs/einvoicing.md on `vitrine dev` with `EINVOICING_OPERATOR=afnor`:
the platform is the AFNOR XP Z12-013 simulator (port + 2), subscribed to the app's callbacks.
The first walk (deposit, acknowledgement, rejection as the reform's 213, a retried failure) and
the second (statuses out: 205 Approuvée, the 212 Encaissée, 210 Refusée then a credit note) run
unchanged, as on Specification C's operator (`tests/test_doc_walks.py` runs every walk there)."""

from __future__ import annotations

import shutil
import signal

import pytest

from tests.test_dev import data_dir, seeded_data_dir, start_dev  # noqa: F401 (fixtures)
from tests.test_doc_walks import run_walk, walks

WALKS = ("einvoicing.md#1", "einvoicing.md#2")


@pytest.mark.long
@pytest.mark.timeout(900)
@pytest.mark.skipif(not (shutil.which("jq") and shutil.which("curl")), reason="the walks need curl and jq")
@pytest.mark.usefixtures("seeded_data_dir")  # the platform as its first start left it, copied
def test_the_einvoicing_walks_run_on_an_afnor_platform(free_port, data_dir, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setenv("EINVOICING_OPERATOR", "afnor")  # read by `vitrine dev` from the environment
    port = free_port()
    process, output = start_dev(port, data_dir)
    try:
        assert output.ready.wait(timeout=240), "vitrine dev did not print its URL within 240 s"
        assert process.poll() is None, "vitrine dev exited early:\n" + output.text()[-3000:]
        assert "AFNOR XP Z12-013 platform simulator" in output.text()
        found = dict(walks())
        for name in WALKS:
            done = run_walk(found[name], port, data_dir, tmp_path / "sessions")
            assert done.returncode == 0 and "walk done" in done.stdout, (
                f"{name}:\n" + done.stdout[-2000:] + done.stderr[-2000:])
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
