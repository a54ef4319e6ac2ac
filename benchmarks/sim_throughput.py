"""Simulated-phone throughput and Artemis's per-step overhead, in-process (prints figures).

Plays a task's reference solution with the scripted model on the simulated phone through the
real runner (DataEngine in a temp dir) and reports:

- ``steps_per_s``: whole steps per second (observe, decide, act, record);
- ``split_ms``: median milliseconds per step spent in render (screenshot), dump (hierarchy),
  parse (XML parse + element indexing + element list), dhash, hit_test, record (DataEngine), and
  ``other`` (everything else: the model, the tool loop, prompt building);
- ``overhead_ms_p50``: median per-step time outside rendering (targets: ≥ 30 steps/s and
  ≤ 5 ms median overhead outside rendering — printed, never asserted);
- figures that do not depend on the machine's load: ``cpu_ms_p50`` (the run thread's CPU per
  step, background lens work excluded), ``process_cpu_ms_per_step`` (every thread's), and
  ``per_step`` counts: SQL statements the run's connection executed, PNG decodes, XML parses.

``--baseline FILE.json`` (an earlier ``--json`` output, e.g. of main before a change) prints the
two side by side. ``benchmarks/baselines/sim_throughput_main_50f1f04.json`` is main before issue
26's per-step work, measured by main's own benchmark on an idle 2-core machine
(``load_average_1m``): it has the times and the split, not yet the per-step counts or CPU figures.
Compare times only with a run under like load.

Usage: python benchmarks/sim_throughput.py [--task tasks/X.yaml] [--repeat N] [--json] [--baseline F]
"""

from __future__ import annotations

import argparse
import json
import os
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
from artemis_cli.models.offline.scripted import ScriptedModel  # noqa: E402
from artemis_cli.models.registry import reference_script  # noqa: E402
from artemis_cli.operators import act, flash, observe  # noqa: E402
from artemis_cli.perception import dhash as dhash_module  # noqa: E402
from artemis_cli.perception import hierarchy as hierarchy_module  # noqa: E402
from artemis_cli.perception.dhash import _CACHE as dhash_cache  # noqa: E402
from artemis_cli.runner import run_task  # noqa: E402
from artemis_cli.sim import phone as sim_phone  # noqa: E402

TIMINGS: dict[str, float] = defaultdict(float)
COUNTS: dict[str, int] = defaultdict(int)


def counted(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        COUNTS[name] += 1
        return fn(*args, **kwargs)

    return wrapper


def count_sql(statement: str) -> None:
    if not statement.startswith("--"):  # SQLite's own statements inside FTS5 are not ours
        COUNTS["sql"] += 1


def timed(bucket: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            TIMINGS[bucket] += (time.perf_counter() - t0) * 1000

    return wrapper


def instrument() -> None:
    if hasattr(hierarchy_module, "_parse"):  # the parser behind the digest cache
        hierarchy_module._parse = counted("xml_parses", hierarchy_module._parse)
    else:  # before the cache every call parses: count the calls of every module that imports it
        original = hierarchy_module.parse_hierarchy
        wrapped = counted("xml_parses", original)
        for name, module in list(sys.modules.items()):
            if name.startswith("artemis_cli") and getattr(module, "parse_hierarchy", None) is original:
                module.parse_hierarchy = wrapped  # type: ignore[attr-defined]
    for name in ("parse_hierarchy", "index_elements", "index_screen", "render_element_list"):
        if hasattr(observe, name):  # index_elements became index_screen (issue 34)
            setattr(observe, name, timed("parse", getattr(observe, name)))
    observe.dhash_hex = timed("dhash", observe.dhash_hex)
    act.hit_test = timed("hit_test", act.hit_test)
    act.target_for_element = timed("hit_test", act.target_for_element)
    cls = sim_phone.SimPhone
    cls.screenshot = timed("render", cls.screenshot)  # type: ignore[method-assign]
    cls.hierarchy = timed("dump", cls.hierarchy)  # type: ignore[method-assign]
    engine_db.DataEngine.record_step = timed("record", engine_db.DataEngine.record_step)  # type: ignore[method-assign]
    dhash_module.load_png = counted("png_decodes", dhash_module.load_png)


def longest_task() -> Path:
    tasks = sorted(REPO.glob("tasks/*.yaml"))
    return max(tasks, key=lambda p: len(load_task(p).reference))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", type=Path, default=None, help="task with a reference (default: the longest)")
    parser.add_argument("--repeat", type=int, default=2, help="runs of the task (figures pool all steps)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="an earlier --json output: print it beside this run's figures")
    args = parser.parse_args()
    task_path = args.task or longest_task()
    task = load_task(task_path)
    instrument()
    per_step: list[dict[str, float]] = []
    step_totals: list[float] = []
    step_cpu: list[float] = []
    step_counts: list[dict[str, int]] = []
    cpu_s = 0.0
    wall_steps, wall_s = 0, 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):
            engine = engine_db.DataEngine.open(Path(tmp) / f"run{i}")
            engine.db.conn.set_trace_callback(count_sql)
            phone = sim_phone.SimPhone(world=task.sim.world if task.sim else "default",
                                       seed=task.sim.seed if task.sim else 0)
            mark = [time.perf_counter(), time.thread_time()]
            TIMINGS.clear()
            COUNTS.clear()
            dhash_cache.clear()  # each run starts cold, as a new process would
            for cache in ("_PARSED", "_RAW"):  # and so do the parsed dumps
                hierarchy_module.__dict__.get(cache, {}).clear()

            def on_step(_rep: flash.StepReport, mark: list[float] = mark) -> None:
                now, cpu = time.perf_counter(), time.thread_time()
                step_totals.append((now - mark[0]) * 1000)
                step_cpu.append((cpu - mark[1]) * 1000)
                per_step.append(dict(TIMINGS))
                step_counts.append(dict(COUNTS))
                TIMINGS.clear()
                COUNTS.clear()
                mark[0], mark[1] = time.perf_counter(), time.thread_time()

            t0, c0 = time.perf_counter(), time.process_time()
            result = run_task(task, load_profile(task.profile), phone, ScriptedModel(reference_script(task)),
                              engine, real_time=False, on_step=on_step)
            wall_s += time.perf_counter() - t0
            cpu_s += time.process_time() - c0
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
    counts = step_counts[1:] or step_counts
    names = ("sql", "png_decodes", "xml_parses")
    figures = {
        "task": task.id,
        "steps": wall_steps,
        "steps_per_s": round(wall_steps / wall_s, 1),
        "overhead_ms_p50": round(statistics.median(overhead), 3),
        "step_ms_p50": round(statistics.median(totals), 3),
        "split_ms": split,
        "cpu_ms_p50": round(statistics.median(step_cpu[1:] or step_cpu), 3),
        "process_cpu_ms_per_step": round(cpu_s * 1000 / max(1, wall_steps), 3),
        "per_step": {n: round(sum(c.get(n, 0) for c in counts) / max(1, len(counts)), 2) for n in names},
        "load_average_1m": round(os.getloadavg()[0], 2),
        "targets": {"steps_per_s": ">= 30", "overhead_ms_p50": "<= 5"},
    }
    baseline = json.loads(args.baseline.read_text()) if args.baseline else None
    if args.json:
        print(json.dumps({**figures, "baseline": baseline} if baseline else figures, indent=2))
    elif baseline:
        print(side_by_side(baseline, figures))
    else:
        print(f"{task.id}: {figures['steps_per_s']} steps/s over {wall_steps} steps "
              f"(target ≥ 30); overhead outside rendering p50 {figures['overhead_ms_p50']} ms (target ≤ 5)")
        for k, v in split.items():
            print(f"  {k:<9} {v:8.3f} ms")
        print(f"  cpu p50 {figures['cpu_ms_p50']} ms (run thread), {figures['process_cpu_ms_per_step']} ms/step "
              f"(all threads); per step: " + ", ".join(f"{n} {v}" for n, v in figures["per_step"].items()))
    return 0


def _flat(figures: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in figures.items():
        if key in ("targets", "baseline", "task", "note"):
            continue
        if isinstance(value, dict):
            out.update({f"{key}.{k}": v for k, v in value.items()})
        else:
            out[key] = value
    return out


def side_by_side(before: dict[str, Any], after: dict[str, Any]) -> str:
    """The two runs' figures in columns (a figure one of them lacks shows as -)."""
    b, a = _flat(before), _flat(after)
    lines = [f"{'figure':<28} {'before':>10} {'after':>10}"]
    for key in [*b, *(k for k in a if k not in b)]:
        lines.append(f"{key:<28} {b.get(key, '-')!s:>10} {a.get(key, '-')!s:>10}")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
