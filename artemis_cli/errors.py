"""Every error Artemis raises on purpose, in one place.

The CLI turns any ``ArtemisError`` into a one-line message (plus ``hint``) and exits with
``exit_code``; ``ARTEMIS_DEBUG=1`` shows the traceback instead.  Exit codes follow SPEC §2:
0 success, 1 task failed, 2 usage or input error, 3 device or model unavailable.
"""

from __future__ import annotations


class ArtemisError(Exception):
    """Base class. ``exit_code`` is what the CLI exits with; ``hint`` says what to do next."""

    exit_code = 1
    hint: str | None = None

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        if hint is not None:
            self.hint = hint


# --- usage and input (exit 2) -------------------------------------------------------------


class UsageError(ArtemisError):
    exit_code = 2


class ConfigError(UsageError):
    """A task or profile file is invalid. The message names file, line and field path."""

    def __init__(self, path: str, line: int | None, field: str | None, message: str) -> None:
        self.path = path
        self.line = line
        self.field = field
        self.detail = message
        where = path if line is None else f"{path}:{line}"
        text = f"{where}: {field}: {message}" if field else f"{where}: {message}"
        super().__init__(text)


class SessionNotFound(UsageError):
    pass


class OutputError(UsageError):
    """A file a command was asked to write (``-o``/``--out``) cannot be written: its directory
    does not exist, it is a directory, permission denied, no space left on the device."""

    def __init__(self, path: str, reason: str, *, hint: str | None = None) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"cannot write {path}: {reason}", hint=hint)


class BundleError(UsageError):
    """A session bundle (``sessions export --format bundle``) cannot be imported: not a bundle,
    an unknown format version, a newer schema, or a member whose SHA-256 does not match its
    manifest. Nothing was written."""


class BundleConflict(BundleError):
    """The bundle is sound, but the data dir already holds a session with its id and different
    content. Sessions are never merged; nothing was written."""


# --- device (exit 3) ----------------------------------------------------------------------


class DeviceError(ArtemisError):
    exit_code = 3


class DeviceNotFound(DeviceError):
    pass


class DeviceOffline(DeviceError):
    """The connection to the device dropped or never came up."""


class ShellError(DeviceError):
    """A shell command failed on the device."""


class HierarchyError(DeviceError):
    """The UI hierarchy could not be dumped (idle-state timeout, null root, stale file...)."""


class ScreenshotError(DeviceError):
    pass


class TextInputError(DeviceError):
    """Text cannot be typed faithfully (e.g. non-ASCII text without an IME)."""


class HierarchyParseError(ArtemisError):
    """UI XML that cannot be parsed at all. Recorded as a recoverable step failure."""

    exit_code = 1


# --- models (exit 3) ----------------------------------------------------------------------


class ModelError(ArtemisError):
    exit_code = 3


class ModelUnavailable(ModelError):
    """Retryable failures (429, 5xx, timeouts) exhausted the whole fallback chain."""


class ModelRequestError(ModelError):
    """The service rejected the request itself (4xx other than 429). Never retried."""


class ModelConfigError(UsageError):
    """A model name is unknown or its credentials are missing."""


class ModelAuthError(ModelConfigError):
    """The service rejected the credentials (a wrong, expired or blocked API key): a
    configuration error (exit 2), never retried nor retried into another model."""


class ModelOutputError(ModelError):
    """The model answered, but with nothing usable: a ``MALFORMED_FUNCTION_CALL`` stop, an empty
    candidate, no candidates. Transient: the operator turn retries it, then tries the next model
    of the chain; it ends a run (exit 1, a task failure, not an outage) only when every model of
    the chain gave nothing usable. ``reason`` is what ``llm_calls.error_class`` records (the
    finish reason, or ``EMPTY_CANDIDATE`` / ``NO_CANDIDATES``)."""

    exit_code = 1

    def __init__(
        self, message: str, *, reason: str, finish_message: str | None = None, hint: str | None = None
    ) -> None:
        super().__init__(message, hint=hint)
        self.reason = reason
        #: The service's ``finishMessage`` (often the garbled call); kept in memory, never stored.
        self.finish_message = finish_message


class ModelRefused(ModelError):
    """The model or the service refused: a ``SAFETY`` (or other policy) stop, or a blocked
    prompt. Deterministic for the request, so never retried; ends a run with exit 1."""

    exit_code = 1

    def __init__(self, message: str, *, reason: str, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.reason = reason


# --- the Python API's questions about the screen (exit 1) ------------------------------------


class AnswerError(ArtemisError):
    """A question about the screen (``phone.query`` / ``check`` / ``locate``) got no usable
    answer: two unusable replies (the first ask and its one retry), a failed model call, or the
    model saying the screen does not show what was asked. ``ask`` is query / check / locate,
    ``subject`` the question, statement or description, ``detail`` the last error or the model's
    reason."""

    exit_code = 1

    def __init__(self, ask: str, subject: str, detail: str, *, hint: str | None = None) -> None:
        import json

        self.ask = ask
        self.subject = subject
        self.detail = detail
        super().__init__(f"{ask} {json.dumps(subject, ensure_ascii=False)}: {detail}", hint=hint)


# --- debugging ----------------------------------------------------------------------------

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"", "0", "false", "no", "off"})


def parse_flag(value: str | None) -> bool | None:
    """``1/true/yes/on`` -> True, ``0/false/no/off`` or empty/unset -> False (any case, spaces
    ignored); anything else -> None."""
    text = (value or "").strip().lower()
    if text in _TRUE:
        return True
    return False if text in _FALSE else None


def debug_enabled() -> bool:
    """``ARTEMIS_DEBUG``: full tracebacks instead of one-line errors. Only an explicit yes
    (1/true/yes/on) turns it on; an unrecognised value counts as off (tracebacks can show
    request data, so they are never shown by accident)."""
    import os

    return parse_flag(os.environ.get("ARTEMIS_DEBUG")) is True
