"""The crash matrix (benchmarks/crash_matrix.py) and the checker it relies on.

The end-to-end test SIGKILLs a real ``artemis run`` / ``artemis resume`` (gemini operator through
the real SDK against the fake Gemini server) three times on a short task with a password field;
the unit tests prove the checker reports lost, changed and duplicated steps when they happen.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from artemis_cli.bench.crash_check import StepSnap, compare, merge, read_only, snapshot
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import SessionRecord, StepRecord

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "crash_matrix.py"
COUNTS = ("lost", "duplicated", "unresumable", "integrity_failures", "missing_blobs")


def _snap(number: int, action: str = "tap", pre: str = "a" * 64) -> StepSnap:
    return StepSnap(number, json.dumps({"type": action}), pre, "b" * 64, None, None)


def test_three_kills_lose_nothing() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--points", "3", "--json", "--task", "tasks/shop-buy-one.yaml"],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert {k: report[k] for k in COUNTS} == dict.fromkeys(COUNTS, 0), report["problems"]
    assert report["kills_done"] == 3 and len(report["kills"]) == 3
    assert report["status"] == "succeeded" and report["success"] is True
    assert report["sessions_used"] >= 1 and report["steps"] >= 7
    assert all(k["steps_at_kill"] >= 0 and 0 <= k["delay_s"] <= 1.1 for k in report["kills"])
    assert report["tracebacks"] == 0 and report["prompt_mismatches"] == 0 and report["problems"] == []


def test_a_step_missing_after_the_kill_is_lost() -> None:
    before = [_snap(1), _snap(2), _snap(3)]
    diff = compare(before, [_snap(1), _snap(2)])
    assert diff.lost == [3] and diff.duplicated == [] and not diff.ok


def test_a_changed_step_is_lost() -> None:
    before = [_snap(1), _snap(2)]
    assert compare(before, [_snap(1), _snap(2, action="swipe")]).lost == [2]
    assert compare(before, [_snap(1), _snap(2, pre="c" * 64)]).lost == [2]


def test_a_number_stored_twice_or_skipped_is_duplicated() -> None:
    diff = compare([_snap(1)], [_snap(1), _snap(2), _snap(2, action="back")])
    assert diff.duplicated == [2] and diff.lost == []
    assert compare([], [_snap(1), _snap(3)]).duplicated == [2]  # a hole in 1…n


def test_new_steps_after_the_kill_are_fine() -> None:
    diff = compare([_snap(1)], [_snap(1), _snap(2), _snap(3)])
    assert diff.ok
    known: dict[int, StepSnap] = {}
    merge(known, [_snap(1), _snap(2)])
    merge(known, [_snap(2, action="back")])  # the first committed row stands
    assert known[2] == _snap(2)


def test_snapshot_reads_real_rows_read_only(tmp_path: Path) -> None:
    with DataEngine.open(tmp_path) as engine:
        sid = engine.create_session(SessionRecord(task_id="t", goal="g", status="running"))
        for n in (1, 2):
            engine.record_step(
                StepRecord(session_id=sid, number=n, action_type="tap", action_args={"index": n}, x=10, y=20),
                blobs={"pre_screenshot": (f"png{n}".encode(), "screenshot")},
            )
    with contextlib.closing(read_only(tmp_path / "artemis.db")) as conn:
        snaps = snapshot(conn, sid)
        assert [s.number for s in snaps] == [1, 2]
        assert json.loads(snaps[1].action)["args"] == {"index": 2}
        assert snaps[0].pre_screenshot and snaps[0].pre_screenshot != snaps[1].pre_screenshot
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            conn.execute("DELETE FROM steps")  # the checker can never change what it checks
    # a step rewritten behind the runner's back is caught
    with contextlib.closing(sqlite3.connect(tmp_path / "artemis.db")) as rw, rw:
        rw.execute("UPDATE steps SET action_args = '{\"index\": 9}' WHERE number = 2")
    with contextlib.closing(read_only(tmp_path / "artemis.db")) as conn:
        assert compare(snaps, snapshot(conn, sid)).lost == [2]
