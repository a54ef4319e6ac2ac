"""The fidelity probe's frozen task (bench-fact-recall): generated files in sync, facts that are seen and
never typed, spread over the run, and found on screen where the generator put them (a short variant of
the task played through the fake server); the full 530-step run only with ARTEMIS_BENCH_FULL=1."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from artemis_cli.bench.fidelity import load_probe
from artemis_cli.bench.generate_suite import PROBE_FILE, fact_recall_task, main
from artemis_cli.bench.runner import run_pair
from artemis_cli.bench.suite import load_suite
from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import Task

SUITE = Path(__file__).resolve().parents[2] / "tasks" / "bench"
TASK_ID = "bench-fact-recall"


def test_frozen_suite_is_what_the_generator_writes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(tmp_path)
    written = sorted(p.name for p in tmp_path.iterdir())
    assert TASK_ID + ".yaml" in written and PROBE_FILE in written
    for name in written:
        assert (SUITE / name).read_bytes() == (tmp_path / name).read_bytes(), f"regenerate tasks/bench ({name})"


def test_facts_are_seen_never_typed_and_spread_over_the_run() -> None:
    task, facts = fact_recall_task()
    assert len(task["reference"]) >= 300
    typed = [str(a["type"]["text"]).casefold() for a in task["reference"] if "type" in a and "text" in a["type"]]
    goal = task["goal"].casefold()
    for f in facts:
        value = f["value"].casefold()
        assert not any(value in t for t in typed), f["id"]
        assert value not in goal, f["id"]
        assert value not in f["question"].casefold(), f["id"]
    assert {f["kind"] for f in facts} >= {"phone", "email", "price", "order", "setting"}
    steps = [f["planned_step"] for f in facts]
    assert min(steps) < 10 and max(steps) - min(steps) >= 300
    assert len({f["question"] for f in facts}) == len(facts)
    # the suite loads the frozen file with the same facts
    probe = load_probe(SUITE)[TASK_ID]
    assert [(p.id, p.value, p.planned_step) for p in probe] == [(f["id"], f["value"], f["planned_step"])
                                                               for f in facts]


def _short_variant(task: Task, steps: int) -> Task:
    """The task cut after ``steps`` reference entries (then finish), without its success checks."""
    reference = [*task.reference[:steps], {"finish": {"success": True, "answer": "short variant"}}]
    return Task.model_validate({**task.model_dump(mode="json", exclude_none=True, by_alias=True),
                                "reference": reference, "success": [], "max_steps": steps + 10})


def test_short_variant_finds_each_fact_on_screen_where_the_generator_put_it(tmp_path: Path) -> None:
    task = load_suite(SUITE, only=[TASK_ID])[0]
    cut = 80  # contacts, settings and the first order
    facts = [f for f in load_probe(SUITE)[TASK_ID] if (f.planned_step or 0) <= cut]
    assert len(facts) >= 10
    row = run_pair(_short_variant(task, cut), "transcript", load_profile("flash"), "scripted", tmp_path / "d",
                   facts=facts)
    assert row["success"] and row["steps"] == cut + 1
    assert row["lens"] == "mechanical"
    by_id = {r["id"]: r for r in row["fidelity_probe"]}
    for f in facts:
        result = by_id[f.id]
        if f.kind == "price":  # a catalogue page shows the rows below the one the agent taps
            assert result["seen_step"] is not None and result["seen_step"] <= (f.planned_step or 0), result
        else:
            assert result["seen_step"] == f.planned_step, result
        assert result["miss"] in (None, "not in the final context nor in recall's answer"), result
    assert row["fidelity_facts"] == len(facts)
    assert row["compression_levels"]["chunks"] >= 5


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("ARTEMIS_BENCH_FULL"), reason="the full 530-step task: ARTEMIS_BENCH_FULL=1")
def test_full_task_fires_every_level_and_answers_from_recall(tmp_path: Path) -> None:
    task = load_suite(SUITE, only=[TASK_ID])[0]
    facts = load_probe(SUITE)[TASK_ID]
    row = run_pair(task, "transcript", load_profile("flash"), "scripted", tmp_path / "d", facts=facts)
    assert row["success"]
    levels = row["compression_levels"]
    assert levels["chunks"] >= 41 and levels["eras"] >= 9 and levels["periods"] >= 1, levels
    assert all(r["seen_step"] is not None for r in row["fidelity_probe"])
    assert row["fidelity"] >= 0.95, [r for r in row["fidelity_probe"] if not r["answered"]]
