"""How often an app name resolves to the package a person means, per real phone's package list.

    python benchmarks/app_names.py [--json]

Reads every ``fixtures/packages/*.txt`` (real ``pm list packages`` outputs, SOURCES.md) and the
hand-labelled answers in ``fixtures/packages/expected-names.json``, resolves each name from the
package names alone (no labels, as over plain adb) and prints the accuracy per list, the
misses, and how the hits resolved (alias, fuzzy, package). Also times the resolver.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from artemis_cli.device.apps import resolve_app  # noqa: E402
from artemis_cli.perception.packages import read_package_file  # noqa: E402

FIXTURES = ROOT / "fixtures" / "packages"


def measure() -> dict[str, Any]:
    labels = json.loads((FIXTURES / "expected-names.json").read_text())
    developed, held_out = score(labels["lists"]), score(labels["held_out"])
    right, total = developed["right"] + held_out["right"], developed["names"] + held_out["names"]
    return {"developed_on": developed, "held_out": held_out, "names": total, "right": right,
            "accuracy": round(right / total, 3)}


def score(expected: dict[str, dict[str, str | None]]) -> dict[str, Any]:
    lists: dict[str, Any] = {}
    right = total = 0
    elapsed = 0.0
    for name in sorted(expected):
        packages = read_package_file(FIXTURES / name)
        hows: Counter[str] = Counter()
        misses = []
        for query, want in expected[name].items():
            t0 = time.perf_counter()
            r = resolve_app(query, packages)
            elapsed += time.perf_counter() - t0
            hows[r.how] += 1
            if r.package != want:
                misses.append({"name": query, "got": r.package, "how": r.how, "expected": want})
        n = len(expected[name])
        right, total = right + n - len(misses), total + n
        lists[name] = {"packages": len(packages), "names": n, "right": n - len(misses),
                       "accuracy": round((n - len(misses)) / n, 3), "how": dict(sorted(hows.items())),
                       "misses": misses}
    return {"lists": lists, "names": total, "right": right, "accuracy": round(right / total, 3),
            "mean_resolve_ms": round(elapsed * 1000 / total, 3)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args()
    result = measure()
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    for part in ("developed_on", "held_out"):
        block = result[part]
        print(f"{part}:")
        for name, row in block["lists"].items():
            print(f"  {name:28} {row['right']:3}/{row['names']:<3} {row['accuracy']:.0%}  ({row['packages']} packages)")
            for miss in row["misses"]:
                print(f"      {miss['name']!r}: got {miss['got']} ({miss['how']}), expected {miss['expected']}")
        print(f"  {block['right']}/{block['names']} = {block['accuracy']:.0%}; {block['mean_resolve_ms']} ms per name")
    print(f"overall {result['right']}/{result['names']} = {result['accuracy']:.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
