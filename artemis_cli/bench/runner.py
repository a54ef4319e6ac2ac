"""Run a suite in every memory mode (resumable) and collect the figures (SPEC §12).

Each task × mode pair runs on a fresh simulated phone (the task's fixed world, seed and pop-up
schedule) with its own DataEngine under the work directory. With ``--model scripted`` the
decisions come from the task's reference solution played by the fake Gemini server through the
real SDK, so tokens and prefix caching are measured the same way for every mode. Step and chunk
summaries come from the mechanical lenses (``lens: mechanical`` in the results, ``summary_source``
``mechanical`` in the DB); ``--lens server`` sends them to the fake server instead, whose stub
answers are labelled ``stub-…``, never with a real model's name. The fidelity probe
(``artemis_cli.bench.fidelity``) asks the suite's probe questions of every finished pair. Finished
pairs are kept in a state file next to the output and skipped when the run is started again.

With ``devices`` (``--devices``) or ``--ray`` the pairs run concurrently through the one scheduler
(:func:`artemis_cli.bench.scheduler.run_items`: local worker processes, or Ray actors), each pair
through :func:`artemis_cli.bench.worker.run_pair_job`; the per-pair data dirs and the state file
stay the same, and the results name each pair's device.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from artemis_cli.bench.fidelity import ProbeFact, load_probe, probe, probe_path
from artemis_cli.bench.metrics import aggregate, rounded, session_figures, window_p50
from artemis_cli.bench.policy import bench_policy
from artemis_cli.bench.scheduler import SchedulerEvents
from artemis_cli.bench.suite import load_suite
from artemis_cli.bench.synthetic import overhead_run, recall_latency
from artemis_cli.bench.timing import StepClock, TimeMeter, time_device, time_model
from artemis_cli.config.profile import Profile, load_profile
from artemis_cli.config.task import SimOptions, Task
from artemis_cli.device.protocol import Device
from artemis_cli.engine.db import DataEngine
from artemis_cli.errors import UsageError
from artemis_cli.memory.ledger import TranscriptLedger
from artemis_cli.memory.modes import MEMORY_MODES, ledger_for_mode
from artemis_cli.models.registry import build_model, reference_script
from artemis_cli.runner import RunResult, run_task

BENCH_MODELS = ("scripted", "heuristic")
#: ``--lens``: ``mechanical`` (default) summarises steps and chunks with the mechanical lenses,
#: labelled ``mechanical``; ``server`` sends lens calls to the fake server, whose stub policy
#: answers them with stub text labelled ``stub-…`` (never a real model's name).
LENS_MODES = ("mechanical", "server")
SCHEMA_VERSION = 1
GOALS = {
    "steady_state_share_at_200": "<= 0.25 of the budget and <= 0.15 x naive",
    "cache_hit_call_share": ">= 0.90",
    "cached_token_share": ">= 0.70",
    "overhead_ms_p50_step10": "<= 5 ms",
    "overhead_ms_p50_step1000": "<= 5 ms (flat)",
    "recall_ms_p50_10k": "<= 20 ms",
}


@dataclass
class BenchConfig:
    suite: Path
    out: Path
    modes: list[str] = field(default_factory=lambda: list(MEMORY_MODES))
    model: str = "scripted"
    profile: str = "flash"
    tasks: list[str] | None = None
    work_dir: Path | None = None
    synthetic_steps: int = 1000
    recall_steps: int = 10_000
    #: modes that get the synthetic long overhead run (it costs ~75 ms a step; the goal is transcript's)
    synthetic_modes: tuple[str, ...] = ("transcript",)
    lens: str = "mechanical"
    #: ``--devices``: one worker process per entry ("sim", an adb serial, or "sim*N" expanded by
    #: :func:`artemis_cli.bench.parallel.parse_devices`); None runs the pairs here, one at a time
    devices: list[str] | None = None
    #: ``--jobs``: without ``devices`` or Ray, run the pairs and the synthetic runs in this many
    #: worker processes, each on its own simulated phone (1: all of it here, one at a time)
    jobs: int = 1

    def local_devices(self) -> list[str] | None:
        """The device slots the pairs run on: ``devices``, else ``sim*jobs`` when ``jobs`` > 1."""
        if self.devices is not None:
            return self.devices
        return [f"sim*{self.jobs}"] if self.jobs > 1 else None

    def check(self) -> None:
        bad = [m for m in self.modes if m not in MEMORY_MODES]
        if bad or not self.modes:
            raise UsageError(f"unknown memory mode(s): {', '.join(bad) or '(none)'}",
                             hint="--memory takes a comma list of: " + ", ".join(MEMORY_MODES))
        if self.model not in BENCH_MODELS:
            raise UsageError(f"bench does not support --model {self.model!r}",
                             hint="use scripted (the reference solutions via the fake Gemini server) or heuristic")
        if self.lens not in LENS_MODES:
            raise UsageError(f"unknown --lens {self.lens!r}", hint="use " + " or ".join(LENS_MODES))
        if self.devices is not None:
            from artemis_cli.bench.parallel import parse_devices

            parse_devices(self.devices)  # raises UsageError on a bad entry

    @property
    def state_path(self) -> Path:
        return self.out.with_name(self.out.name + ".state.json")

    @property
    def work(self) -> Path:
        return self.work_dir or self.out.with_name(self.out.stem + "-sessions")


# -- one pair -------------------------------------------------------------------------------------


def _device(task: Task) -> Device:
    from artemis_cli.device.select import sim_for

    return sim_for(task.sim or SimOptions())


def lens_label(lens: str, model_kind: str) -> str:
    """What wrote the pair's step and chunk summaries."""
    if lens == "server" and model_kind == "scripted":
        return "server (fake-server stub text)"
    return "mechanical"


def run_pair(task: Task, mode: str, profile: Profile, model_kind: str, data_dir: Path,
             on_step: Callable[[int], None] | None = None, lens: str = "mechanical",
             facts: list[ProbeFact] | None = None, device: Any | None = None) -> dict[str, Any]:
    """Run ``task`` once in ``mode`` and return its figures. ``lens`` (:data:`LENS_MODES`):
    ``mechanical`` summarises steps and chunks with the mechanical lenses; ``server`` sends the
    lens calls to the fake server too (its stub policy answers them). ``device``: the phone to
    run on (default: a fresh simulated phone with the task's sim settings)."""
    return run_pair_result(task, mode, profile, model_kind, data_dir, on_step=on_step, lens=lens, facts=facts,
                           device=device)[0]


def sim_secrets(task: Task) -> dict[str, str]:
    """The secrets the simulated phone itself answers for: the Shop's demo password, when the task
    runs on the sim with it (no ``shop_password_env``) and ``$ARTEMIS_SECRET_SHOP_PASSWORD`` does
    not say otherwise. The bench suite then runs as it is, with no variable to set."""
    import os

    from artemis_cli.operators.secrets import secret_env_name, task_secrets
    from artemis_cli.sim.worlds.shop import PASSWORD

    name = "shop_password"
    if (name not in task_secrets(task) or os.environ.get(secret_env_name(name)) or task.sim is None
            or task.sim.shop_password_env):
        return {}
    return {name: PASSWORD}


def run_pair_result(task: Task, mode: str, profile: Profile, model_kind: str, data_dir: Path,
                    on_step: Callable[[int], None] | None = None, lens: str = "mechanical",
                    facts: list[ProbeFact] | None = None,
                    device: Any | None = None) -> tuple[dict[str, Any], RunResult]:
    """:func:`run_pair`, also returning the run's :class:`RunResult` (its ``stop_reason`` says
    whether the device went offline)."""
    from artemis_cli.models.fakes.gemini import FakeGeminiServer
    from artemis_cli.models.gemini import GeminiModel

    engine = DataEngine.open(data_dir)
    dev_meter, model_meter = TimeMeter(), TimeMeter()
    device = time_device(_device(task) if device is None else device, dev_meter)
    clock = StepClock(dev_meter, model_meter)
    holder: dict[str, TranscriptLedger] = {}
    budget = profile.memory.transcript.context_budget_tokens

    def factory(base: TranscriptLedger) -> TranscriptLedger:
        holder["ledger"] = ledger_for_mode(mode, base)
        return holder["ledger"]

    t0 = time.perf_counter()
    server = None
    try:
        if model_kind == "scripted":
            script = reference_script(task)
            if not script:
                raise UsageError(f"bench task {task.id!r} has no reference solution for the scripted model")
            server = FakeGeminiServer(bench_policy(script), keep_requests=2).start()
            op = profile.models.operator
            model: Any = GeminiModel([op.model, *op.fallback], api_key="fake-key", base_url=server.base_url)
        else:
            model = build_model(model_kind, task=task, profile=profile)
        time_model(model, model_meter)
        result = run_task(task, profile, device, model, engine, real_time=False, ledger_factory=factory,
                          lenses="auto" if lens == "server" else "mechanical", secrets=sim_secrets(task),
                          **clock.hooks(on_step))
    finally:
        if server is not None:
            server.stop()
    wall = time.perf_counter() - t0
    figures = session_figures(engine, result.session_id, budget)
    recall = profile.memory.recall
    fidelity = probe(engine, result.session_id, holder.get("ledger"), budget, facts, goal=task.goal,
                     max_results=recall.max_results, max_text_tokens=recall.max_text_tokens)
    overhead = clock.overhead_ms
    return {
        "task": task.id,
        "mode": mode,
        "lens": lens_label(lens, model_kind),
        "session_id": result.session_id,
        "data_dir": str(data_dir),
        "success": result.success,
        "status": result.status,
        "steps": result.steps,
        "reference_steps": len(task.reference),
        **figures,
        "overhead_ms": {str(k): round(v, 3) for k, v in sorted(overhead.items())},
        "overhead_ms_p50": rounded(window_p50(overhead, max(overhead, default=0), half=10**9), 2),
        "overhead_ms_p50_step10": rounded(window_p50(overhead, 10), 2),
        **fidelity,
        "device_s": round(dev_meter.seconds, 2),
        "model_s": round(model_meter.seconds, 2),
        "wall_s": round(wall, 1),
        "pair_wall_s": round(time.perf_counter() - t0, 1),
    }, result


# -- the whole bench --------------------------------------------------------------------------------


def _load_state(path: Path) -> dict[str, Any]:
    if path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(data, dict):
                return data
        except json.JSONDecodeError:
            pass
    return {}


def _save_state(path: Path, state: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(state, indent=1), encoding="utf-8")
    tmp.replace(path)


@dataclass
class Progress:
    """What the CLI shows: one bar for the pairs, one for the current pair's steps."""

    on_pair_start: Callable[[str, str, int], None] | None = None
    on_step: Callable[[int], None] | None = None
    on_pair_done: Callable[[str, str, dict[str, Any] | None], None] | None = None
    on_phase: Callable[[str], None] | None = None
    #: with ``--devices``, per device: a pair started (device, task id, mode, max steps), its step
    #: count, and notes (a device dropped, a pair re-queued); ``on_step`` is not called then
    on_device_start: Callable[[str, str, str, int], None] | None = None
    on_device_step: Callable[[str, int], None] | None = None
    on_device_note: Callable[[str, str], None] | None = None
    #: a synthetic run finished in a worker (``--jobs``): device, label, its row
    on_synthetic_done: Callable[[str, str, dict[str, Any]], None] | None = None


def state_key(config: BenchConfig) -> dict[str, Any]:
    """What a state file's finished pairs are valid for: the same suite, model, profile, lens and
    probe facts (a local, --devices or --ray run of the same bench share them)."""
    probe_file = probe_path(config.suite)
    return {"suite": str(config.suite.resolve()), "model": config.model, "profile": config.profile,
            "lens": config.lens,
            "probe": hashlib.sha256(probe_file.read_bytes()).hexdigest()[:16] if probe_file.is_file() else None}


def run_bench(config: BenchConfig, progress: Progress | None = None, *, ray_address: str | None = None,
              devices_file: Path | None = None, **ray_options: Any) -> dict[str, Any]:
    """Run the bench: the pairs here one at a time, on ``config.devices`` (local worker processes)
    or on the phones of the Ray cluster at ``ray_address`` (``ray_options``: ``on_dispatch``,
    ``start_timeout``, see :class:`artemis_cli.bench.ray_backend.RayBackend`); then the synthetic
    runs here."""
    config.check()
    progress = progress or Progress()
    tasks = load_suite(config.suite, only=config.tasks)
    profile = load_profile(config.profile)
    probes = load_probe(config.suite)
    state = _load_state(config.state_path)
    key = state_key(config)
    if state.get("key") != key:
        state = {"key": key, "pairs": {}, "synthetic": {}}
    pairs: dict[str, Any] = state["pairs"]
    t0 = time.perf_counter()
    extra: dict[str, Any] = {}
    if config.local_devices() or ray_address is not None:  # the pairs concurrently, through the one scheduler
        extra = run_suite_on_devices(config, tasks, state, progress, save=lambda: _save_state(config.state_path, state),
                                     ray_address=ray_address, devices_file=devices_file, **ray_options)
        if config.devices is None and ray_address is None:  # --jobs: the worker sims are not named devices
            extra = {k: v for k, v in extra.items() if k not in ("devices",)}
    else:
        for task in tasks:
            for mode in config.modes:
                pid = f"{task.id}|{mode}"
                if pid in pairs:
                    if progress.on_pair_done:
                        progress.on_pair_done(task.id, mode, None)  # resumed: kept from the earlier run
                    continue
                if progress.on_pair_start:
                    progress.on_pair_start(task.id, mode, task.max_steps)
                pairs[pid] = run_pair(task, mode, profile, config.model, config.work / f"{task.id}-{mode}",
                                      on_step=progress.on_step, lens=config.lens, facts=probes.get(task.id))
                _save_state(config.state_path, state)
                if progress.on_pair_done:
                    progress.on_pair_done(task.id, mode, pairs[pid])
    synthetic: dict[str, Any] = state["synthetic"]
    for mode in [m for m in config.modes if m in config.synthetic_modes]:
        sk = f"overhead|{mode}|{config.synthetic_steps}"
        if sk not in synthetic:
            if progress.on_phase:
                progress.on_phase(f"synthetic {config.synthetic_steps}-step run ({mode})")
            synthetic[sk] = overhead_run(mode, profile, config.synthetic_steps,
                                         config.work / f"synthetic-{mode}", on_step=progress.on_step)
            _save_state(config.state_path, state)
    rk = f"recall|{config.recall_steps}"
    if rk not in synthetic:
        if progress.on_phase:
            progress.on_phase(f"recall latency on a synthetic {config.recall_steps}-step session")
        synthetic[rk] = recall_latency(config.recall_steps, config.work / "recall-10k")
        _save_state(config.state_path, state)
    return {**assemble(config, tasks, state, time.perf_counter() - t0), **extra}


class _PairEvents(SchedulerEvents):
    """The scheduler's events as the bench's :class:`Progress` and state file want them."""

    def __init__(self, progress: Progress, pairs: dict[str, Any], save: Callable[[], None],
                 meta: dict[str, tuple[str, str, int]], synthetic: dict[str, Any] | None = None) -> None:
        self.progress, self.pairs, self.save, self.meta = progress, pairs, save, meta
        self.synthetic = synthetic if synthetic is not None else {}

    def start(self, item: Any, device: str) -> None:
        task_id, mode, max_steps = self.meta[item.key]
        if self.progress.on_device_start:
            self.progress.on_device_start(device, task_id, mode, max_steps)
        elif self.progress.on_pair_start:
            self.progress.on_pair_start(task_id, mode, max_steps)

    def step(self, item: Any, device: str, steps: int) -> None:
        if self.progress.on_device_step:
            self.progress.on_device_step(device, steps)

    def done(self, item: Any, device: str, row: dict[str, Any]) -> None:
        if item.key.startswith(("overhead|", "recall|")):
            self.synthetic[item.key] = {k: v for k, v in row.items() if k not in ("attempts", "requeued_from")}
            self.save()
            if self.progress.on_synthetic_done:
                self.progress.on_synthetic_done(device, item.label, row)
            return
        self.pairs[item.key] = row
        self.save()
        if self.progress.on_pair_done:
            task_id, mode, _ = self.meta[item.key]
            self.progress.on_pair_done(task_id, mode, row)

    def requeued(self, item: Any, device: str, why: str) -> None:
        pass

    def note(self, device: str, text: str) -> None:
        if self.progress.on_device_note:
            self.progress.on_device_note(device, text)


def run_suite_on_devices(config: BenchConfig, tasks: list[Task], state: dict[str, Any], progress: Progress,
                         save: Callable[[], None], runner: Callable[..., dict[str, Any]] | None = None, *,
                         ray_address: str | None = None, devices_file: Path | None = None,
                         **ray_options: Any) -> dict[str, Any]:
    """The pairs phase of :func:`run_bench` through :func:`artemis_cli.bench.scheduler.run_items`
    (``config.devices`` or ``ray_address``): finished pairs go into ``state["pairs"]`` (saved after
    each); returns the results' extra top-level keys: ``devices`` (names), ``device_stats`` and
    ``unfinished`` (plus ``ray`` with Ray)."""
    from artemis_cli.bench.parallel import parse_devices
    from artemis_cli.bench.scheduler import WorkItem, run_items
    from artemis_cli.bench.worker import pair_dir, run_bench_job, tasks_and_jobs

    pairs: dict[str, Any] = state["pairs"]
    items: list[WorkItem] = []
    meta: dict[str, tuple[str, str, int]] = {}
    cost: dict[str, float] = {}
    for task, job in tasks_and_jobs(config, tasks):  # a broken probe file fails here, no device busy yet
        key = f"{task.id}|{job.mode}"
        if key in pairs:
            if progress.on_pair_done:
                progress.on_pair_done(task.id, job.mode, None)  # resumed: kept from the earlier run
            continue
        meta[key] = (task.id, job.mode, task.max_steps)
        cost[key] = _pair_cost(len(task.reference) or task.max_steps, job.mode)
        items.append(WorkItem(key, f"{task.id} · {job.mode}", job, pair_dir(config, task.id, job.mode),
                              files=(job.task_file,)))
    if config.devices is None and ray_address is None:  # --jobs: the synthetic runs go to the workers too
        from artemis_cli.bench.worker import SyntheticJob

        profile = str(Path(config.profile).resolve()) if Path(config.profile).is_file() else config.profile
        jobs = [SyntheticJob("overhead", m, profile, config.synthetic_steps)
                for m in config.modes if m in config.synthetic_modes]
        jobs.append(SyntheticJob("recall", "", profile, config.recall_steps))
        for sj in jobs:
            if sj.key in state["synthetic"]:
                continue
            label = (f"synthetic {sj.steps}-step run ({sj.mode})" if sj.kind == "overhead"
                     else f"recall latency on a synthetic {sj.steps}-step session")
            meta[sj.key] = (label, sj.mode, sj.steps if sj.kind == "overhead" else 1)
            cost[sj.key] = float(sj.steps) if sj.kind == "overhead" else sj.steps / 25
            work = config.work / (f"synthetic-{sj.mode}" if sj.kind == "overhead" else "recall-10k")
            items.append(WorkItem(sj.key, label, sj, work))
        items.sort(key=lambda it: -cost[it.key])  # the longest first: the workers finish together
    events = _PairEvents(progress, pairs, save, meta, state["synthetic"])
    slots = parse_devices(config.local_devices() or []) if ray_address is None else None
    if ray_address is not None and items and progress.on_phase:
        progress.on_phase("starting the device actors on the Ray cluster")
    result = run_items(items, runner or run_bench_job, devices=slots, ray_address=ray_address,
                       devices_file=devices_file, events=events, **ray_options)
    if result.interrupted:
        raise KeyboardInterrupt  # the finished pairs are in the state file: the same command resumes
    stats = {name: {**{k: v for k, v in s.items() if k != "items"}, "pairs": s.get("items", 0)}
             for name, s in result.devices.items()}
    unfinished = []
    for key in result.unfinished:
        d = result.unfinished_detail[key]
        task_id, mode, _ = meta[key]
        unfinished.append({"task": task_id, "mode": mode, "attempts": d["attempts"],
                           "requeued_from": d["requeued_from"], "reason": d["reason"],
                           "interruptions": d["interruptions"]})
    extra: dict[str, Any] = {"devices": list(result.devices) if ray_address is not None
                             else ([s.name for s in slots] if slots else []),
                             "device_stats": stats, "unfinished": unfinished}
    if ray_address is not None:
        extra["ray"] = result.backend or {"nodes": 0, "devices": []}
    return extra


def _pair_cost(steps: int, mode: str) -> float:
    """A rough cost of a pair in step-equivalents, to start the longest first: a naive pair
    re-sends every screenshot (its cost grows with the square of its length)."""
    return steps * (1 + steps / 150) if mode == "naive" else steps * (1.3 if mode == "legacy" else 1.0)


def assemble(config: BenchConfig, tasks: list[Task], state: dict[str, Any], wall_s: float) -> dict[str, Any]:
    pairs = state["pairs"]
    synthetic = state["synthetic"]
    recall = synthetic.get(f"recall|{config.recall_steps}", {})
    modes: dict[str, Any] = {}
    task_rows: list[dict[str, Any]] = []
    for mode in config.modes:
        rows = [pairs[f"{t.id}|{mode}"] for t in tasks if f"{t.id}|{mode}" in pairs]
        agg = aggregate(rows)
        syn = synthetic.get(f"overhead|{mode}|{config.synthetic_steps}", {})
        suite_10 = rounded(
            _mean([r["overhead_ms_p50_step10"] for r in rows if r.get("overhead_ms_p50_step10") is not None]), 2)
        agg["overhead_ms_p50_step10_suite"] = suite_10
        # step 10 from the synthetic run when the mode has one, else from the suite's tasks
        agg["overhead_ms_p50_step10"] = syn.get("overhead_ms_p50_step10", suite_10)
        agg["overhead_ms_p50_step1000"] = syn.get("overhead_ms_p50_last")
        agg["synthetic_steps"] = syn.get("steps")
        agg["recall_ms_p50_10k"] = recall.get("recall_ms_p50")
        agg.update(_fidelity_figures(rows))
        modes[mode] = agg
        task_rows += [{k: v for k, v in r.items() if k != "overhead_ms"} for r in rows]
    naive_200 = modes.get("naive", {}).get("steady_state_share_at_200")
    for agg in modes.values():
        mine = agg.get("steady_state_share_at_200")
        agg["share_at_200_vs_naive"] = rounded(mine / naive_200, 4) if mine is not None and naive_200 else None
    profile = load_profile(config.profile)
    return {
        "schema_version": SCHEMA_VERSION,
        "suite": str(config.suite),
        "model": config.model,
        "profile": config.profile,
        "context_budget_tokens": profile.memory.transcript.context_budget_tokens,
        "lens": lens_label(config.lens, config.model),
        "wall_s": round(wall_s, 1),
        "jobs": config.jobs if config.devices is None else _slot_count(config.devices),
        "cpu_s": _cpu_total([*task_rows, *synthetic.values()]),
        "goals": GOALS,
        "recall": recall,
        "modes": modes,
        "tasks": task_rows,
    }


def _fidelity_figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The mode's probe figures: ``fidelity`` (answered / facts, pooled over the tasks with a
    probe; the headline), the notes-and-typed-text figure, and which F levels fired."""
    facts = sum(int(r.get("fidelity_facts", 0)) for r in rows)
    notes = sum(int(r.get("fidelity_notes_facts", 0)) for r in rows)
    levels: dict[str, int] = {}
    for r in rows:
        for level, n in (r.get("compression_levels") or {}).items():
            levels[level] = levels.get(level, 0) + int(n)
    return {
        "fidelity": rounded(sum(int(r.get("fidelity_answered", 0)) for r in rows) / facts, 4) if facts else None,
        "fidelity_facts": facts,
        "fidelity_answered": sum(int(r.get("fidelity_answered", 0)) for r in rows),
        "fidelity_by_recall_only": sum(int(r.get("fidelity_by_recall_only", 0)) for r in rows),
        "fidelity_notes_share": rounded(sum(int(r.get("fidelity_notes_answered", 0)) for r in rows) / notes, 4)
        if notes else None,
        "compression_levels": levels,
        "lens": sorted({str(r.get("lens", "mechanical")) for r in rows}),
    }


def _slot_count(devices: list[str]) -> int:
    from artemis_cli.bench.parallel import parse_devices

    return max(1, len(parse_devices(devices)))


def _cpu_total(rows: list[dict[str, Any]]) -> float | None:
    """The rows' ``cpu_s`` summed; None when a row has none (run in this process)."""
    values = [r.get("cpu_s") for r in rows]
    if not values or any(not isinstance(v, int | float) for v in values):
        return None
    return round(sum(float(v) for v in values if v is not None), 1)


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None
