"""The doc walks (the bash blocks of docs/*.md run against `vitrine dev`) find the platform, its
simulators and its mail folder through the variables the README documents, whose defaults are
`vitrine dev`'s, reuse their sign-in sessions and wait out a 429. Each works on organizations and
records of its own (or puts back what it changed), so they all run on one `vitrine dev`, in any
order, twice: a random order, whose seed the test prints (`VITRINE_WALKS_SEED` replays one)."""

import os
import random
import re
import shutil
import signal
import subprocess

import pytest

from tests.conftest import ROOT
from tests.test_dev import data_dir, seeded_data_dir, start_dev  # noqa: F401 (fixtures)

BLOCK = re.compile(r"```bash\n(.*?)\n```\n", re.S)
# The lines that read the variables, as every walk writes them (the defaults: `vitrine dev`'s).
PLATFORM = "B=${VITRINE_URL:-http://127.0.0.1:8000}"
# A walk's sign_in: the session kept from an earlier walk when it is still valid.
SIGN_IN = """[[ -s $jar && $(curl -sS -o /dev/null -w '%{http_code}' -b "$jar" "$B/api/auth/session") == 200 ]]"""
SETTINGS = re.compile(r"^(?:B|S|O|MAIL)=\$\{VITRINE_\w+:-.*$", re.M)


def walks() -> list[tuple[str, str]]:
    return [(f"{path.name}#{n}", block) for path in sorted((ROOT / "docs").glob("*.md"))
            for n, block in enumerate(BLOCK.findall(path.read_text()), start=1) if "curl " in block]


def test_every_walk_of_the_docs_is_found():
    assert len(walks()) >= 13  # a walk the pattern misses would silently never run
    assert "accounting.md#1" in dict(walks())


@pytest.mark.parametrize("name,walk", walks(), ids=[name for name, _ in walks()])
def test_a_walk_names_no_port_nor_folder_of_its_own_and_waits_out_a_429(name, walk):
    lines = walk.splitlines()
    assert PLATFORM in lines
    settings = SETTINGS.findall(walk)
    assert not [line for line in lines if "127.0.0.1" in line and line not in settings and not line.startswith("#")]
    assert "var/mail" not in walk.replace("${VITRINE_DATA_DIR:-var}/mail", "")
    assert 'curl -sSf -o /dev/null "$B/api/health"' in walk  # a wrong VITRINE_URL says so first
    assert 'echo "walk done' in walk  # the last line, so a run that stopped early shows
    call = walk[walk.index("call() {"):].split("cat \"$T/body\"; }", 1)[0]
    assert "429" in call and "retryAfterSeconds" in call
    # Retry-After is whole seconds, the window's end rounded down by Redis: the wait is one more.
    assert 'wait=$(($(jq -r .data.retryAfterSeconds "$T/body") + 1))' in call and 'sleep "$wait"' in call
    # A demo login signs in once: its session is reused while valid.
    if "vitrine-demo" in walk:
        assert SIGN_IN in walk and "api/auth/sign-in -c \"$T" not in walk


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


def run_walk(script: str, port: int, folder, sessions) -> subprocess.CompletedProcess:
    """A walk run from the repository root against a `vitrine dev --port port --data-dir folder`,
    through the variables the README documents (the simulators at port + 1, + 2...), its sign-in
    sessions kept in `sessions`."""
    env = dict(os.environ, VITRINE_URL=f"http://127.0.0.1:{port}", VITRINE_MAIL_DIR=str(folder / "mail"),
               VITRINE_SESSIONS=str(sessions))
    return subprocess.run(["bash", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=400)


@pytest.mark.long
@pytest.mark.timeout(1800)
@pytest.mark.skipif(not (shutil.which("jq") and shutil.which("curl")), reason="the walks need curl and jq")
@pytest.mark.usefixtures("seeded_data_dir")  # the platform as its first start left it, copied
def test_every_walk_runs_twice_in_a_random_order_on_one_platform(free_port, data_dir, tmp_path):  # noqa: F811
    seed = int(os.environ.get("VITRINE_WALKS_SEED") or random.randrange(2**32))
    order = walks()
    random.Random(seed).shuffle(order)
    print(f"walks in the order of seed {seed} (VITRINE_WALKS_SEED={seed} replays it):", [name for name, _ in order])
    port = free_port()
    process, output = start_dev(port, data_dir)
    try:
        assert output.ready.wait(timeout=180), "vitrine dev did not print its URL within 180 s"
        assert process.poll() is None, "vitrine dev exited early:\n" + output.text()[-3000:]
        sessions = tmp_path / "sessions"
        for run in (1, 2):
            for name, walk in order:
                done = run_walk(walk, port, data_dir, sessions)
                assert done.returncode == 0 and "walk done" in done.stdout, (
                    f"seed {seed}, run {run}, {name}:\n" + done.stdout[-2000:] + done.stderr[-2000:])
        # Signed in once per demo login: every later walk reused the sessions.
        assert sorted(jar.name for jar in sessions.iterdir()) == [
            "admin.jar", "distributeur.jar", "imprimeur.jar", "industriel.jar"]
        # A walk stops loudly at an answer that is not 2xx (a wrong password, no session to reuse).
        walk = dict(order)["einvoicing.md#1"].replace("vitrine-demo", "not-the-password")
        broken = run_walk(walk, port, data_dir, tmp_path / "no-sessions")
        assert broken.returncode == 1
        assert f"walk stopped: POST http://127.0.0.1:{port}/api/auth/sign-in answered 401" in broken.stderr
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
