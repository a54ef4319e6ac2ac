"""Read history chunks for the report, if the database has them.

The ``history_chunks`` table arrives with the memory runtime; until then (and for databases
written before it) the report simply has no chunk section. Column names are read defensively:
rows are append-only, and the newest ``version`` per (start, end) range wins (SPEC §5).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from artemis_cli.engine.db import DataEngine

TABLE = "history_chunks"


@dataclass
class ChunkView:
    start_step: int
    end_step: int
    version: int = 0
    status: str = ""
    milestone: str = ""
    bands: list[tuple[str, str]] = field(default_factory=list)  # (name, text) for bands 1-3


def _pick(row: dict[str, Any], *names: str) -> Any:
    for n in names:
        if n in row and row[n] is not None:
            return row[n]
    return None


def _band_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return value
        if isinstance(parsed, (dict, list)):
            return json.dumps(parsed, ensure_ascii=False, indent=2)
        return value
    return json.dumps(value, ensure_ascii=False, indent=2)


def _band_columns(columns: list[str]) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for number, label in (("1", "band ① facts"), ("2", "band ② narrative"), ("3", "band ③ notes")):
        for c in columns:
            if "band" in c and number in c:
                found.append((c, label))
                break
    return found


def load_chunks(engine: DataEngine, session_id: str) -> list[ChunkView] | None:
    """Newest version of each chunk range, by start step; None when there is no chunk table."""
    if TABLE not in engine.db.table_names():
        return None
    columns = [c.name for c in engine.db.table(TABLE).columns]
    session_col = "session_id" if "session_id" in columns else "session" if "session" in columns else None
    if session_col is None:
        return []
    rows = list(engine.db.query(f"SELECT * FROM {TABLE} WHERE {session_col} = ?", [session_id]))
    bands = _band_columns(columns)
    newest: dict[tuple[int, int], dict[str, Any]] = {}
    for row in rows:
        start = _pick(row, "start_step", "start")
        end = _pick(row, "end_step", "end")
        if start is None or end is None:
            continue
        key = (int(start), int(end))
        if key not in newest or int(_pick(row, "version") or 0) >= int(_pick(newest[key], "version") or 0):
            newest[key] = row
    out = []
    for (start, end), row in sorted(newest.items()):
        out.append(ChunkView(
            start_step=start,
            end_step=end,
            version=int(_pick(row, "version") or 0),
            status=str(_pick(row, "status") or ""),
            milestone=str(_pick(row, "milestone", "milestone_label", "label") or ""),
            bands=[(label, _band_text(row.get(col))) for col, label in bands],
        ))
    return out
