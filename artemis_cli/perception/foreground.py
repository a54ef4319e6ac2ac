"""Which app is in the foreground."""

from __future__ import annotations

from collections import Counter

from artemis_cli.perception.types import UITree
from artemis_cli.perception.windows import SYSTEM_UI, is_input_method_package

__all__ = ["foreground_app", "is_background_package"]


def is_background_package(package: str) -> bool:
    """System UI and input methods: present in dumps, never the app the user is in."""
    return package == SYSTEM_UI or is_input_method_package(package)


def foreground_app(tree: UITree | None, device_hint: str | None = None) -> str | None:
    """The device's answer when it has one; else the most frequent package in the dump, ignoring
    system UI and keyboards (ties: the one seen first).  A dump with nothing but system UI (lock
    screen, shade) falls back to the most frequent package overall."""
    if device_hint:
        return device_hint
    if tree is None:
        return None
    packages = [n.package.strip() for n in tree.nodes if n.package.strip()]
    return _most_frequent([p for p in packages if not is_background_package(p)]) or _most_frequent(packages)


def _most_frequent(packages: list[str]) -> str | None:
    counts = Counter(packages)  # insertion order = first seen; max() keeps the first of ties
    return max(counts, key=counts.__getitem__) if counts else None
