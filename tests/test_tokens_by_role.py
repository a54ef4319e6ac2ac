"""Every token counted (issue 13): runs through the fake Gemini server and the real google-genai
SDK, then the per-role figures of ``token_usage``, ``artemis sessions show`` (text and --json) and
the end-of-run summary, checked against plain SQL over ``llm_calls`` — at 80 columns."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from artemis_cli.cli.app import app
from artemis_cli.cli.run_cmd import finish_command, print_summary
from artemis_cli.config.profile import Profile, load_profile
from artemis_cli.config.task import Task, load_task
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.token_usage import token_usage
from artemis_cli.memory.lens import LENS_SYSTEM_PROMPT
from artemis_cli.models.fakes.gemini import FakeGeminiServer
from artemis_cli.models.gemini import GeminiModel
from artemis_cli.models.offline.scripted import script_policy
from artemis_cli.models.offline.scripted_roles import pro_script_policy
from artemis_cli.models.registry import reference_script
from artemis_cli.runner import RunResult, run_task
from artemis_cli.sim.phone import SimPhone

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
from long_run import chore_script  # noqa: E402

STEPS = 20
#: The table's row label of each role (group rows: "lenses", "Pro roles").
LABELS = {"operator": "operator", "lens": "visual lens", "chunk_lens": "chunk lens", "planner": "planner",
          "validator": "validator", "failure_analyzer": "failure analyzer", "checker": "checker"}


def sql_by_role(db_path: Path, session_id: str) -> dict[str, dict[str, int]]:
    """The figures straight from SQLite, without our code: every row of the session, any status."""
    with sqlite3.connect(db_path) as con:
        rows = con.execute(
            "SELECT role, COUNT(*), SUM(prompt_tokens), SUM(cached_tokens), SUM(completion_tokens), "
            "SUM(thoughts_tokens), SUM(status != 'ok') FROM llm_calls WHERE session_id = ? GROUP BY role",
            [session_id]).fetchall()
    return {role: {"calls": calls, "prompt": prompt, "cached": cached, "output": completion + thoughts,
                   "completion": completion, "thoughts": thoughts, "failed_calls": failed}
            for role, calls, prompt, cached, completion, thoughts, failed in rows}


def is_lens(request: Any) -> bool:
    return request.system == LENS_SYSTEM_PROMPT


@pytest.fixture(scope="module")
def pro_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[DataEngine, str, RunResult]:
    """A Pro run with small chunks (chunk lens calls) and injected faults: a garbled operator reply
    and an empty lens answer (billed, status error) and a lens 503 (no answer, nothing billed)."""
    data = load_profile("pro").model_dump(mode="json")
    data["memory"]["chunking"].update({"max_steps": 5, "max_chunks": 2, "max_eras": 1})
    profile = Profile.model_validate(data)
    script, _ = chore_script(STEPS)
    task = Task.model_validate({"id": "tokens-chore", "goal": "Do the daily phone chores", "max_steps": STEPS + 5})
    engine = DataEngine.open(tmp_path_factory.mktemp("tokens") / "data")
    with FakeGeminiServer(pro_script_policy(script)) as server:
        server.inject("malformed_function_call", match=lambda r: bool(r.tools))
        server.inject("empty_candidate", match=is_lens)
        server.inject("503", match=is_lens)
        model = GeminiModel(["gemini-2.5-pro"], api_key="k", base_url=server.base_url, backoff_s=0,
                            sleep=lambda s: None)
        result = run_task(task, profile, SimPhone(seed=7, popups=False), model, engine, real_time=False)
        assert server.pending_faults() == 0
    assert result.success, result.message
    return engine, result.session_id, result


def test_per_role_rows_equal_sql_sums_and_total_is_their_sum(pro_run: tuple[DataEngine, str, RunResult]) -> None:
    engine, sid, _ = pro_run
    expected = sql_by_role(engine.db_path, sid)
    assert {"operator", "lens", "chunk_lens", "planner", "validator", "checker"} <= set(expected)
    usage = token_usage(engine, sid)
    for role, figures in expected.items():
        counts = usage.role(role)
        got = {"calls": counts.calls, "prompt": counts.prompt, "cached": counts.cached, "output": counts.output,
               "completion": counts.completion, "thoughts": counts.thoughts, "failed_calls": counts.failed_calls}
        assert got == figures, role
    assert {r.role for r in usage.roles} == set(expected)
    total = usage.total
    for key in ("calls", "prompt", "cached", "output"):
        assert getattr(total, key) == sum(f[key] for f in expected.values()), key
    assert usage.group("lens").counts.prompt == expected["lens"]["prompt"] + expected["chunk_lens"]["prompt"]
    assert usage.group("pro_roles").counts.prompt == sum(
        expected[r]["prompt"] for r in ("planner", "validator", "failure_analyzer", "checker") if r in expected)
    # the faults: failed attempts are rows of their own, and the billed ones carry their prompt
    with sqlite3.connect(engine.db_path) as con:
        failed = con.execute("SELECT role, error_class, prompt_tokens FROM llm_calls WHERE session_id = ? "
                             "AND status != 'ok'", [sid]).fetchall()
    assert ("operator", "MALFORMED_FUNCTION_CALL") in {(r, e) for r, e, _ in failed}
    assert any(r == "lens" and e == "EMPTY_CANDIDATE" and p > 0 for r, e, p in failed)
    assert any(r == "lens" and e == "http_503" and p == 0 for r, e, p in failed)
    assert total.failed_calls == len(failed)
    # the lenses are a real share of what was billed (the point of issue 13)
    assert usage.group("lens").counts.prompt > 0.1 * total.prompt


def _rows(text: str) -> dict[str, list[str]]:
    """Table rows by their label: label -> the figures after it."""
    rows: dict[str, list[str]] = {}
    for line in text.splitlines():
        m = re.match(r"^\s*([A-Za-z][\w ]*?)\s{2,}([\d,]+)\s+([\d,]+)\s+([\d,]+)\s+(\d+%|—)\s+([\d,]+)\s*$", line)
        if m:
            rows[m.group(1)] = list(m.groups()[1:])
    return rows


def _figures(f: dict[str, int]) -> list[str]:
    share = f"{100 * f['cached'] / f['prompt']:.0f}%" if f["prompt"] else "—"
    return [f"{f['calls']:,}", f"{f['prompt']:,}", f"{f['cached']:,}", share, f"{f['output']:,}"]


def test_sessions_show_prints_every_role_row_within_80_columns(pro_run: tuple[DataEngine, str, RunResult]) -> None:
    engine, sid, _ = pro_run
    expected = sql_by_role(engine.db_path, sid)
    res = CliRunner().invoke(app, ["sessions", "show", sid, "--data-dir", str(engine.data_dir)],
                             env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    assert all(len(line) <= 80 for line in res.output.splitlines()), res.output
    rows = _rows(res.output)
    for role, figures in expected.items():
        assert rows[LABELS[role]] == _figures(figures), (role, res.output)
    totals = {k: sum(f[k] for f in expected.values()) for k in ("calls", "prompt", "cached", "output")}
    assert rows["total"] == _figures(totals)
    lens = {k: expected["lens"][k] + expected["chunk_lens"][k] for k in totals}
    assert rows["lenses"] == _figures(lens)
    assert "output = completion + thoughts" in res.output
    assert re.search(r"\b\d+ failed attempts included", res.output)


def test_sessions_show_json_has_tokens_by_role_with_totals(pro_run: tuple[DataEngine, str, RunResult]) -> None:
    engine, sid, _ = pro_run
    expected = sql_by_role(engine.db_path, sid)
    res = CliRunner().invoke(app, ["sessions", "show", sid, "--json", "--data-dir", str(engine.data_dir)])
    assert res.exit_code == 0, res.output
    tokens = json.loads(res.output)["tokens"]
    assert tokens["output_is"] == "completion + thoughts" and tokens["billed"] is True
    for role, figures in expected.items():
        assert {k: tokens["roles"][role][k] for k in figures} == figures, role
    assert tokens["total"]["prompt"] == sum(f["prompt"] for f in expected.values())
    assert tokens["total"]["prompt"] == sum(g["prompt"] for g in tokens["groups"].values())
    assert tokens["groups"]["lens"]["roles"] == ["lens", "chunk_lens"]


# -- the end-of-run summary of `artemis run` (a real process) ------------------------------------


def _artemis(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "ARTEMIS_HOME": str(home), "COLUMNS": "80", **env}
    for key in ("GOOGLE_API_KEY", "ARTEMIS_DEBUG", *(() if "GEMINI_API_KEY" in env else ("GEMINI_API_KEY",))):
        environ.pop(key, None)
    return subprocess.run([sys.executable, "-m", "artemis_cli", *args], cwd=REPO, env=environ, capture_output=True,
                          text=True, timeout=300, stdin=subprocess.DEVNULL)


def _summary(stdout: str) -> str:
    return stdout[stdout.index("┌"):]  # the summary table and what follows it (not the progress lines)


def test_run_summary_shows_tokens_by_role(tmp_path: Path) -> None:
    task = load_task(REPO / "tasks" / "demo.yaml")
    home = tmp_path / "home"
    with FakeGeminiServer(script_policy(reference_script(task))) as server:
        proc = _artemis(home, "run", "tasks/demo.yaml", "--model", "gemini", "--no-live",
                        GEMINI_API_KEY="fake-key", ARTEMIS_GEMINI_BASE_URL=server.base_url)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = _summary(proc.stdout)
    assert all(len(line) <= 80 for line in summary.splitlines()), summary
    sid = re.search(r"Session (\S+)", proc.stdout)
    assert sid is not None
    with DataEngine.open_for_reading(home) as reader:
        db_path = reader.db_path
    expected = sql_by_role(db_path, sid.group(1))
    assert set(expected) == {"operator", "lens"}  # Flash: no chunk closed in 4 steps, no Pro roles
    rows = _rows(summary)
    assert rows["operator"] == _figures(expected["operator"])
    assert rows["visual lens"] == _figures(expected["lens"])
    totals = {k: sum(f[k] for f in expected.values()) for k in ("calls", "prompt", "cached", "output")}
    assert rows["total"] == _figures(totals)
    share = f"{100 * totals['cached'] / totals['prompt']:.0f}% cached"
    assert f"{totals['prompt']:,} prompt ({share})" in summary


def test_offline_run_says_no_tokens_were_billed(tmp_path: Path) -> None:
    home = tmp_path / "home"
    proc = _artemis(home, "run", "tasks/demo.yaml", "--model", "scripted", "--no-live")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = _summary(proc.stdout)
    assert "none billed — offline model" in summary
    assert "Tokens by role" not in summary and "0 prompt" not in summary
    sid = re.search(r"Session (\S+)", proc.stdout)
    assert sid is not None
    shown = _artemis(home, "sessions", "show", sid.group(1))
    assert "tokens: none billed — offline model" in shown.stdout and "Tokens by role" not in shown.stdout
    as_json = json.loads(_artemis(home, "run", "tasks/demo.yaml", "--model", "scripted", "--json").stdout)
    assert as_json["tokens"]["billed"] is False and as_json["tokens"]["total"]["prompt"] == 0


def test_run_json_without_an_engine_reads_the_tokens_from_the_data_dir(
        pro_run: tuple[DataEngine, str, RunResult], capsys: pytest.CaptureFixture[str]) -> None:
    """``artemis resume`` ends through finish_command without passing its engine."""
    engine, sid, result = pro_run
    with pytest.raises(typer.Exit) as stop:
        finish_command(result, True)
    assert stop.value.exit_code == 0
    tokens = json.loads(capsys.readouterr().out)["tokens"]
    expected = sql_by_role(engine.db_path, sid)
    assert tokens["total"]["prompt"] == sum(f["prompt"] for f in expected.values())
    assert tokens["roles"]["chunk_lens"]["prompt"] == expected["chunk_lens"]["prompt"]


def test_an_online_run_that_got_no_answer_says_nothing_was_billed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    task = load_task(REPO / "tasks" / "demo.yaml")
    engine = DataEngine.open(tmp_path / "data")
    with FakeGeminiServer(script_policy(reference_script(task))) as server:
        server.inject("503", count=50)
        model = GeminiModel(["gemini-2.5-flash"], api_key="k", base_url=server.base_url, max_retries=1,
                            backoff_s=0, sleep=lambda s: None)
        result = run_task(task, load_profile("flash"), SimPhone(seed=1), model, engine, real_time=False)
    assert result.stop_reason == "model_unavailable" and not result.offline_model
    usage = token_usage(engine, result.session_id)
    calls = sql_by_role(engine.db_path, result.session_id)["operator"]["calls"]
    assert usage.total.calls == calls >= 2 and not usage.billed
    print_summary(result, usage)
    printed = capsys.readouterr().out
    assert f"none billed — {calls} model calls, none answered" in printed
    assert "Tokens by role" not in printed


def test_the_table_keeps_large_figures_and_every_group_within_80_columns(tmp_path: Path) -> None:
    from rich.console import Console

    from artemis_cli.cli.token_table import print_tokens
    from artemis_cli.engine import LlmCallRecord, SessionRecord

    engine = DataEngine.open(tmp_path / "data")
    sid = engine.create_session(SessionRecord(goal="big"))
    for role in (*LABELS, "mystery_role"):
        for _ in range(3):
            engine.record_llm_call(LlmCallRecord(session_id=sid, role=role, model="m", prompt_tokens=41_152_263,
                                                 cached_tokens=30_000_000, completion_tokens=3_000_000,
                                                 thoughts_tokens=333_333))
    console = Console(width=80, record=True)
    print_tokens(console, token_usage(engine, sid), offline=False)
    text = console.export_text()
    assert all(len(line) <= 80 for line in text.splitlines()), text
    rows = _rows(text)
    one = {"calls": 3, "prompt": 3 * 41_152_263, "cached": 90_000_000, "output": 3 * 3_333_333}
    for label in (*LABELS.values(), "mystery_role"):
        assert rows[label] == _figures(one), label
    assert rows["Pro roles"] == _figures({k: 4 * v for k, v in one.items()})
    assert rows["lenses"] == _figures({k: 2 * v for k, v in one.items()})
    assert rows["other"] == _figures(one)
    assert rows["total"] == _figures({k: 8 * v for k, v in one.items()})
