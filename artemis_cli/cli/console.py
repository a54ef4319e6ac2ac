"""Rich consoles, created lazily (Rich import costs start-up time)."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console


@cache
def out() -> Console:
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)


@cache
def err() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


def escape(text: str) -> str:
    """Device and model text must never be interpreted as Rich markup."""
    from rich.markup import escape as _escape

    return _escape(text)
