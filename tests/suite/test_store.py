"""The suites tables (migration 0011_suites) through suite.store on a real SQLite data dir."""

from __future__ import annotations

import json
from pathlib import Path

from artemis_cli.engine.db import DataEngine
from artemis_cli.suite import store


def test_suite_rows_round_trip(tmp_path: Path) -> None:
    engine = DataEngine.open(tmp_path)
    assert store.suite_sessions(engine, "s1") is None
    store.start_suite(engine, "s1", {"cases": ["a", "b"]})
    store.record_case(engine, "s1", "a", 1, "sess-a1", "failed", "sim#1", "failed check: x")
    store.record_case(engine, "s1", "a", 2, "sess-a2", "passed", "sim#2", None)
    store.mark_flaky(engine, "s1", "a", 2)
    store.end_suite(engine, "s1", "passed", {"cases": 1})
    assert store.suite_sessions(engine, "s1") == ["sess-a1", "sess-a2"]
    row = next(engine.db.query("SELECT * FROM suites WHERE id = 's1'"))
    assert row["status"] == "passed" and json.loads(row["totals"]) == {"cases": 1} and row["ended_at"]
    flaky = [r["flaky"] for r in engine.db.query("SELECT flaky FROM suite_cases ORDER BY attempt")]
    assert flaky == [0, 1]
    engine.close()
