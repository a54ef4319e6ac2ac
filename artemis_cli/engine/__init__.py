"""DataEngine: SQLite (sqlite-utils, WAL, append-only migrations) plus a content-addressed blob store.

The names below are loaded on first use: importing ``artemis_cli.engine.errors`` (or any module
of the engine) does not open the rest of it, and sqlite-utils is imported only where it is used
(``_sqlite.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from artemis_cli.lazy import lazy_names

if TYPE_CHECKING:
    from .blobs import BlobStore
    from .db import DataEngine, new_session_id
    from .errors import BlobMissing, DataEngineError, DuplicateStep, SchemaVersionError, StepNotFound
    from .records import BLOB_FIELDS, REDACTED, EventRecord, LlmCallRecord, SessionRecord, StepRecord

_WHERE = {
    "BlobStore": "blobs", "DataEngine": "db", "new_session_id": "db",
    "BlobMissing": "errors", "DataEngineError": "errors", "DuplicateStep": "errors",
    "SchemaVersionError": "errors", "StepNotFound": "errors",
    "BLOB_FIELDS": "records", "REDACTED": "records", "EventRecord": "records", "LlmCallRecord": "records",
    "SessionRecord": "records", "StepRecord": "records",
}

__all__ = [
    "BLOB_FIELDS",
    "REDACTED",
    "BlobMissing",
    "BlobStore",
    "DataEngine",
    "DataEngineError",
    "DuplicateStep",
    "EventRecord",
    "LlmCallRecord",
    "SchemaVersionError",
    "SessionRecord",
    "StepNotFound",
    "StepRecord",
    "new_session_id",
]


__getattr__ = lazy_names(__name__, _WHERE)
