"""The doc walks (the bash blocks of docs/*.md run against `vitrine dev`) find the platform, its
simulators and its mail folder through the variables the README documents, whose defaults are
`vitrine dev`'s, and wait out a 429. tests/test_dev.py runs some of them against a real
`vitrine dev` on a free port."""

import os
import re
import subprocess

import pytest

from tests.conftest import ROOT

BLOCK = re.compile(r"```bash\n(.*?)\n```\n", re.S)
# The lines that read the variables, as every walk writes them (the defaults: `vitrine dev`'s).
PLATFORM = "B=${VITRINE_URL:-http://127.0.0.1:8000}"
SETTINGS = re.compile(r"^(?:B|S|O|MAIL)=\$\{VITRINE_\w+:-.*$", re.M)


def walks() -> list[tuple[str, str]]:
    return [(f"{path.name}#{n}", block) for path in sorted((ROOT / "docs").glob("*.md"))
            for n, block in enumerate(BLOCK.findall(path.read_text()), start=1) if "curl " in block]


def test_the_eight_walks_are_found():
    assert len(walks()) >= 8  # the eight of issue 27, and any written since


@pytest.mark.parametrize("name,walk", walks(), ids=[name for name, _ in walks()])
def test_a_walk_names_no_port_nor_folder_of_its_own_and_waits_out_a_429(name, walk):
    lines = walk.splitlines()
    assert PLATFORM in lines
    settings = SETTINGS.findall(walk)
    assert not [line for line in lines if "127.0.0.1" in line and line not in settings and not line.startswith("#")]
    assert "var/mail" not in walk.replace("${VITRINE_DATA_DIR:-var}/mail", "")
    assert 'curl -sSf -o /dev/null "$B/api/health"' in walk  # a wrong VITRINE_URL says so first
    call = walk[walk.index("call() {"):]
    assert "429" in call.split("cat \"$T/body\"; }", 1)[0] and "retryAfterSeconds" in call


def test_the_defaults_are_vitrine_devs_and_the_simulators_follow_the_platforms_port():
    onboarding = dict(walks())["onboarding.md#1"]
    einvoicing = next(walk for name, walk in walks() if name.startswith("einvoicing.md") and "$O/_control" in walk)
    settings = "\n".join(SETTINGS.findall(onboarding) + [line for line in SETTINGS.findall(einvoicing)
                                                          if line.startswith("O=")])
    script = settings + '\necho "$B $S $O $MAIL"'

    def urls(**env: str) -> str:
        clean = {k: v for k, v in os.environ.items() if not k.startswith("VITRINE_")}
        run = subprocess.run(["bash", "-c", script], env={**clean, **env}, capture_output=True, text=True, timeout=10)
        assert run.returncode == 0, run.stderr
        return run.stdout.strip()

    assert urls() == "http://127.0.0.1:8000 http://127.0.0.1:8001 http://127.0.0.1:8002 var/mail"
    assert urls(VITRINE_URL="http://127.0.0.1:8200", VITRINE_DATA_DIR="/tmp/v") == (
        "http://127.0.0.1:8200 http://127.0.0.1:8201 http://127.0.0.1:8202 /tmp/v/mail")
    assert urls(VITRINE_URL="http://localhost:9000", VITRINE_ESIGN_URL="http://esign:1", VITRINE_ODP_URL="http://odp:2",
                VITRINE_MAIL_DIR="/srv/mail") == "http://localhost:9000 http://esign:1 http://odp:2 /srv/mail"
