"""DataEngine: SQLite (sqlite-utils, WAL, append-only migrations) plus a content-addressed blob store."""

from . import _sqlite  # noqa: F401  # first: sqlite-utils without numpy (see _sqlite.py)
from .blobs import BlobStore
from .db import DataEngine, new_session_id
from .errors import BlobMissing, DataEngineError, DuplicateStep, SchemaVersionError, StepNotFound
from .records import (
    BLOB_FIELDS,
    REDACTED,
    EventRecord,
    LlmCallRecord,
    SessionRecord,
    StepRecord,
)

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
