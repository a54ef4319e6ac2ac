"""Plain option values without pydantic (start-up time, issue 38).

Typer 0.26+ converts every option and argument that is not a boolean flag with a pydantic
``TypeAdapter``, built the first time the parameter is processed -- given on the command line or
not -- so every command paid for importing pydantic (about 60 ms of ``artemis sessions list``).
:func:`take_plain_values` gives every parameter a converter that takes the values that are
plainly right as Typer's adapter would (an absent value, a ``str`` for a ``str``, a
decimal integer within ``min``/``max`` for an ``int``) and hands every other value to Typer's own
adapter, built then: its conversions and its error messages stay Typer's. On a Typer without
that machinery (0.16-0.25, no pydantic) nothing changes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

_DIGITS = re.compile(r"[0-9]{1,18}")
_NOT_PLAIN = object()


def plain_value(value: Any, param: Any) -> Any:
    """``value`` as Typer's adapter for ``param`` would return it, or ``_NOT_PLAIN``."""
    if param.multiple or param.nargs == -1:
        return () if value is None else _NOT_PLAIN
    if value is None:
        return None  # what Typer's coercion returns for an absent value, before any adapter
    desc = param.type_descriptor
    info = desc.parameter_info
    if desc.file_annotation is not None or getattr(info, "parser", None) is not None:
        return _NOT_PLAIN
    if desc.annotation is str and isinstance(value, str):
        return value
    if desc.annotation is int and not isinstance(value, bool) and not getattr(info, "clamp", False):
        if isinstance(value, int):
            number = value
        elif isinstance(value, str) and _DIGITS.fullmatch(value):
            number = int(value)
        else:
            return _NOT_PLAIN
        low, high = getattr(info, "min", None), getattr(info, "max", None)
        if (low is None or number >= low) and (high is None or number <= high):
            return number
    return _NOT_PLAIN


class PlainValues:
    """Stands in for a parameter's Typer converter until a value is not plain; then Typer
    builds its own (``built``: Typer's ``get_runtime_param``) and the parameter keeps it."""

    def __init__(self, built: Callable[[Any], Any]) -> None:
        self._built = built

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        plain = plain_value(value, param)
        if plain is not _NOT_PLAIN:
            return plain
        param._runtime_param = None
        return self._built(param).coerce(value, param=param, ctx=ctx)


def take_plain_values() -> None:
    """Every Typer parameter starts with :class:`PlainValues` (once per process; a no-op on a
    Typer that converts values without pydantic)."""
    from typer import core

    parameter = getattr(core, "_TyperParameter", None)
    built = getattr(parameter, "get_runtime_param", None)
    if parameter is None or built is None or getattr(built, "_artemis", False):
        return

    def get_runtime_param(self: Any) -> Any:
        if self._runtime_param is None:
            self._runtime_param = PlainValues(built)
        return self._runtime_param

    get_runtime_param._artemis = True  # type: ignore[attr-defined]
    parameter.get_runtime_param = get_runtime_param
