"""``artemis recall``: a backwards ``--steps`` range is a usage error with the forward spelling,
and a huge query is echoed back capped (CLI header, the text the model reads, errors) while
``--json`` keeps it whole."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from artemis_cli.engine.db import DataEngine
from artemis_cli.memory.recall import Recall
from artemis_cli.memory.recall_args import (
    ECHO_CHARS,
    RecallError,
    echo,
    parse_at,
    parse_package,
    parse_step_range,
)

REPO = Path(__file__).resolve().parents[2]
BIG = "wifi " * 20_480  # 100 KB


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "80"}
    env.pop("ARTEMIS_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "artemis_cli", *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=300, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    data = tmp_path_factory.mktemp("recall-args")
    res = cli("run", "tasks/demo.yaml", "--model", "heuristic", "--no-live", "--json", "--data-dir", data)
    assert res.returncode == 0, res.stderr
    return data, json.loads(res.stdout)["session_id"]


@pytest.mark.parametrize(("given", "forward"), [("50-10", "10-50"), ("4..2", "2-4"), (" 9 – 3 ", "3-9")])
def test_a_backwards_range_is_a_usage_error_with_a_hint(recorded: tuple[Path, str], given: str, forward: str) -> None:
    data, sid = recorded
    res = cli("recall", sid, "--steps", given, "--data-dir", data)
    assert res.returncode == 2, res.stderr
    assert res.stdout == ""
    errors = [line for line in res.stderr.splitlines() if line.startswith("Error:")]
    assert errors == [f"Error: Invalid value for '--steps': {given.strip()!r} runs backwards; did you mean {forward}?"]
    assert "Traceback" not in res.stderr and "unexpected" not in res.stderr


def test_the_forward_range_works(recorded: tuple[Path, str]) -> None:
    data, sid = recorded
    res = cli("recall", sid, "--steps", "1-3", "--json", "--data-dir", data)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["step_range"] == [1, 3]


def test_the_tool_refuses_a_backwards_range_with_the_forward_spelling() -> None:
    with pytest.raises(RecallError, match="runs backwards") as info:
        parse_step_range("50-10")
    assert info.value.did_you_mean == "10-50" and info.value.exit_code == 2


def test_a_huge_query_is_echoed_capped_but_json_keeps_it(recorded: tuple[Path, str]) -> None:
    data, sid = recorded
    res = cli("recall", sid, BIG, "--data-dir", data)
    assert res.returncode == 0, res.stderr
    assert len(res.stdout) < 2_000, len(res.stdout)
    header = res.stdout.splitlines()[0]
    assert header.startswith(f"{sid} · recall_history query=\"wifi wifi")
    assert f"… ({len(BIG.strip()):,} characters)" in header
    as_json = cli("recall", sid, BIG, "--json", "--data-dir", data)
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout)["query"] == BIG  # machine output: complete


def test_the_model_reads_the_query_capped(recorded: tuple[Path, str]) -> None:
    data, sid = recorded
    with DataEngine.open_for_reading(data) as engine:
        result = Recall(engine).recall(sid, BIG)
    header = result.render().splitlines()[0]
    assert len(header) < ECHO_CHARS + 100, header
    assert header.endswith(f"… ({len(BIG.strip()):,} characters): 1 match (best first)"), header
    assert result.to_dict()["query"] == BIG
    short = "wifi switch"
    with DataEngine.open_for_reading(data) as engine:
        assert Recall(engine).recall(sid, short).header().startswith('recall_history query="wifi switch"')


def test_errors_echo_a_huge_value_capped() -> None:
    for parse, name in ((parse_step_range, "step_range"), (parse_at, "at"), (parse_package, "package")):
        with pytest.raises(RecallError) as info:
            parse(BIG)
        message = str(info.value)
        assert message.startswith(f"{name} 'wifi wifi") and len(message) < ECHO_CHARS + 100, message[:300]
        assert f"({len(BIG):,} characters)" in message


def test_echo() -> None:
    assert echo("short") == "short"
    assert echo("x" * ECHO_CHARS) == "x" * ECHO_CHARS
    assert echo("x" * 1000) == "x" * ECHO_CHARS + "… (1,000 characters)"


@pytest.mark.parametrize(("args", "message"), [
    (["--steps", "0-0"], "Error: Invalid value for '--steps': 0-0 has no step: steps are numbered from 1"),
    (["--steps", "1-900"], "Error: Invalid value for '--steps': 1-900 spans 900 steps; ask for at most"),
    (["--at", "12:99"], "Error: Invalid value for '--at': '12:99' is not a session time (write a session time"),
    (["--package", "not a package"], "Error: Invalid value for '--package': 'not a package' is not a package name"),
    (["  "], "Error: nothing to recall: give words to search for, --steps, --at or --package"),
], ids=["no-step", "too-wide", "at", "package", "nothing"])
def test_errors_name_the_cli_options_not_the_tool_arguments(recorded: tuple[Path, str], args: list[str],
                                                            message: str) -> None:
    data, sid = recorded
    res = cli("recall", sid, *args, "--data-dir", data)
    assert res.returncode == 2, res.stderr
    assert message in res.stderr, res.stderr
    for internal in ("step_range", "at=", "recall_history", "package="):
        assert internal not in res.stderr, res.stderr


def test_a_recall_prints_no_timing_on_stderr(recorded: tuple[Path, str]) -> None:
    data, sid = recorded
    res = cli("recall", sid, "wifi", "--data-dir", data)
    assert res.returncode == 0 and res.stdout, res.stderr
    assert res.stderr == ""
    as_json = cli("recall", sid, "wifi", "--json", "--data-dir", data)
    assert as_json.stderr == "" and json.loads(as_json.stdout)["elapsed_ms"] >= 0  # machine output keeps it
