"""Every Rich table of the CLI at 60, 80 and 120 columns: ids whole on one line, no line wider
than the terminal, long labels cut with an ellipsis (never wrapped), secondary columns dropped
first, and ``--json`` complete whatever the width.

The commands run as real processes (``python -m artemis_cli`` with ``$COLUMNS``): the CLI's Rich
console takes its width once, when it is created. ``TTY_COMPATIBLE=1`` makes Rich treat the pipe
as a terminal (a pipe gets plain rows: tests/cli/test_pipes.py), ``NO_COLOR`` and :data:`SGR` drop
the styles."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from artemis_cli.cli.tables import Column, FitTable, ellipsize, ellipsize_front

REPO = Path(__file__).resolve().parents[2]
WIDTHS = (60, 80, 120)
LONG_LABEL = "openai (qwen2.5-vl-7b @ 127.0.0.1:8000)"
#: Select Graphic Rendition sequences (bold, dim) a terminal console writes even under NO_COLOR.
SGR = re.compile(r"\x1b\[[0-9;]*m")
#: What makes the CLI's consoles lay tables out for a terminal of $COLUMNS although stdout is a pipe.
AS_TERMINAL = {"TTY_COMPATIBLE": "1", "NO_COLOR": "1"}


def cli(home: Path, *args: str | Path, width: int = 80, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ARTEMIS_HOME": str(home), "COLUMNS": str(width), **AS_TERMINAL}
    for key in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "ARTEMIS_DEBUG"):
        env.pop(key, None)
    res = subprocess.run([sys.executable, "-m", "artemis_cli", *map(str, args)], capture_output=True, text=True,
                         env=env, cwd=cwd, timeout=300, stdin=subprocess.DEVNULL)
    res.stdout = SGR.sub("", res.stdout)
    return res


def assert_fits(text: str, width: int) -> None:
    wide = [line for line in text.splitlines() if len(line) > width]
    assert not wide, f"{len(wide)} line(s) wider than {width}:\n" + "\n".join(wide) + "\n---\n" + text


def assert_whole_on_one_line(text: str, ident: str) -> None:
    """``ident`` appears on a line as a whole word (not cut, not folded over two lines)."""
    pattern = re.compile(rf"(?<![\w-]){re.escape(ident)}(?![\w-])")
    assert any(pattern.search(line) for line in text.splitlines()), f"{ident} not whole on one line:\n{text}"


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """Three demo sessions (offline heuristic model) in a fresh data dir: (home, ids)."""
    home = tmp_path_factory.mktemp("narrow-home")
    ids = []
    for _ in range(3):
        res = cli(home, "run", "tasks/demo.yaml", "--model", "heuristic", "--no-live", "--json")
        assert res.returncode == 0, res.stderr
        ids.append(json.loads(res.stdout)["session_id"])
    return home, ids


# -- sessions list / show --------------------------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
def test_sessions_list_keeps_ids_whole_and_fits(sessions: tuple[Path, list[str]], width: int) -> None:
    home, ids = sessions
    res = cli(home, "sessions", "list", width=width)
    assert res.returncode == 0, res.stderr
    assert_fits(res.stdout, width)
    for sid in ids:
        assert_whole_on_one_line(res.stdout, sid)
    rows = [line for line in res.stdout.splitlines() if any(sid in line for sid in ids)]
    assert len(rows) == 3, res.stdout  # one line per session: nothing wraps
    header, *body = res.stdout.splitlines()
    assert header.startswith("session ") and len(body) == 3, res.stdout
    assert all("demo-wifi-on" in line and "succeeded" in line for line in rows), res.stdout
    if width >= 80:  # the model label is cut with an ellipsis, on the session's own line
        assert all("heuristic" in line for line in rows), res.stdout
    if width == 80:
        assert all("…" in line for line in rows), res.stdout
        assert "started" not in res.stdout  # the id already says when a session started
    if width == 120:
        assert "steps" in res.stdout and "device" in res.stdout


def test_sessions_list_json_is_complete_at_any_width(sessions: tuple[Path, list[str]]) -> None:
    home, ids = sessions
    res = cli(home, "sessions", "list", "--json", width=40)
    assert res.returncode == 0, res.stderr
    rows = json.loads(res.stdout)
    assert [r["id"] for r in rows] == ids[::-1]
    assert all(r["model_label"] == "heuristic (offline baseline, not an LLM)" for r in rows)
    assert all(r["started_at"] and r["device"]["serial"] == "sim" for r in rows)


@pytest.mark.parametrize("width", WIDTHS)
def test_sessions_show_fits(sessions: tuple[Path, list[str]], width: int) -> None:
    home, ids = sessions
    res = cli(home, "sessions", "show", ids[0], width=width)
    assert res.returncode == 0, res.stderr
    assert_fits(res.stdout, width)
    assert res.stdout.splitlines()[0].startswith(ids[0] + " · demo-wifi-on · succeeded")
    for n in range(1, 5):  # one line per step
        assert sum(bool(re.match(rf"│\s+{n} │", line)) for line in res.stdout.splitlines()) == 1, res.stdout
    assert "heuristic" in res.stdout and "result: all success checks passed" in res.stdout


# -- tasks list, devices, profiles list --------------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
def test_tasks_list_keeps_task_ids_whole(tmp_path: Path, width: int) -> None:
    res = cli(tmp_path, "tasks", "list", "tasks", width=width)
    assert res.returncode in (0, 2), res.stderr  # 2: some task file is invalid (listed on stderr)
    assert_fits(res.stdout, width)
    listed = json.loads(cli(tmp_path, "tasks", "list", "tasks", "--json").stdout)
    assert len(listed) > 10
    for row in listed:
        assert_whole_on_one_line(res.stdout, row["id"])
    assert "file" in res.stdout  # what `artemis run` takes is always shown (cut at the front)
    assert sum("yaml" in line for line in res.stdout.splitlines()) == len(listed)


@pytest.mark.parametrize("width", WIDTHS)
def test_devices_and_profiles_list_fit(tmp_path: Path, width: int) -> None:
    devices = cli(tmp_path, "devices", width=width)
    assert devices.returncode == 0, devices.stderr
    assert_fits(devices.stdout, width)
    for serial in ("sim", "sim:probe", "sim:variant"):
        assert_whole_on_one_line(devices.stdout, serial)
    profiles = cli(tmp_path, "profiles", "list", width=width)
    assert profiles.returncode == 0, profiles.stderr
    assert_fits(profiles.stdout, width)
    assert_whole_on_one_line(profiles.stdout, "flash")
    assert_whole_on_one_line(profiles.stdout, "pro")


# -- bench tables (rendered for a console of each width) --------------------------------------------

TASKS = ("bench-settings-marathon", "bench-notes-revisit-with-a-long-id")
MODES = ("transcript", "legacy", "naive")


def _results() -> dict[str, Any]:
    figures = {"success_share": 1.0, "steps": 1234, "calls": 1250, "prompt_tokens_p50": 41_152,
               "prompt_tokens_max": 80_000, "cached_token_share": 0.73, "wall_s": 12.5,
               "total_prompt_tokens": 246_913_578}
    tasks = [{"task": t, "mode": m, "success": True, "steps": 130, "calls": 131, "prompt_tokens_p50": 41_152,
              "prompt_tokens_max": 80_000, "steady_state_share_at_200": 0.2, "cache_hit_call_share": 0.95,
              "cached_token_share": 0.73, "lens_prompt_tokens": 1_234_567, "fidelity_answered": 3,
              "fidelity_facts": 4} for t in TASKS for m in MODES]
    return {"suite": "tasks/bench", "model": "scripted", "profile": "flash", "context_budget_tokens": 80_000,
            "modes": {m: dict(figures) for m in MODES}, "tasks": tasks}


@pytest.mark.parametrize("width", WIDTHS)
def test_bench_tables_fit_and_keep_task_ids_whole(width: int) -> None:
    from artemis_cli.bench.output import compare_table, print_results

    results = _results()
    console = Console(width=width, record=True)
    print_results(results, console)
    console.print(compare_table(results, results, "runs/a-long-results-name.json", "runs/b.json", console.width))
    text = console.export_text()
    assert_fits(text, width)
    task_lines = [line for line in text.splitlines() if any(t in line for t in TASKS)]
    assert len(task_lines) == len(TASKS) * len(MODES), text  # one line per task × mode
    for t in TASKS:
        assert_whole_on_one_line(text, t)
    assert all(("yes" in line) for line in task_lines), text
    if width == 120:  # most figures fit; the least telling went first
        assert "tok max" in text and "cache hit" in text and "B − A" in text and "goal (transcript)" in text
        assert "lens tok" not in text
    if width == 60:  # only the essentials: task, mode, ok and the most telling figures
        assert "steps" in text and "lens tok" not in text and "tok max" not in text and "B − A" not in text


# -- token table ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
def test_token_table_fits(tmp_path: Path, width: int) -> None:
    from artemis_cli.cli.token_table import print_tokens
    from artemis_cli.engine import LlmCallRecord, SessionRecord
    from artemis_cli.engine.db import DataEngine
    from artemis_cli.engine.token_usage import token_usage

    engine = DataEngine.open(tmp_path / "data")
    sid = engine.create_session(SessionRecord(goal="big"))
    for role in ("operator", "lens", "failure_analyzer", "a_role_with_a_rather_long_name"):
        engine.record_llm_call(LlmCallRecord(session_id=sid, role=role, model="m", prompt_tokens=41_152_263,
                                             cached_tokens=30_000_000, completion_tokens=3_000_000))
    console = Console(width=width, record=True)
    print_tokens(console, token_usage(engine, sid), offline=False)
    text = console.export_text()
    assert_fits(text, width)
    total = next(line for line in text.splitlines() if line.strip().startswith("total"))
    assert "164,609,052" in total and "73%" in total  # prompt and cached share always shown
    assert sum("a_role" in line for line in text.splitlines()) == 1  # cut, not wrapped


# -- the layout itself -----------------------------------------------------------------------------------


def test_ellipsis_helpers() -> None:
    assert ellipsize(LONG_LABEL, 100) == LONG_LABEL
    assert ellipsize(LONG_LABEL, 12) == "openai (qwe…"
    assert len(ellipsize(LONG_LABEL, 12)) == 12
    assert ellipsize("a\nb", 10) == "a b"
    assert ellipsize_front("tasks/bench/bench-notes-revisit.yaml", 16) == "…es-revisit.yaml"
    assert len(ellipsize_front("tasks/bench/bench-notes-revisit.yaml", 16)) == 16


def test_fit_table_drops_secondary_columns_first_and_never_cuts_ids() -> None:
    sid = "20240501-093012-ab12"
    table = FitTable([Column("session", "id"), Column("status"), Column("model", "label", drop=1, min_width=12),
                      Column("started", drop=2)])
    table.add_row(sid, "succeeded", LONG_LABEL, "2024-05-01T09:30:12")

    def render(width: int) -> str:
        console = Console(width=width, record=True)
        console.print(table.build(width), crop=False)  # as the CLI's soft-wrapping console: never cropped
        return console.export_text()

    wide = render(120)
    assert LONG_LABEL in wide and "2024-05-01T09:30:12" in wide
    medium = render(60)  # "started" goes first; the label is cut with an ellipsis
    assert "started" not in medium and "openai (qwen" in medium and "…" in medium
    narrow = render(40)
    assert "model" not in narrow and "started" not in narrow
    for text, width in ((wide, 120), (medium, 60), (narrow, 40)):
        assert_fits(text, width)
        assert_whole_on_one_line(text, sid)
    cramped = render(20)  # narrower than the id: the id still is not cut (the line is as wide as it)
    assert_whole_on_one_line(cramped, sid)


def test_progress_lines_fit_the_terminal() -> None:
    """The per-step lines of `artemis run` fit 60, 80 and 120 columns: long phrases end in an
    ellipsis, the token figures drop below 72 columns, device text stays escaped."""
    from types import SimpleNamespace

    from rich.console import Console

    from artemis_cli.cli.run_cmd import step_line

    rep = SimpleNamespace(number=12, elapsed_s=3.4, status="ok", prompt_tokens=5413, cached_tokens=3950, detail="",
                          phrase='tap LinearLayout "Network & internet · Wi-Fi, mobile data, [bold]airplane[/] mode"')
    for width in (60, 80, 120):
        console = Console(width=width, record=True, color_system=None)
        console.print(step_line(rep, width), overflow="ellipsis", no_wrap=True)
        (line,) = console.export_text().splitlines()
        assert len(line) <= width, (width, line)
        assert "[bold]" in line or "…" in line  # markup in device text is printed, not applied
        assert ("tok   5413 cache  73%" in line) == (width >= 72)
