"""Simulated-phone throughput and Artemis's per-step overhead, in-process (prints figures).

Plays a task's reference solution with the scripted model on the simulated phone through the
real runner (DataEngine in a temp dir) and reports:

- ``steps_per_s``: whole steps per second (observe, decide, act, record);
- ``split_ms``: median milliseconds per step spent in render (screenshot), dump (hierarchy),
  parse (XML parse + element indexing + element list), dhash, hit_test, record (DataEngine), and
  ``other`` (everything else: the model, the tool loop, prompt building);
- ``overhead_ms_p50``: median per-step time outside rendering (targets: ≥ 30 steps/s and
  ≤ 5 ms median overhead outside rendering — printed, never asserted).

Usage: python benchmarks/sim_throughput.py [--task tasks/X.yaml] [--repeat N] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from artemis_cli.config.profile import load_profile  # noqa: E402
from artemis_cli.config.task import load_task  # noqa: E402
from artemis_cli.engine import db as engine_db  # noqa: E402
from artemis_cli.models.registry import reference_script  # noqa: E402
from artemis_cli.models.scripted import ScriptedModel  # noqa: E402
from artemis_cli.operators import act, flash, observe  # noqa: E402
from artemis_cli.perception.dhash import _CACHE as dhash_cache  # noqa: E402
from artemis_cli.runner import run_task  # noqa: E402
from artemis_cli.sim import phone as sim_phone  # noqa: E402

TIMINGS: dict[str, float] = defaultdict(float)


def timed(bucket: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            TIMINGS[bucket] += (time.perf_counter() - t0) * 1000

    return wrapper


def instrument() -> None:
    observe.parse_hierarchy = timed("parse", observe.parse_hierarchy)
    observe.index_elements = timed("parse", observe.index_elements)
    observe.render_element_list = timed("parse", observe.render_element_list)
    observe.dhash_hex = timed("dhash", observe.dhash_hex)
    act.hit_test = timed("hit_test", act.hit_test)
    act.target_for_element = timed("hit_test", act.target_for_element)
    cls = sim_phone.SimPhone
    cls.screenshot = timed("render", cls.screenshot)  # type: ignore[method-assign]
    cls.hierarchy = timed("dump", cls.hierarchy)  # type: ignore[method-assign]
    engine_db.DataEngine.record_step = timed("record", engine_db.DataEngine.record_step)  # type: ignore[method-assign]


def longest_task() -> Path:
    tasks = sorted(REPO.glob("tasks/*.yaml"))
    return max(tasks, key=lambda p: len(load_task(p).reference))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", type=Path, default=None, help="task with a reference (default: the longest)")
    parser.add_argument("--repeat", type=int, default=2, help="runs of the task (figures pool all steps)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    task_path = args.task or longest_task()
    task = load_task(task_path)
    instrument()
    per_step: list[dict[str, float]] = []
    step_totals: list[float] = []
    wall_steps, wall_s = 0, 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):
            engine = engine_db.DataEngine.open(Path(tmp) / f"run{i}")
            phone = sim_phone.SimPhone(world=task.sim.world if task.sim else "default",
                                       seed=task.sim.seed if task.sim else 0)
            mark = [time.perf_counter()]
            TIMINGS.clear()
            dhash_cache.clear()  # each run starts cold, as a new process would

            def on_step(_rep: flash.StepReport, mark: list[float] = mark) -> None:
                now = time.perf_counter()
                step_totals.append((now - mark[0]) * 1000)
                per_step.append(dict(TIMINGS))
                TIMINGS.clear()
                mark[0] = now

            t0 = time.perf_counter()
            result = run_task(task, load_profile(task.profile), phone, ScriptedModel(reference_script(task)),
                              engine, real_time=False, on_step=on_step)
            wall_s += time.perf_counter() - t0
            wall_steps += result.steps
            engine.close()
    # the first step also pays for setup and the first observation; drop it from the split
    rows = per_step[1:] or per_step
    totals = step_totals[1:] or step_totals
    buckets = ("render", "dump", "parse", "dhash", "hit_test", "record")
    split = {b: round(statistics.median(r.get(b, 0.0) for r in rows), 3) for b in buckets}
    others = [t - sum(r.get(b, 0.0) for b in buckets) for t, r in zip(totals, rows, strict=True)]
    split["other"] = round(statistics.median(others), 3)
    overhead = [t - r.get("render", 0.0) for t, r in zip(totals, rows, strict=True)]
    figures = {
        "task": task.id,
        "steps": wall_steps,
        "steps_per_s": round(wall_steps / wall_s, 1),
        "overhead_ms_p50": round(statistics.median(overhead), 3),
        "step_ms_p50": round(statistics.median(totals), 3),
        "split_ms": split,
        "targets": {"steps_per_s": ">= 30", "overhead_ms_p50": "<= 5"},
    }
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print(f"{task.id}: {figures['steps_per_s']} steps/s over {wall_steps} steps "
              f"(target ≥ 30); overhead outside rendering p50 {figures['overhead_ms_p50']} ms (target ≤ 5)")
        for k, v in split.items():
            print(f"  {k:<9} {v:8.3f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
