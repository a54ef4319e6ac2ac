"""Self-healing replay against a fresh agent run on the drifted Shop (prints figures; nothing is asserted).

In one temporary data dir, through the real CLI (``python -m artemis_cli``), side by side:

a. ``artemis run TASK --model scripted`` on the default world records the source session;
b. ``artemis replay SOURCE --heal --device sim:drift --json`` heals it with the offline healer
   (no --model, no API key);
c. ``artemis sessions promote HEALED``, then ``artemis replay SOURCE --device sim:drift --json``
   (plain, no model: it replays the promoted baseline);
d. ``artemis run TASK --model healer --device sim:drift``: a fresh run of the same offline
   healing model, which must itself succeed for the ratio to mean anything.

Prints ``heal_model_calls`` (b), ``fresh_model_calls`` (d), ``ratio`` (b / d; the goal is at most
0.25), each run's success and step counts (replayed / retargeted / healed for the replays) and
wall time.

Usage: python benchmarks/heal.py [--task tasks/shop-office-order.yaml] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
GOAL_RATIO = 0.25


def _cli(args: list[str], env: dict[str, str]) -> tuple[dict[str, Any], float]:
    """One CLI command with --json; (its JSON result, wall seconds)."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "artemis_cli", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    try:
        return json.loads(proc.stdout), wall
    except json.JSONDecodeError:
        return {"success": False, "error": (proc.stderr.strip().splitlines() or ["no output"])[-1],
                "exit_code": proc.returncode}, wall


def _replay_row(r: dict[str, Any], wall: float) -> dict[str, Any]:
    return {"session_id": r.get("session_id"), "success": bool(r.get("success")), "message": r.get("message", r.get("error")),
            "replayed": r.get("replayed"), "retargeted": r.get("retargeted"), "healed": r.get("healed"),
            "model_calls": r.get("model_calls"), "baseline_of": r.get("baseline_of"), "wall_s": round(wall, 2)}


def _run_row(r: dict[str, Any], wall: float) -> dict[str, Any]:
    return {"session_id": r.get("session_id"), "success": bool(r.get("success")), "message": r.get("message", r.get("error")),
            "steps": r.get("steps"), "model_calls": r.get("model_calls"), "model_label": r.get("model_label"),
            "wall_s": round(wall, 2)}


def measure(task: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="artemis-heal-bench-") as tmp:
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}  # the offline healer
        env.update({"ARTEMIS_HOME": tmp, "ARTEMIS_SECRET": "artemis123"})  # the Shop's demo password
        data = ["--data-dir", tmp]
        rec, rec_wall = _cli(["run", task, "--model", "scripted", "--json", *data], env)
        out: dict[str, Any] = {"task": task, "record": _run_row(rec, rec_wall)}
        source = rec.get("session_id")
        heal: dict[str, Any] = {}
        if source:
            heal, wall = _cli(["replay", source, "--heal", "--device", "sim:drift", "--json", *data], env)
            out["heal"] = _replay_row(heal, wall)
            if heal.get("success"):
                promote = subprocess.run([sys.executable, "-m", "artemis_cli", "sessions", "promote",
                                          heal["session_id"], *data], cwd=REPO, env=env, capture_output=True,
                                         text=True, check=False)
                out["promoted"] = promote.returncode == 0
                plain, wall = _cli(["replay", source, "--device", "sim:drift", "--json", *data], env)
                out["plain_replay"] = _replay_row(plain, wall)
        fresh, fresh_wall = _cli(["run", task, "--model", "healer", "--device", "sim:drift", "--json", *data], env)
        out["fresh"] = _run_row(fresh, fresh_wall)
    heal_calls, fresh_calls = heal.get("model_calls"), fresh.get("model_calls")
    out["heal_model_calls"] = heal_calls
    out["fresh_model_calls"] = fresh_calls
    out["ratio"] = round(heal_calls / fresh_calls, 3) if heal_calls is not None and fresh_calls else None
    out["goal_ratio"] = GOAL_RATIO
    out["all_succeeded"] = all(out.get(k, {}).get("success") for k in ("record", "heal", "plain_replay", "fresh"))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="tasks/shop-office-order.yaml")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out = measure(args.task)
    if args.json:
        print(json.dumps(out, indent=2))
        return
    for key in ("record", "heal", "plain_replay", "fresh"):
        row = out.get(key)
        if row is None:
            print(f"{key:<13} not run")
            continue
        counts = (f"{row['replayed']} replayed, {row['retargeted']} retargeted, {row['healed']} healed"
                  if "healed" in row else f"{row['steps']} steps")
        print(f"{key:<13} {'ok    ' if row['success'] else 'FAILED'} {counts}; {row['model_calls']} model calls; "
              f"{row['wall_s']:.1f} s")
    print(f"heal_model_calls {out['heal_model_calls']}  fresh_model_calls {out['fresh_model_calls']}  "
          f"ratio {out['ratio']} (goal <= {GOAL_RATIO})")


if __name__ == "__main__":
    main()
