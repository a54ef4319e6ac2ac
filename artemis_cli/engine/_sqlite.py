"""Importing sqlite-utils cheaply (start-up time, issues 23 and 38): every engine module that needs
it at run time takes it from here (``from ._sqlite import sqlite_utils``), and only when it is
used: the engine reads with the stdlib ``sqlite3`` (``DataEngine.conn``), so a command that only
reads (``sessions list``) never imports it."""

from __future__ import annotations

import sys


def _import_sqlite_utils() -> None:
    """sqlite-utils imports numpy and pandas when they are installed, only to map their scalar
    types to column types when a table is created from inserted values, which the engine never
    does (its tables come from migrations, its values are plain Python). numpy alone was the
    largest part of ``sessions list``'s start-up, so sqlite-utils is imported without them unless
    they are loaded already (then it sees them as usual). Runs once, before any engine module."""
    if "sqlite_utils" in sys.modules:
        return
    hidden = [name for name in ("numpy", "pandas") if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]  # ImportError for this one import
    try:
        import sqlite_utils  # noqa: F401
    finally:
        for name in hidden:
            if sys.modules.get(name) is None:
                del sys.modules[name]


_import_sqlite_utils()

import sqlite_utils  # noqa: E402  # imported above, without numpy

__all__ = ["sqlite_utils"]
