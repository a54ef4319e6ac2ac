"""Counts are printed in words: "1 step", never "1 steps" (artemis_cli/plural.py)."""

from __future__ import annotations

import re
from pathlib import Path

from artemis_cli.plural import counted

PACKAGE = Path(__file__).resolve().parent.parent / "artemis_cli"
#: an f-string field right before a plural noun: ``f"{n} steps"`` prints "1 steps" for one
_FIELD_THEN_PLURAL = re.compile(r"\{[^{}]*\} (steps|sessions|errors|model calls|blobs)\b")
#: counts that are never 1 where they are printed (a range longer than the largest one asked for)
ALLOWED = {"memory/recall_args.py": "spans {b - a + 1} steps",
           "cli/profiles_cmd.py": "{len(issues)} errors",  # only for 2 or more (one is printed alone)
           "bench/output.py": "recall p50 {recall} steps"}  # a figure's name: recall over 10,000 steps


def test_counted() -> None:
    assert counted(1, "step") == "1 step" and counted(0, "step") == "0 steps" and counted(2, "step") == "2 steps"
    assert counted(1200, "step", sep=",") == "1,200 steps" and counted(2, "entry", "entries") == "2 entries"


def test_no_fstring_prints_a_count_before_a_fixed_plural() -> None:
    found = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).as_posix()
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if _FIELD_THEN_PLURAL.search(line) and ("f\"" in line or "f'" in line) and ALLOWED.get(rel, "\0") not in line:
                found.append(f"{rel}:{number}: {line.strip()}")
    assert not found, "use artemis_cli.plural.counted:\n" + "\n".join(found)
