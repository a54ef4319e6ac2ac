"""Suites in the DataEngine (migration ``0011_suites``): the suite row and one row per case attempt."""

from __future__ import annotations

import json
from typing import Any

from artemis_cli.engine.clock import now_iso
from artemis_cli.engine.db import DataEngine


def start_suite(engine: DataEngine, suite_id: str, args: dict[str, Any]) -> None:
    with engine.batch():
        engine.db.execute("INSERT INTO suites (id, started_at, args, status) VALUES (?, ?, ?, 'running')",
                          [suite_id, now_iso(), json.dumps(args)])


def record_case(engine: DataEngine, suite_id: str, case_key: str, attempt: int, session: str | None,
                status: str, device: str | None, failure: str | None, flaky: bool = False) -> None:
    with engine.batch():
        engine.db.execute("INSERT OR REPLACE INTO suite_cases VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                          [suite_id, case_key, attempt, session, status, device, failure, int(flaky)])


def mark_flaky(engine: DataEngine, suite_id: str, case_key: str, attempt: int) -> None:
    with engine.batch():
        engine.db.execute("UPDATE suite_cases SET flaky = 1 WHERE suite_id = ? AND case_key = ? AND attempt = ?",
                          [suite_id, case_key, attempt])


def end_suite(engine: DataEngine, suite_id: str, status: str, totals: dict[str, Any]) -> None:
    with engine.batch():
        engine.db.execute("UPDATE suites SET ended_at = ?, status = ?, totals = ? WHERE id = ?",
                          [now_iso(), status, json.dumps(totals), suite_id])


def suite_sessions(engine: DataEngine, suite_id: str) -> list[str] | None:
    """The suite's session ids (every attempt), or None when there is no such suite."""
    if not list(engine.db.query("SELECT 1 FROM suites WHERE id = ?", [suite_id])):
        return None
    return [r["session"] for r in engine.db.query(
        "SELECT session FROM suite_cases WHERE suite_id = ? AND session IS NOT NULL ORDER BY case_key, attempt",
        [suite_id])]
