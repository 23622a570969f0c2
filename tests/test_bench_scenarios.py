"""`vitrine bench`: every scenario module imports and declares what the harness reads (the figures
themselves are measured by running `vitrine bench`, never asserted here)."""

import importlib

import pytest

from ops.bench import scenario_names


@pytest.mark.parametrize("name", scenario_names())
def test_every_scenario_imports_and_describes_itself(name):
    module = importlib.import_module(f"ops.bench.{name}")
    assert name == module.NAME and module.DESCRIPTION and callable(module.run)


# -- The closing table and its JSON, from fake results (no bench is run) --------------------------

import json  # noqa: E402

from ops.bench import summary  # noqa: E402
from ops.bench.goals import GOALS, Goal, goals_for, label_matches, ratio, value  # noqa: E402
from ops.bench.report import Figure, Result  # noqa: E402
from ops.bench.summary import Outcome, format_summary, results_json, verdict_rows  # noqa: E402

FAKE_GOALS = {
    "api": {"CPU per answer (ms)": (ratio("<=", 1.5),), "p99 (ms)": (value("<=", 80, "ms"),),
            "throughput (req/s)": (ratio(">=", 0.9),), "renamed away (ms)": (value("<=", 1, "ms"),)},
    "batch": {"advance of * orders (ms)": (value("<=", 5000, "ms"),),
              "confirmation (ms)": (ratio("<=", 3), value("<=", 500, "ms"))},
}


def fake_result(*figures: Figure, ok: bool = True) -> Result:
    return Result(title="fake", reference="fake reference", settings=["none"], figures=list(figures),
                  checks=["a check"], notes=["a note"], ok=ok)


def fake_outcomes() -> list[Outcome]:
    return [
        Outcome("api", fake_result(Figure("CPU per answer (ms)", 3.0, 1.0), Figure("p99 (ms)", 79.5, 40.0),
                                   Figure("Throughput  (req/s)", 950, 1000), Figure("requests", 5000, 6000, False)),
                seconds=12.5),
        Outcome("batch", fake_result(Figure("advance of 200 orders (ms)", 4200, 20),
                                     Figure("confirmation (ms)", 520, 200), Figure("latency p50 (s)", 2.0, 0.0),
                                     ok=False), seconds=3.0),
        Outcome("broken", None, seconds=0.5, error="Traceback ...\nValueError: boom"),
    ]


def test_each_figure_is_judged_against_its_goal_by_label_and_scenario():
    rows = [(r.scenario, r.figure, r.goal, r.measured, r.verdict) for r in verdict_rows(fake_outcomes(), FAKE_GOALS)]
    assert rows == [
        ("api", "CPU per answer (ms)", "ratio <= 1.50x", "3.00x (3 / 1)", "FAIL"),
        ("api", "p99 (ms)", "<= 80 ms", "79.50 ms", "PASS"),
        ("api", "Throughput  (req/s)", "ratio >= 0.90x", "0.95x (950 / 1,000)", "PASS"),  # case and spaces ignored
        ("api", "requests", "", "0.83x (5,000 / 6,000)", ""),  # no goal: shown without a verdict
        ("api", "renamed away (ms)", "<= 1 ms", "no such figure in this run", "MISSING"),
        ("batch", "advance of 200 orders (ms)", "<= 5000 ms", "4,200 ms", "PASS"),  # `*` matches the size
        ("batch", "confirmation (ms)", "ratio <= 3.00x", "2.60x (520 / 200)", "PASS"),
        ("batch", "confirmation (ms)", "<= 500 ms", "520 ms", "FAIL"),  # two goals, two rows
        ("batch", "latency p50 (s)", "", "2", ""),  # no reference: the value
        ("batch", "(checks)", "all hold", "a check did not hold: see above", "FAIL"),
        ("broken", "(scenario)", "", "did not run: see its traceback above", "ERROR"),
    ]


def test_a_ratio_goal_on_a_zero_reference_is_not_judged():
    goal = ratio("<=", 2)
    assert goal.holds(Figure("x", 1.0, 0.0)) is None
    rows = verdict_rows([Outcome("s", fake_result(Figure("x", 1.0, 0.0)))], {"s": {"x": (goal,)}})
    assert [r.verdict for r in rows] == ["n/a"]


def test_the_summary_is_one_markdown_table_with_a_tally():
    text = format_summary(verdict_rows(fake_outcomes(), FAKE_GOALS), quick=True)
    lines = text.splitlines()
    assert lines[0].split("|")[1:-1] == [" scenario ", " figure                     ", " goal           ",
                                         " measured                             ", " verdict "]
    assert set(lines[1]) == {"|", "-"}
    table = lines[:lines.index("")]
    assert len(table) == 2 + 11 and len({len(line) for line in table}) == 1  # aligned columns
    assert lines[-1] == ("goals: 4 PASS, 3 FAIL, 1 MISSING, 1 ERROR "
                         "(quick run: smaller sizes than the goals'; verdicts indicative)")


def test_the_json_holds_the_rows_and_every_raw_figure(tmp_path):
    outcomes = fake_outcomes()
    rows = verdict_rows(outcomes, FAKE_GOALS)
    document = results_json(outcomes, rows, quick=False, started="2026-11-24T01:00:00Z",
                            finished="2026-11-24T01:10:00Z", machine={"cpus": 2}, commit="abc123")
    document = json.loads(json.dumps(document))  # what `--json FILE` writes is plain JSON
    assert document["rows"][0] == {"scenario": "api", "figure": "CPU per answer (ms)", "goal": "ratio <= 1.50x",
                                   "measured": "3.00x (3 / 1)", "verdict": "FAIL"}
    assert document["scenarios"]["api"]["figures"][3] == {"label": "requests", "value": 5000, "reference": 6000,
                                                          "ratio": 5000 / 6000, "summary": False}
    assert document["scenarios"]["batch"]["ok"] is False
    assert document["scenarios"]["broken"] == {"seconds": 0.5, "error": "Traceback ...\nValueError: boom"}
    assert (document["quick"], document["commit"], document["machine"]) == (False, "abc123", {"cpus": 2})


def test_machine_description_names_cores_and_load():
    machine = summary.machine_description()
    assert machine["cpus"] >= 1 and len(machine["loadAverage"]) == 3 and machine["python"]


def test_every_goal_names_a_scenario_that_exists_and_is_well_formed():
    assert set(GOALS) <= set(scenario_names())
    for table in GOALS.values():
        for goals in table.values():
            assert goals and all(isinstance(goal, Goal) for goal in goals)
    assert goals_for("batch", "advance of 1,000 orders (ms)") == (value("<=", 2000, "ms"),)
    assert label_matches("API p50 (ms)", "api  P50 (ms)") and not label_matches("API p50 (ms)", "API p99 (ms)")
    with pytest.raises(ValueError):
        Goal("ratio", "<", 1)


def test_run_bench_ends_with_the_table_and_writes_the_json(monkeypatch, tmp_path, capsys):
    """The runner itself, with a fake scenario and a fake stack (no server started)."""
    import contextlib
    import types

    import ops.bench as bench
    import ops.bench.stack as stack

    fake = types.SimpleNamespace(NAME="fake", DESCRIPTION="a fake scenario",
                                 run=lambda stack, quick: fake_result(Figure("p99 (ms)", 10.0, 5.0)))
    monkeypatch.setattr(bench, "scenario_names", lambda: ["fake"])
    monkeypatch.setattr(bench.importlib, "import_module", lambda name: fake)
    monkeypatch.setattr(stack, "open_stack", contextlib.nullcontext)
    monkeypatch.setitem(GOALS, "fake", {"p99 (ms)": (value("<=", 8, "ms"),)})
    path = tmp_path / "bench.json"
    assert bench.run_bench(None, quick=True, json_path=str(path)) == 0
    out = capsys.readouterr().out
    assert "| fake     | p99 (ms) | <= 8 ms | 10 ms    | FAIL    |" in out
    assert "goals: 1 FAIL (quick run" in out
    document = json.loads(path.read_text())
    assert document["rows"] == [{"scenario": "fake", "figure": "p99 (ms)", "goal": "<= 8 ms", "measured": "10 ms",
                                 "verdict": "FAIL"}]
    assert document["scenarios"]["fake"]["figures"][0]["value"] == 10.0


def test_server_cost_alternates_first_in_turn_and_counts_cpu_per_answer():
    from ops.bench.load import LoadResult, ServerCost, alternate

    class FakeServer:  # CPU seconds move by 0.5 s per window it answers
        def __init__(self, url: str) -> None:
            self.url, self.cpu = url, 0.0

        def cpu_seconds(self) -> float:
            return self.cpu

    order: list[str] = []
    servers = {"a": FakeServer("a"), "b": FakeServer("b")}

    def load(url: str) -> LoadResult:
        order.append(url)
        servers[url].cpu += 0.5
        return LoadResult(requests=900, seconds=1.0, non_2xx=0, errors=0, answered=1_000, latencies_ms=(1.0,))

    costs = [ServerCost(servers["a"]), ServerCost(servers["b"])]
    alternate(costs, 3, load)
    assert order == ["a", "b", "b", "a", "a", "b"]
    assert costs[0].cpu_ms_per_answer == pytest.approx(0.5)  # 1.5 s over 3,000 answers, warm-up included
    assert costs[1].combined.requests == 2_700
