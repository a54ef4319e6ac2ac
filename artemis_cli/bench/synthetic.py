"""Synthetic sessions for the figures the suite cannot reach cheaply.

- ``overhead_run``: a 1000-step run on the simulated phone with the offline scripted model (a
  cheap repeated action list), timing the runtime overhead per step at step 10 and at the end.
- ``recall_latency``: a 10,000-step session written straight through ``DataEngine.record_step``
  (tiny blobs) and indexed by ``Recall``, then timed queries.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from artemis_cli.bench.metrics import percentile, rounded, window_p50
from artemis_cli.bench.policy import LegacyAwareScripted
from artemis_cli.bench.timing import StepClock, TimeMeter, time_device, time_model
from artemis_cli.config.profile import Profile
from artemis_cli.config.task import Task
from artemis_cli.engine.clock import now_iso
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import SessionRecord, StepRecord
from artemis_cli.memory.modes import ledger_for_mode
from artemis_cli.memory.recall import Recall
from artemis_cli.models.offline.scripted import ScriptedModel
from artemis_cli.runner import run_task
from artemis_cli.sim.phone import SimPhone


def overhead_script(steps: int) -> list[dict[str, Any]]:
    """Open Network & internet, toggle Wi-Fi until ``steps - 1`` actions, then finish."""
    script: list[dict[str, Any]] = [{"launch": "com.android.settings"}, {"tap": {"text": "Network & internet"}}]
    while len(script) < steps - 1:
        script.append({"tap": {"id": "wifi_switch"}})
    script = script[: steps - 1]
    script.append({"finish": {"success": True, "answer": "toggled"}})
    return script


def overhead_run(mode: str, profile: Profile, steps: int, data_dir: Path,
                 on_step: Callable[[int], None] | None = None) -> dict[str, Any]:
    task = Task.model_validate({"id": f"synthetic-overhead-{steps}", "goal": "Toggle Wi-Fi many times",
                                "max_steps": steps + 5})
    engine = DataEngine.open(data_dir)
    dev, mod = TimeMeter(), TimeMeter()
    device = time_device(SimPhone(seed=3, popups=False), dev)
    model = time_model(LegacyAwareScripted(ScriptedModel(overhead_script(steps))), mod)
    clock = StepClock(dev, mod)

    t0 = time.perf_counter()
    result = run_task(task, profile, device, model, engine, real_time=False,
                      ledger_factory=lambda base: ledger_for_mode(mode, base), **clock.hooks(on_step))
    last = result.steps
    return {
        "mode": mode,
        "steps": last,
        "success": result.success,
        "overhead_ms_p50_step10": rounded(window_p50(clock.overhead_ms, 10), 2),
        "overhead_ms_p50_last": rounded(window_p50(clock.overhead_ms, last - 1), 2),
        "wall_s": round(time.perf_counter() - t0, 1),
    }


WORDS = ["alarm", "wifi", "contact", "note", "shop", "cart", "bluetooth", "brightness", "timeout", "coffee", "lamp", "pelican", "heron", "falcon", "orchid", "maple", "cedar", "river", "harbor", "summit", "lantern", "compass", "marble", "violet", "amber"]


TINY_XML = b'<hierarchy><node text="synthetic" /></hierarchy>'


def _fill(engine: DataEngine, recall: Recall, sid: str, steps: int, rng: random.Random) -> None:
    for n in range(1, steps + 1):
        a, b = rng.choice(WORDS), rng.choice(WORDS)
        stored = engine.record_step(
            StepRecord(session_id=sid, number=n, action_type="tap", thought=f"Tap the {a} row to open {b}",
                       action_args={"index": n % 40}, target={"text": f"{a} {n}", "class_name": "TextView"},
                       summary=f"A list screen with the {b} entry.", summary_status="ready"),
            blobs={"ui_xml": (TINY_XML, "ui_xml")},  # one tiny blob, shared (content-addressed)
        )
        recall.index_step(stored, ui_text=f"{a} {n} {b}")


def recall_latency(steps: int, data_dir: Path, queries: int = 60, seed: int = 11) -> dict[str, Any]:
    rng = random.Random(seed)
    engine = DataEngine.open(data_dir)
    sid = engine.new_session_id()
    engine.create_session(SessionRecord(id=sid, task_id="synthetic-recall", goal="synthetic recall session",
                                        profile="flash", loop="flash", device_serial="sim", device_kind="sim",
                                        screen_width=1080, screen_height=2400, status="running",
                                        started_at=now_iso()))
    recall = Recall(engine)
    t0 = time.perf_counter()
    with engine.batch():  # one transaction for the whole synthetic history
        _fill(engine, recall, sid, steps, rng)
    build_s = time.perf_counter() - t0
    times: list[float] = []
    for _ in range(queries):
        q = f"{rng.choice(WORDS)} {rng.choice(WORDS)}"
        q0 = time.perf_counter()
        recall.recall(sid, q)
        times.append((time.perf_counter() - q0) * 1000)
    return {"steps": steps, "queries": queries, "recall_ms_p50": rounded(percentile(times, 50), 2),
            "recall_ms_p90": rounded(percentile(times, 90), 2), "build_s": round(build_s, 1),
            "wall_s": round(time.perf_counter() - t0, 1)}
