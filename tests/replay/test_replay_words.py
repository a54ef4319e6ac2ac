"""One vocabulary for replay step kinds (``replay.kinds``): a healed replay on ``sim:drift`` gives
the same counts in its summary, its progress stream, ``--json``, ``sessions show`` (table and
JSON) and the HTML report's badges and legend; a plain replay that diverges names ``--heal``;
``replay --original`` replays the recording itself after ``sessions promote``."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from artemis_cli.cli.app import app
from artemis_cli.replay.kinds import KINDS, counts_phrase

TASK = Path(__file__).parents[2] / "tasks" / "shop-buy-one.yaml"


def _invoke(runner: CliRunner, args: list[str]) -> tuple[int, str, str]:
    res = runner.invoke(app, args)
    return res.exit_code, res.stdout, res.stderr


def test_heal_counts_agree_everywhere(tmp_path: Path, data_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARTEMIS_SECRET", "artemis123")
    data = ["--data-dir", str(tmp_path / "data")]
    runner = CliRunner()
    code, stdout, _ = _invoke(runner, ["run", str(TASK), "--model", "scripted", "--json", *data])
    source = json.loads(stdout)["session_id"]

    # a plain replay on the drifted Shop diverges, and its message says what to do about it
    code, stdout, _ = _invoke(runner, ["replay", source, "--device", "sim:drift", "--json", *data])
    plain = json.loads(stdout)
    assert code == 1 and plain["diverged"] == 1 and plain["first_divergence"] is not None
    assert f"`artemis replay {source} --heal`" in plain["message"], plain["message"]

    code, stdout, progress = _invoke(runner, ["replay", source, "--heal", "--device", "sim:drift", "--json", *data])
    healed = json.loads(stdout)
    assert code == 0 and healed["success"], healed["message"]
    counts = {kind: healed[kind] for kind in KINDS}
    assert counts["healed"] > 0 and counts["retargeted"] > 0 and counts["replayed"] > 0 and counts["diverged"] == 0
    assert Counter(s["status"] for s in healed["steps"]) == +Counter(counts)
    # the summary line
    assert counts_phrase(counts, ("replayed", "retargeted", "healed")) in healed["message"], healed["message"]
    # the progress stream (stderr): one line per step, its kind second
    streamed = Counter(m.group(1) for m in re.finditer(r"^\s*\d+\s+(\w+)\s", progress, flags=re.M)
                       if m.group(1) in KINDS or m.group(1) == "matched")
    assert streamed == +Counter(counts), progress

    session = healed["session_id"]
    code, stdout, _ = _invoke(runner, ["sessions", "show", session, "--json", *data])
    shown = json.loads(stdout)
    assert Counter(s["replay_mark"] for s in shown["steps"]) == +Counter(counts)
    # the scripted recording's and the healer's thoughts are sentences, not Python dicts
    code, stdout, _ = _invoke(runner, ["sessions", "show", source, "--json", *data])
    thoughts = [s["thought"] for s in shown["steps"] + json.loads(stdout)["steps"] if s.get("thought")]
    assert any(t.startswith("[plan ") for t in thoughts) and any(t.startswith("[script ") for t in thoughts)
    assert not [t for t in thoughts if "{'" in t or "': " in t], thoughts
    assert any(re.match(r'\[(script|plan) \d+/\d+\] tap the element with text "', t) for t in thoughts), thoughts
    code, stdout, _ = _invoke(runner, ["sessions", "show", session, *data])
    rows = [line.split("│") for line in stdout.splitlines() if line.startswith("│")]
    table = Counter(cell.strip() for row in rows for cell in row if cell.strip() in KINDS)
    assert table == +Counter(counts), stdout

    report = tmp_path / "report.html"
    code, _, _ = _invoke(runner, ["report", session, "-o", str(report), *data])
    assert code == 0
    html = report.read_text()
    legend, timeline = html.split("<section id='replay-steps'>", 1)[1].split("<section id='timeline'>", 1)
    badges = Counter(re.findall(r"<span class='replay (\w+)'", timeline))
    assert badges == +Counter(counts), badges
    for kind, n in counts.items():
        assert f"<span class='replay {kind}'>{kind}</span> {n} · " in legend

    # after a promote the recording replays its baseline, says so, and --original replays the recording
    assert _invoke(runner, ["sessions", "promote", session, *data])[0] == 0
    code, stdout, said = _invoke(runner, ["replay", source, "--device", "sim:drift", "--json", *data])
    assert code == 0 and json.loads(stdout)["source_session"] == session
    assert f"`artemis replay {source} --original` replays the recording itself" in " ".join(said.split())
    code, stdout, said = _invoke(runner, ["replay", source, "--original", "--device", "sim:drift", "--json", *data])
    original = json.loads(stdout)
    assert original["source_session"] == source and original["baseline_of"] is None
    assert code == 1 and original["diverged"] == 1, original["message"]  # the recording itself diverges on sim:drift
    assert "replaying the recording itself (--original)" in " ".join(said.split())
