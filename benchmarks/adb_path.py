"""Per-step device time through the real adb path vs in process, and Artemis's own overhead.

    python benchmarks/adb_path.py --json

Runs a task's reference solution (scripted model) on the simulated phone twice: in process, and
through Debian's `adb` server + the sim adbd (adb backend). A timing wrapper around the device
measures the time spent inside device calls; everything else in the run is Artemis's own work
(perception, prompt building, recording). Starts its own adb server on a free port and kills it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


class TimedDevice:
    """Forwards every Device call and adds up the wall time spent in it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.device_s = 0.0
        self.calls = 0

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if not callable(attr):
            return attr

        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return attr(*args, **kwargs)
            finally:
                self.device_s += time.perf_counter() - t0
                self.calls += 1

        return timed


def _run(task: Any, device: Any, data: Path) -> tuple[int, float, float]:
    from artemis_cli.config.profile import load_profile
    from artemis_cli.engine.db import DataEngine
    from artemis_cli.models.offline.scripted import ScriptedModel
    from artemis_cli.models.registry import reference_script
    from artemis_cli.runner import run_task

    timed = TimedDevice(device)
    engine = DataEngine.open(data)
    t0 = time.perf_counter()
    try:
        result = run_task(task, load_profile(task.profile), timed, ScriptedModel(reference_script(task)),  # type: ignore[arg-type]
                          engine, real_time=False)
    finally:
        engine.close()
    total = time.perf_counter() - t0
    if not result.success:
        raise SystemExit(f"run failed: {result.message}")
    return result.steps, total, timed.device_s


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default=str(ROOT / "tasks" / "contacts-add.yaml"))
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    adb = shutil.which("adb")
    if adb is None:
        print("adb is not installed (apt-get install adb)", file=sys.stderr)
        return 2
    from artemis_cli.config.task import load_task
    from artemis_cli.device.adb import AdbDevice
    from artemis_cli.sim.adbd import SimAdbd, free_port
    from artemis_cli.sim.phone import SimPhone

    task = load_task(Path(args.task))
    assert task.sim is not None
    port = free_port()
    env = {**os.environ, "ANDROID_ADB_SERVER_PORT": str(port)}
    subprocess.run([adb, "-P", str(port), "start-server"], check=True, capture_output=True, env=env)
    per: dict[str, list[tuple[int, float, float]]] = {"inprocess": [], "adb": []}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            warm = SimPhone(world=task.sim.world, seed=task.sim.seed, popups=task.sim.popups)
            _run(task, warm, Path(tmp) / "warmup")  # imports and caches: not measured
            for i in range(args.runs):
                phone = SimPhone(world=task.sim.world, seed=task.sim.seed, popups=task.sim.popups)
                per["inprocess"].append(_run(task, phone, Path(tmp) / f"in{i}"))
                phone = SimPhone(world=task.sim.world, seed=task.sim.seed, popups=task.sim.popups)
                with SimAdbd(phone, port=free_port()) as adbd:
                    subprocess.run([adb, "-P", str(port), "connect", adbd.serial], check=True,
                                   capture_output=True, env=env)
                    subprocess.run([adb, "-P", str(port), "-s", adbd.serial, "wait-for-device"], check=True,
                                   capture_output=True, env=env, timeout=10)
                    dev = AdbDevice(adbd.serial, port=port)
                    per["adb"].append(_run(task, dev, Path(tmp) / f"adb{i}"))
                    subprocess.run([adb, "-P", str(port), "disconnect", adbd.serial], capture_output=True, env=env)
    finally:
        subprocess.run([adb, "-P", str(port), "kill-server"], capture_output=True, env=env)

    def ms_per_step(rows: list[tuple[int, float, float]], which: str) -> float:
        steps = sum(r[0] for r in rows)
        value = sum(r[2] for r in rows) if which == "device" else sum(r[1] - r[2] for r in rows)
        return round(1000 * value / max(steps, 1), 2)

    out = {
        "task": task.id,
        "runs": args.runs,
        "steps_per_run": per["adb"][0][0],
        "device_ms_per_step_adb": ms_per_step(per["adb"], "device"),
        "device_ms_per_step_inprocess": ms_per_step(per["inprocess"], "device"),
        "artemis_overhead_ms_per_step_adb": ms_per_step(per["adb"], "overhead"),
        "artemis_overhead_ms_per_step_inprocess": ms_per_step(per["inprocess"], "overhead"),
    }
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for k, v in out.items():
            print(f"{k:40} {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
