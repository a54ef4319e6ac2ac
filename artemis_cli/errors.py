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
