"""Helpers for tests that read the real UI dumps in fixtures/real-dumps/."""

from __future__ import annotations

import re
from pathlib import Path

DUMPS = Path(__file__).resolve().parents[2] / "fixtures" / "real-dumps"
if not DUMPS.is_dir():
    DUMPS = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "real-dumps"

# Opaque game surfaces: nothing for the model to index.
GAMES = {"015-clash-of-clans-game-landscape.xml", "020-efootball-game-rotation1.xml"}


def dump_files() -> list[Path]:
    return sorted(DUMPS.glob("*.xml"))


def dump(name_prefix: str) -> bytes:
    (path,) = [p for p in dump_files() if p.name.startswith(name_prefix)]
    return path.read_bytes()


def expected_node_counts() -> dict[str, int]:
    """The Nodes column of SOURCES.md's fixture table."""
    counts: dict[str, int] = {}
    for line in (DUMPS / "SOURCES.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 7 and re.fullmatch(r"\d{3}-.*\.xml", cells[0]):
            counts[cells[0]] = int(cells[5])
    return counts
