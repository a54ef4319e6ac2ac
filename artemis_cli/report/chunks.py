"""History chunks for the report, as readable text lines (never raw JSON).

The newest version of each (start, end) range of ``history_chunks`` wins (SPEC §5). Band ① is a
dict of fields: each becomes one line ``Label: text`` (lists joined with "; ", the labels of
:data:`~artemis_cli.memory.frozen_chunk.BAND1_LABELS`); band ② (intervals) and band ③ (the step
ledger) are text already and are split into lines. Databases without the table (written before
the memory runtime) have no chunk bands.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from artemis_cli.engine.db import DataEngine
from artemis_cli.memory.frozen_chunk import BAND1_FIELDS, BAND1_LABELS

TABLE = "history_chunks"


@dataclass
class ChunkView:
    start_step: int
    end_step: int
    number: int = 0  # 1-based, in start order
    version: int = 0
    status: str = ""
    milestone: str = ""
    fields: list[tuple[str, str]] = field(default_factory=list)  # band ①: (label, text)
    intervals: list[str] = field(default_factory=list)  # band ②
    ledger: list[str] = field(default_factory=list)  # band ③
    checker: list[tuple[str, str]] = field(default_factory=list)


def _flat(value: Any) -> str:
    """A field value as one line of text: strings as they are, lists joined, dicts as key: value."""
    if value is None:
        return ""
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, (list, tuple)):
        return "; ".join(t for t in (_flat(v) for v in value) if t)
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_flat(v)}" for k, v in value.items() if _flat(v))
    return str(value)


def _as_dict(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {"notes": value} if value.strip() else {}
    return value if isinstance(value, dict) else {}


def field_lines(band1: Any) -> list[tuple[str, str]]:
    """Band ① as (label, text) pairs: the known fields in their order, then any others."""
    data = _as_dict(band1)
    out: list[tuple[str, str]] = []
    for name in BAND1_FIELDS:
        text = _flat(data.get(name))
        if text:
            out.append((BAND1_LABELS[name], text))
    for name, value in data.items():
        if name not in BAND1_LABELS and _flat(value):
            out.append((name.replace("_", " ").capitalize(), _flat(value)))
    return out


def _lines(value: Any) -> list[str]:
    if value is None:
        return []
    text = value if isinstance(value, str) else _flat(value)
    return [line.rstrip() for line in text.splitlines() if line.strip()]


def load_chunks(engine: DataEngine, session_id: str) -> list[ChunkView] | None:
    """Newest version of each chunk range, by start step; None when there is no chunk table."""
    with engine.lock:
        if TABLE not in engine.db.table_names():
            return None
        rows = list(engine.db.query(
            f"""
            SELECT c.* FROM {TABLE} c
            WHERE c.session_id = ? AND c.version = (
                SELECT max(version) FROM {TABLE} d
                WHERE d.session_id = c.session_id AND d.start_step = c.start_step AND d.end_step = c.end_step)
            ORDER BY c.start_step, c.end_step
            """,
            [session_id],
        ))
    out: list[ChunkView] = []
    for number, row in enumerate(rows, start=1):
        out.append(ChunkView(
            start_step=int(row["start_step"]),
            end_step=int(row["end_step"]),
            number=number,
            version=int(row.get("version") or 0),
            status=str(row.get("status") or ""),
            milestone=_flat(row.get("milestone")),
            fields=field_lines(row.get("band1")),
            intervals=_lines(row.get("band2")),
            ledger=_lines(row.get("band3")),
            checker=[(k.replace("_", " "), _flat(v)) for k, v in _as_dict(row.get("checker")).items() if _flat(v)],
        ))
    return out
