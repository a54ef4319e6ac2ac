"""What the crash matrix (``benchmarks/crash_matrix.py``) checks after each SIGKILL.

A *snapshot* is the list of committed step rows of one session as a reader outside the runner
sees them: number, action and the blob hashes of its screens. Only fields that never change
after the commit are kept (summaries are written later, legitimately). ``compare`` says how the
rows after a kill differ from what was already committed before it:

* ``lost``: a step seen before the kill that is missing afterwards, or whose action / screen
  hashes changed (SPEC §5 invariant 2: a committed step is final);
* ``duplicated``: a step number stored twice, or a gap in the numbering 1…n.

Reads use a read-only SQLite connection with a short busy timeout, so polling never holds a lock
the runner needs.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

_STEP_SQL = (
    "SELECT number, action_type, action_args, x, y, x2, y2, result_status, pre_screenshot, post_screenshot, "
    "ui_xml, post_ui_xml FROM steps WHERE session_id = ? ORDER BY number, id"
)


@dataclass(frozen=True)
class StepSnap:
    """One committed step, reduced to what must never change after its commit."""

    number: int
    action: str  # JSON: type, args, pixel coordinates, result status
    pre_screenshot: str | None = None
    post_screenshot: str | None = None
    ui_xml: str | None = None
    post_ui_xml: str | None = None


@dataclass
class StepDiff:
    """How the steps after a kill compare with those committed before it."""

    lost: list[int] = field(default_factory=list)  # missing or changed
    duplicated: list[int] = field(default_factory=list)  # numbers stored twice, or missing in 1…n

    @property
    def ok(self) -> bool:
        return not self.lost and not self.duplicated


def read_only(db: Path, timeout_s: float = 0.5) -> sqlite3.Connection:
    """A read-only connection that waits at most ``timeout_s`` for a lock."""
    return sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=timeout_s)


def snapshot(conn: sqlite3.Connection, session_id: str) -> list[StepSnap]:
    """The session's committed steps, in number order (duplicates kept, so they can be seen)."""
    rows = conn.execute(_STEP_SQL, [session_id]).fetchall()
    out: list[StepSnap] = []
    for number, atype, args, x, y, x2, y2, status, pre, post, xml, post_xml in rows:
        action = json.dumps(
            {"type": atype, "args": json.loads(args) if args else {}, "xy": [x, y, x2, y2], "status": status},
            sort_keys=True,
            ensure_ascii=False,
        )
        out.append(StepSnap(int(number), action, pre, post, xml, post_xml))
    return out


def compare(before: Iterable[StepSnap], after: Iterable[StepSnap]) -> StepDiff:
    """Check ``after`` against the steps committed ``before`` a kill (see the module docstring)."""
    after_list = list(after)
    counts = Counter(s.number for s in after_list)
    present = set(after_list)
    diff = StepDiff()
    diff.lost = sorted({old.number for old in before if old not in present})
    diff.duplicated = sorted(n for n, c in counts.items() if c > 1)
    top = max(counts, default=0)
    diff.duplicated += [n for n in range(1, top + 1) if n not in counts]  # a hole in 1…n
    return diff


def merge(known: dict[int, StepSnap], snaps: Iterable[StepSnap]) -> None:
    """Add newly committed steps to ``known`` (the first row seen for a number stands)."""
    for snap in snaps:
        known.setdefault(snap.number, snap)
