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


class SessionBusy(UsageError):
    """Another live process owns the session (its lease); nothing was done to the device."""


class StorageFull(DataEngineError):
    """The data dir's disk is full (ENOSPC / SQLITE_FULL). The session is resumable once space
    is freed (exit 3, like a device or model that went away)."""

    exit_code = 3


class DataDirReadOnly(UsageError):
    """The data dir cannot be written (read-only file system or permissions)."""


class SessionTakenOver(SessionBusy):
    """This process's lease was taken over by another (our heartbeat had lapsed): it stopped
    before its next device action and wrote nothing more to the session (exit 2)."""


class NoArtemisData(UsageError):
    """A read command was pointed at a dir that holds no Artemis database; nothing was created."""
