"""A package's names loaded on first use (start-up time): importing the package, or one of its
modules, does not import the modules its names come from."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_names(package: str, where: dict[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package``: ``name`` is taken from its module ``where[name]``,
    imported when the name is first asked for."""

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    return __getattr__
