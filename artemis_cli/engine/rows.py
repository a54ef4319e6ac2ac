"""How records become rows and back: JSON columns, step completion (times, offset, flattened
target columns, password redaction) and validation. Used by the DataEngine (engine/db.py)."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import fields, replace
from typing import Any, TypeVar

from artemis_cli.perception.bytecache import memoize

from .blobs import is_sha256
from .clock import normalize_iso, now_iso, parse_iso
from .errors import DataEngineError, DuplicateStep
from .records import (
    BLOB_FIELDS,
    REDACTED,
    RESULT_STATUSES,
    SUMMARY_STATUSES,
    EventRecord,
    StepRecord,
    secret_label,
)

# JSON columns per table: name -> whether NULL reads back as {} (else None).
SESSION_JSON = {"models": True, "config": True, "result": False}
STEP_JSON = {"action_args": True, "target": False, "target_end": False, "verdict": False, "meta": True,
             "outcome": False}
EVENT_JSON = {"payload": True}
NO_JSON: dict[str, bool] = {}

#: Blob kind recorded for a step field whose sha was given directly (not via ``blobs=``).
DEFAULT_BLOB_KIND = {
    "pre_screenshot": "screenshot",
    "post_screenshot": "screenshot",
    "ui_xml": "ui_xml",
    "post_ui_xml": "ui_xml",
    "marker": "marker",
}
SESSION_HINT = "list session ids with `artemis sessions list` (a unique prefix of an id is enough)"
TYPING_ACTIONS = {"type_text", "type", "input_text"}

R = TypeVar("R")


#: Bound: 256 KB; the keys are the tables and column sets the code writes (a few dozen, ~1 KB each).
@memoize("engine.insert_sql", 256 * 1024)
def _insert_sql(table: str, columns: tuple[str, ...], ignore: bool) -> str:
    verb = "INSERT OR IGNORE" if ignore else "INSERT"
    names = ", ".join(f'"{c}"' for c in columns)
    return f'{verb} INTO "{table}" ({names}) VALUES ({", ".join("?" * len(columns))})'


def select_rows(conn: sqlite3.Connection, sql: str, params: Any = None) -> list[dict[str, Any]]:
    """The rows of one SELECT as dicts, in one statement (sqlite-utils' ``query`` wraps each in a
    savepoint: three statements, each a moment the GIL is handed to a busy background thread)."""
    cursor = conn.execute(sql, params if params is not None else [])
    names = [d[0] for d in cursor.description or ()]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def insert_row(conn: sqlite3.Connection, table: str, row: dict[str, Any], *, ignore: bool = False) -> int:
    """Insert one encoded row (values already SQL types: JSON columns dumped by :func:`encode`)
    with one prepared statement; returns its rowid. The write path's inserts: sqlite-utils'
    ``insert`` reads the schema (table and view names, columns) on every call, several times
    the cost of the insert itself. Call inside ``write_transaction``."""
    cursor = conn.execute(_insert_sql(table, tuple(row), ignore), list(row.values()))
    return int(cursor.lastrowid or 0)



def dump_json(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


def decode(row: dict[str, Any], json_columns: dict[str, bool], record_type: type[R]) -> R:
    names = {f.name for f in fields(record_type)}  # type: ignore[arg-type]
    data: dict[str, Any] = {}
    for key, value in row.items():
        if key not in names:
            continue  # a column added by a later migration that this record does not know
        if key in json_columns:
            value = json.loads(value) if value is not None else ({} if json_columns[key] else None)
        data[key] = value
    return record_type(**data)


def encode(record: Any, json_columns: dict[str, bool], skip: tuple[str, ...] = ("id",)) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for f in fields(record):
        if f.name in skip:
            continue
        value = getattr(record, f.name)
        row[f.name] = dump_json(value) if f.name in json_columns else value
    return row


def cant_open(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and "unable to open database file" in str(exc)


def is_locked(exc: BaseException) -> bool:
    """SQLite gave up waiting (``busy_timeout``) for another connection's write lock."""
    return isinstance(exc, sqlite3.OperationalError) and "database is locked" in str(exc)


def check_choice(what: str, value: object, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise DataEngineError(f"invalid {what} {value!r}; expected one of: {', '.join(allowed)}")


def duplicate_step(step: StepRecord) -> DuplicateStep:
    return DuplicateStep(
        f"session {step.session_id} already has a step {step.number}; nothing was stored",
        hint="step numbers are unique per session; use last_step_number() + 1",
    )


def validate_step(step: StepRecord, blobs: dict[str, tuple[bytes, str]]) -> None:
    if not isinstance(step.number, int) or isinstance(step.number, bool) or step.number < 1:
        raise DataEngineError(f"step number must be an integer >= 1, not {step.number!r}")
    if not step.action_type:
        raise DataEngineError(f"step {step.number} has no action_type")
    check_choice("result status", step.result_status, RESULT_STATUSES)
    check_choice("summary status", step.summary_status, SUMMARY_STATUSES)
    unknown = sorted(set(blobs) - set(BLOB_FIELDS))
    if unknown:
        raise DataEngineError(
            f"step {step.number}: {', '.join(unknown)} is not a blob field ({', '.join(BLOB_FIELDS)})"
        )
    for name, value in blobs.items():
        if not (isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], bytes | bytearray)):
            raise DataEngineError(f"step {step.number}: blobs[{name!r}] must be (bytes, kind)")
    for name, sha in step.blob_refs().items():
        if name not in blobs and not is_sha256(sha):
            raise DataEngineError(f"step {step.number}: {name} is not a SHA-256 hash: {sha!r}")


def complete_step(step: StepRecord, session_started_at: str) -> StepRecord:
    """Fill times, offset and the flattened target columns; redact password text."""
    now = now_iso()
    started = normalize_iso(step.started_at) if step.started_at else now
    ended = normalize_iso(step.ended_at) if step.ended_at else now
    offset = step.offset_ms
    if offset is None:
        delta = parse_iso(started) - parse_iso(session_started_at)
        offset = max(0, int(delta.total_seconds() * 1000))
    target = step.target or {}
    args = dict(step.action_args)
    if (
        step.action_type in TYPING_ACTIONS
        and (target.get("password") or args.get("password"))
        and isinstance(args.get("text"), str)
    ):
        # typed from a named secret: the text is its label, whatever the caller put there
        secret = args.get("secret")
        args["text"] = secret_label(secret) if isinstance(secret, str) and secret else REDACTED
    return replace(
        step,
        started_at=started,
        ended_at=ended,
        offset_ms=offset,
        action_args=args,
        label_source=step.label_source if step.label_source is not None else target.get("label_source"),
        target_text=step.target_text
        if step.target_text is not None
        else (target.get("text") or target.get("content_desc") or None),
        target_resource_id=step.target_resource_id
        if step.target_resource_id is not None
        else (target.get("resource_id") or None),
        target_class=step.target_class
        if step.target_class is not None
        else (target.get("class_name") or None),
    )


def event_for_step(event: EventRecord, step: StepRecord) -> EventRecord:
    if event.session_id and event.session_id != step.session_id:
        raise DataEngineError(
            f"event {event.kind!r} belongs to session {event.session_id}, not the step's {step.session_id}"
        )
    return replace(
        event,
        session_id=step.session_id,
        step=step.number if event.step is None else event.step,
    )
