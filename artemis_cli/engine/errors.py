"""DataEngine errors. All are ``ArtemisError`` subclasses, so the CLI prints them as one line."""

from __future__ import annotations

from artemis_cli.errors import ArtemisError, UsageError


class DataEngineError(ArtemisError):
    """The data dir or a record is not what the engine expects (exit 1)."""


class DuplicateStep(DataEngineError):
    """A step with this (session, number) is already recorded; nothing of the new one was stored."""


class StepNotFound(UsageError):
    """No step with this number in the session."""


class BlobMissing(DataEngineError):
    """A blob referenced by a record is not on disk (or the hash is malformed)."""


class SchemaVersionError(DataEngineError):
    """The database's recorded migrations do not match this build of Artemis."""
