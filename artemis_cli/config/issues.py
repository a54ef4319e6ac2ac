"""Validation issues (file, line, field path, message) and the single ConfigError that reports them.

A file can have many problems; they are collected as :class:`ConfigIssue` values, sorted by file
and line, and raised as ONE ``ConfigError`` whose message has one line per issue
(``tasks/x.yaml:4: max_steps: must be ≥ 1 (got -3)``).  The issues stay available on the
exception as ``exc.errors``; each unpacks as ``(line, field, message)`` and also has ``.path``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import NoReturn

from artemis_cli.errors import ConfigError


@dataclass(frozen=True)
class ConfigIssue:
    path: str
    line: int | None
    field: str | None
    message: str

    def __iter__(self) -> Iterator[object]:  # unpacks as (line, field, message)
        return iter((self.line, self.field, self.message))

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"


def issues_of(exc: ConfigError) -> list[ConfigIssue]:
    """The issues carried by ``exc`` (a plain ConfigError carries exactly one)."""
    found = getattr(exc, "errors", None)
    if isinstance(found, list) and found and all(isinstance(i, ConfigIssue) for i in found):
        return list(found)
    return [ConfigIssue(exc.path, exc.line, exc.field, exc.detail)]


def config_error(issues: list[ConfigIssue]) -> ConfigError:
    """One ConfigError for all ``issues`` (sorted by file and line, duplicates dropped)."""
    unique = list(dict.fromkeys(issues))
    unique.sort(key=lambda i: (i.path, i.line if i.line is not None else 0))
    first = unique[0]
    rest = "".join(f"\n{issue}" for issue in unique[1:])
    exc = ConfigError(first.path, first.line, first.field, first.message + rest)
    exc.detail = first.message
    exc.errors = unique  # type: ignore[attr-defined]
    return exc


def raise_issues(issues: list[ConfigIssue]) -> NoReturn:
    raise config_error(issues)
