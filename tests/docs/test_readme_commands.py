"""Each README command line that needs no API key, phone, network or long-running server runs as
written (issue 36): every ```sh block at the top level is parsed, placeholders are filled the way
a reader would (``<session-id>``/``ID``/``HEALED``: the newest session; ``[…]`` options left out;
``a|b``: the first), ``.venv/bin/artemis`` and ``.venv/bin/python`` are this interpreter, and each
line must exit 0. The lines not run are listed in SKIP with why."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

#: (text in the line, why it is not run here)
SKIP: tuple[tuple[str, str], ...] = (
    ("pip install", "installs the package: .ci/run runs the set-up line itself (tests/test_readme_ci.py)"),
    ("GEMINI_API_KEY", "needs a Gemini API key"),
    ("gemini-2.5-flash", "needs a Gemini API key"),
    ("openai:", "needs an OpenAI-compatible model server"),
    ("emulator-5554", "needs an emulator or a phone (a serial)"),
    ("SERIAL", "needs phones (serials)"),
    ("ray ", "needs a Ray cluster"),
    ("--ray", "needs a Ray cluster"),
    ("adb ", "needs an adb server"),
    ("sim serve", "a long-running server (until Ctrl-C)"),
    ("artemis mcp", "a long-running MCP server (until its client closes it)"),
    ("resume", "needs an interrupted session"),
    ("benchmarks/", "a benchmark: minutes of work that prints figures"),
    ("bench run tasks/bench", "the whole bench suite: minutes of work"),
    ("bench compare", "needs two bench result files of earlier runs"),
    ("20261201-101500-ab12", "an illustrative session id and bundle, not this data dir's"),
    ("tasks/*.yaml --model scripted --devices", "every shipped task on two sims: minutes (tests/suite runs suites)"),
)


def _top_level_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    lines: list[str] = []
    for block in re.findall(r"^```sh\n(.*?)^```", text, flags=re.S | re.M):
        lines += [line for line in block.splitlines() if line.strip()]
    return lines


def _why_skipped(line: str) -> str | None:
    if re.sub(r"\s+#\s.*$", "", line).rstrip().endswith("&"):
        return "a server started in the background"
    return next((why for needle, why in SKIP if needle in line), None)


def _runnable(line: str) -> str:
    line = re.sub(r"\s+#\s.*$", "", line).strip()  # a trailing comment
    line = re.sub(r"\s*\[[^\]]*\]", "", line)  # optional parts
    line = re.sub(r"\b(\w+)\|\w+\b", r"\1", line)  # alternatives: the first
    for name in ("<session-id>", "HEALED", "ID"):
        line = re.sub(rf"(?<![\w-]){re.escape(name)}(?![\w-])", "latest", line)
    python = shlex.quote(sys.executable)
    return re.sub(r"(?<![\w/])\.venv/bin/(artemis|python)\b",
                  lambda m: f"{python} -m artemis_cli" if m.group(1) == "artemis" else python, line)


def test_the_skip_list_is_used_and_something_runs() -> None:
    lines = _top_level_commands()
    assert all(any(needle in line for line in lines) for needle, _ in SKIP), "a SKIP entry no longer matches"
    assert sum(1 for line in lines if not _why_skipped(line)) >= 10


@pytest.mark.slow
def test_readme_commands_run_as_written(tmp_path: Path) -> None:
    for name in ("tasks", "fixtures", "profiles"):
        (tmp_path / name).symlink_to(REPO / name)
    env = {**os.environ, "ARTEMIS_HOME": str(tmp_path / "home"), "COLUMNS": "120"}
    failed = []
    for line in _top_level_commands():
        if _why_skipped(line):
            continue
        command = _runnable(line)
        if command.startswith("export "):  # the README sets a variable for the lines below it
            key, _, value = command.removeprefix("export ").partition("=")
            env[key] = value
            continue
        res = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=300, stdin=subprocess.DEVNULL)
        if res.returncode != 0:
            failed.append(f"{line}\n  ran: {command}\n  exit {res.returncode}: {res.stderr.strip()[-600:]}")
    assert not failed, "\n".join(failed)
