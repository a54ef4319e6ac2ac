"""Pipes and scripts: progress on stderr, results on stdout, a closed stdout never stops a run nor
prints "Exception ignored", list commands print plain tab-separated rows (no header) when stdout
is not a terminal, and the terminal tables and progress lines at 80 and 60 columns are pinned.

The pipe tests run the real CLI (``python -m artemis_cli``) with stdout a pipe that the test
closes: before anything is written (the harshest reader, ``artemis run … | true``) or after the
first line (``| head -1``). The rendered tables run in-process through Typer's CliRunner with a
terminal console of a fixed width."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from golden_files import assert_golden
from typer.testing import CliRunner

from artemis_cli.cli import console as cli_console
from artemis_cli.cli.app import app
from artemis_cli.engine.db import DataEngine

REPO = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "golden"
SGR = re.compile(r"\x1b\[[0-9;]*m")
PIPE_NOISE = ("Exception ignored", "BrokenPipe", "Traceback")


def _env(home: Path) -> dict[str, str]:
    env = {**os.environ, "ARTEMIS_HOME": str(home)}
    for key in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "ARTEMIS_DEBUG", "ANDROID_SERIAL", "TTY_COMPATIBLE",
                "FORCE_COLOR"):
        env.pop(key, None)
    return env


def closed_stdout(home: Path, *args: str, read_lines: int = 0) -> tuple[int, list[str], str]:
    """Run the CLI with stdout a pipe closed after ``read_lines`` lines: (exit code, lines, stderr)."""
    proc = subprocess.Popen([sys.executable, "-m", "artemis_cli", *args], cwd=REPO, env=_env(home),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    lines = [proc.stdout.readline() for _ in range(read_lines)]
    proc.stdout.close()
    stderr = proc.stderr.read()
    return proc.wait(timeout=120), lines, stderr


def cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "artemis_cli", *args], cwd=REPO, env=_env(home),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)


RUN = ("run", "--device", "sim", "--model", "scripted", "--no-live")


@pytest.fixture(scope="module")
def piped(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """Three runs whose stdout went away: read one line then closed; closed before the ``--json``
    result of a run out of steps (``write_out``: its own exit code 1, not the pipe's); closed
    before the summary table (the Rich console's broken pipe)."""
    home = tmp_path_factory.mktemp("pipes-home")
    head = closed_stdout(home, *RUN, "tasks/demo.yaml", read_lines=1)
    as_json = closed_stdout(home, *RUN, "tasks/contacts-delete.yaml", "--json", "--max-steps", "2")
    summary = closed_stdout(home, *RUN, "tasks/demo.yaml")
    with DataEngine.open_for_reading(home) as engine:
        sessions = engine.list_sessions(limit=10)[::-1]  # oldest first: head, as_json, summary
        steps = [engine.step_count(s.id) for s in sessions]
    return SimpleNamespace(home=home, head=head, as_json=as_json, summary=summary, sessions=sessions, steps=steps)


def test_a_closed_stdout_never_stops_a_run(piped: SimpleNamespace) -> None:
    (rc, (first,), stderr), head = piped.head, piped.sessions[0]
    assert rc == 0, stderr  # `artemis run … | head -1`: ${PIPESTATUS[0]} is the run's own code
    assert not any(noise in stderr for noise in PIPE_NOISE), stderr
    assert head.status == "succeeded" and piped.steps[0] == 4  # the run went on to its end
    assert first.split() == ["Session", head.id]  # stdout: the result (the summary's title) only
    assert f"Session {head.id} · task demo-wifi-on" in stderr  # progress: on stderr
    assert re.search(r"^\s+4\s+\S+s\s+finish\s+finish success=True", stderr, re.M), stderr
    for _rc, _, stderr in (piped.as_json, piped.summary):  # nothing read at all: the first write fails
        assert not any(noise in stderr for noise in PIPE_NOISE), stderr
    assert (piped.as_json[0], piped.summary[0]) == (1, 0)  # each run's own exit code
    assert [s.status for s in piped.sessions] == ["succeeded", "failed", "succeeded"] and piped.steps == [4, 2, 4]


def test_list_commands_on_a_closed_stdout_exit_0_quietly(piped: SimpleNamespace) -> None:
    for args in (("sessions", "list"), ("sessions", "list", "--json")):  # rows flushed; JSON at exit
        rc, _, stderr = closed_stdout(piped.home, *args)
        assert rc == 0 and not any(noise in stderr for noise in PIPE_NOISE), (args, stderr)


def test_sessions_list_in_a_pipe_prints_plain_rows_and_ids(piped: SimpleNamespace) -> None:
    newest_first = piped.sessions[::-1]
    res = cli(piped.home, "sessions", "list")
    assert res.returncode == 0, res.stderr
    rows = [line.split("\t") for line in res.stdout.splitlines()]
    assert [r[:4] for r in rows] == [[s.id, s.task_id, s.status, str(n)]
                                     for s, n in zip(newest_first, piped.steps[::-1], strict=True)]
    assert all(len(r) == 8 and r[5] == "sim" and r[6] == s.started_at and r[7] == "$0"  # offline: costs $0
               for r, s in zip(rows, newest_first, strict=True))
    assert "\x1b" not in res.stdout and res.stderr == ""
    quiet = cli(piped.home, "sessions", "list", "-q", "--status", "succeeded")
    assert quiet.stdout == "".join(f"{s.id}\n" for s in newest_first if s.status == "succeeded")


# -- terminal tables and progress lines, in-process --------------------------------------------------


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> Iterator[CliRunner]:
    """A CliRunner whose CLI consoles believe stdout is a terminal ($COLUMNS set per call)."""
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    monkeypatch.setenv("NO_COLOR", "1")
    cli_console.out.cache_clear()  # the consoles read $COLUMNS when they are created
    cli_console.err.cache_clear()
    yield CliRunner()
    cli_console.out.cache_clear()
    cli_console.err.cache_clear()


def _render(runner: CliRunner, width: int, *args: str) -> str:
    cli_console.out.cache_clear()
    res = runner.invoke(app, list(args), env={"COLUMNS": str(width)})
    assert res.exit_code == 0, res.output
    return SGR.sub("", res.stdout)


@pytest.mark.parametrize("width", [80, 60])
def test_sessions_list_table_golden(piped: SimpleNamespace, terminal: CliRunner, width: int) -> None:
    text = _render(terminal, width, "sessions", "list", "--data-dir", str(piped.home))
    assert max(map(len, text.splitlines())) <= width
    assert text.count("succeeded") == 2 and "succeed…" not in text  # a status is never cut
    for n, s in enumerate(piped.sessions):  # ids are new each run; their width is not
        text = text.replace(s.id, f"20260101-00000{n}-abcd")
    assert_golden(GOLDEN / f"sessions-list-{width}.txt", text)
    plain = _render(terminal, width, "sessions", "list", "--plain", "--data-dir", str(piped.home))
    assert [line.split("\t")[0] for line in plain.splitlines()] == [s.id for s in piped.sessions[::-1]]


TASKS = {
    "settings-bluetooth-on-airplane-off": "app: com.android.settings\ntags: [settings, short]\nmax_steps: 12\n",
    "notes-new-note": "app: com.artemis.notes\ntags: [notes, typing, short]\nmax_steps: 9\n",
    "bench-fact-recall": "tags: [bench, contacts, settings, shop, clock, notes, fidelity, long]\nmax_steps: 570\n",
}


@pytest.mark.parametrize("width", [80, 60])
def test_tasks_list_table_golden(tmp_path: Path, terminal: CliRunner, width: int) -> None:
    folder = tmp_path / "tasks"
    folder.mkdir()
    for name, body in TASKS.items():
        (folder / f"{name}.yaml").write_text(f"id: {name}\ngoal: {name}\n{body}reference: [{{key: back}}]\n")
    text = _render(terminal, width, "tasks", "list", str(folder)).replace(str(tmp_path), "TMP")
    assert max(map(len, text.splitlines())) <= width
    assert_golden(GOLDEN / f"tasks-list-{width}.txt", text)
    plain = _render(terminal, width, "tasks", "list", "--plain", str(folder)).replace(str(tmp_path), "TMP")
    assert plain.splitlines()[0] == ("bench-fact-recall\t-\t570\t1\tbench, contacts, settings, shop, clock, notes, "
                                     "fidelity, long\tTMP/tasks/bench-fact-recall.yaml")


STATUSES = ("ok", "no_change", "failed", "error", "finished")


@pytest.mark.parametrize("width", [80, 60])
def test_progress_lines_align_every_status(width: int) -> None:
    from rich.console import Console

    from artemis_cli.cli.run_cmd import step_line

    console = Console(width=width, record=True, color_system=None)
    for n, status in enumerate(STATUSES, 1):
        rep = SimpleNamespace(number=n, elapsed_s=0.1 * n, status=status, phrase="tap Button \"Save\" (id save)",
                              prompt_tokens=1200 * n, cached_tokens=600 * n,
                              detail="screen unchanged" if status != "ok" else "")
        console.print(step_line(rep, width), overflow="ellipsis", no_wrap=True)
    text = console.export_text()
    lines = text.splitlines()
    assert len({line.index("tap Button") for line in lines}) == 1, text  # every phrase in one column
    assert all(len(line) <= width for line in lines), text
    assert sum("screen unchan" in line for line in lines) == 3, text  # why a step did not work: shown
    assert_golden(GOLDEN / f"progress-lines-{width}.txt", text)


def test_sigpipe_is_never_reset_to_the_default() -> None:
    """SIG_DFL for SIGPIPE would kill artemis mid-run at the first write to a closed pipe."""
    offenders = [str(p.relative_to(REPO)) for p in (REPO / "artemis_cli").rglob("*.py")
                 if "signal.SIGPIPE" in p.read_text(encoding="utf-8")]
    assert offenders == []



def test_plain_rows_keep_one_line_and_one_field_per_cell() -> None:
    """A model label or device text with a tab or a line break must not add fields or rows."""
    from rich.text import Text

    from artemis_cli.cli.tables import Column, FitTable, plain_rows

    table = FitTable.listing([Column("id", "id"), Column("status"), Column("model", "label")])
    table.add_row("s1", Text("succeeded", style="green"), "odd\tlabel\nover two lines")
    table.add_row("s2", "failed", "")
    assert plain_rows(table) == ["s1\tsucceeded\todd label over two lines", "s2\tfailed\t"]
