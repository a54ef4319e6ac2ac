"""Step latency when the device sets the pace: `artemis sim serve --latency PROFILE` + the real adb.

    python benchmarks/device_latency.py --latency pixel --json

Starts a private adb server on a free port and, per backend (adb, u2), its own ``artemis sim
serve --latency PROFILE --seed S --no-popups`` subprocess, ``adb connect``-ed to it; builds the
device as Artemis does (``resolve_device(serial, backend=…)``) and measures:

* ``observe_ms_p50``: a full observation as Artemis takes it (``operators.observe.observe``), with
  whatever the current code does (sequential, or parallel once observe() runs its calls at once);
* ``slowest_call_ms_p50``: the slowest single device call (screenshot, hierarchy, current_app)
  within that observation, and ``observe_over_slowest`` (goal <= 1.15 with parallel calls);
* ``sequential_observe_ms_p50``: the same observation with the device calls forced one after
  another (a lock around every device call: today's main, whatever observe() does);
* ``step_ms_p50`` / ``sequential_step_ms_p50``: per-step wall time (``ended_at - started_at`` of the
  recorded steps) of ``tasks/demo.yaml`` with the heuristic model through ``run_task``, as is and
  with the sequential device; ``step_ratio`` = step / sequential step (goal <= 0.6);
* ``action_ms_p50``: the action's device time per step (the wall time of the step's action
  calls: tap, swipe, launch, …, measured at the device) and ``step_over_observe_action`` =
  ``step_ms_p50`` / (``observe_ms_p50`` + ``action_ms_p50``) (goal <= 1.1: a step costs one
  observation plus the action, no capture taken only to confirm stillness);
* ``settle_ms_p50``: the ``settle_ms`` the loop records in each step's meta when it settles by
  watching the screen (null, with a note, when the loop records none), against
  ``settle_fixed_ms`` = 1000 (a fixed wait); ``settle_modes``: how many steps settled each way
  (``observed``: the post observation showed the effect, ``watch``: cheap screenshots confirmed
  it); ``screenshots_per_step``: every screenshot of the run over its steps; ``late_changes``:
  the steps re-assessed on a later screen (``late_change`` events);
* ``device_call_ms``: measured median ms per device method (all calls of the runs).

A full run with ``--latency pixel`` takes about 2-4 minutes. Exits 2 without `adb`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

OBSERVE_CALLS = ("screenshot", "hierarchy", "current_app")
#: the Device methods that act (operators.act.execute): their time is a step's action time
ACTION_CALLS = frozenset({"tap", "long_press", "swipe", "double_tap", "drag", "type_text", "clear_text", "key",
                          "launch"})
SETTLE_FIXED_MS = 1000


class TimedDevice:
    """Forwards every Device call; records the wall time of each (thread-safe: observe() may run
    its calls in parallel). ``window`` collects the observation calls of one observation."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.lock = threading.Lock()
        self.calls: dict[str, list[float]] = defaultdict(list)
        self.window: list[tuple[str, float]] | None = None
        #: (method, epoch seconds at its start, ms) of every call
        self.log: list[tuple[str, float, float]] = []

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if not callable(attr):
            return attr

        def timed(*args: Any, **kwargs: Any) -> Any:
            t0, wall = time.perf_counter(), time.time()
            try:
                return attr(*args, **kwargs)
            finally:
                ms = (time.perf_counter() - t0) * 1000
                with self.lock:
                    self.calls[name].append(ms)
                    self.log.append((name, wall, ms))
                    if self.window is not None and name in OBSERVE_CALLS:
                        self.window.append((name, ms))

        return timed


class SerialDevice:
    """Every device call under one lock: calls run one after another whatever the caller does
    (the sequential baseline: screenshot, then hierarchy, then current_app)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if not callable(attr):
            return attr

        def serial(*args: Any, **kwargs: Any) -> Any:
            with self.lock:
                return attr(*args, **kwargs)

        return serial


def p50(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 3) if a is not None and b else None


@contextmanager
def served(adb: str, adb_port: int, latency: str, seed: int, python: str = sys.executable,
           cwd: str | None = None) -> Iterator[str]:
    """`artemis sim serve --latency …` in a subprocess, attached to the private adb server
    (``python``/``cwd``: another checkout's interpreter and tree, e.g. old main's)."""
    from artemis_cli.sim.adbd import free_port

    port = free_port()
    env = {**os.environ, "ANDROID_ADB_SERVER_PORT": str(adb_port)}
    proc = subprocess.Popen([python, "-m", "artemis_cli", "sim", "serve", "--port", str(port),
                             "--latency", latency, "--seed", str(seed), "--no-popups"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd)
    serial = f"127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    why = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                    raise SystemExit(f"artemis sim serve did not start: {why}") from None
                time.sleep(0.1)
        subprocess.run([adb, "-P", str(adb_port), "connect", serial], check=True, capture_output=True, env=env)
        subprocess.run([adb, "-P", str(adb_port), "-s", serial, "wait-for-device"], check=True,
                       capture_output=True, env=env, timeout=30)
        yield serial
    finally:
        subprocess.run([adb, "-P", str(adb_port), "disconnect", serial], capture_output=True, env=env)
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def measure_observe(timed: TimedDevice, device: Any, samples: int) -> tuple[list[float], list[float]]:
    """``samples`` observations of ``device`` (``timed`` or a wrapper of it): total ms, slowest call ms."""
    from artemis_cli.operators.observe import observe

    info = timed.info()
    screen = (info.width, info.height)
    totals: list[float] = []
    slowest: list[float] = []
    for _ in range(samples):
        timed.window = []
        t0 = time.perf_counter()
        observe(device, screen, "pixels")
        totals.append((time.perf_counter() - t0) * 1000)
        window, timed.window = timed.window, None
        slowest.append(max((ms for _, ms in window), default=0.0))
    return totals, slowest


def run_steps(task: Any, device: Any, data: Path, timed: TimedDevice | None = None
              ) -> tuple[list[float], list[float], dict[str, Any]]:
    """One run of ``task`` with the heuristic model: per-step wall ms, settle ms from step meta;
    with ``timed`` (the device's recorder) also each step's action ms, the settle modes, the
    screenshots per step and the late changes, in the returned dict."""
    from artemis_cli.config.profile import load_profile
    from artemis_cli.engine.clock import parse_iso
    from artemis_cli.engine.db import DataEngine
    from artemis_cli.models.offline.heuristic import HeuristicModel
    from artemis_cli.runner import run_task

    engine = DataEngine.open(data)
    first = len(timed.log) if timed is not None else 0
    try:
        result = run_task(task, load_profile(task.profile), device, HeuristicModel(), engine, real_time=True)
        steps = engine.get_steps(result.session_id)
        late = len(engine.events(result.session_id, "late_change"))
    finally:
        engine.close()
    log = timed.log[first:] if timed is not None else []
    walls: list[float] = []
    settles: list[float] = []
    actions: list[float] = []
    modes: dict[str, int] = defaultdict(int)
    for s in steps:
        if s.started_at and s.ended_at:
            start, end = parse_iso(s.started_at).timestamp(), parse_iso(s.ended_at).timestamp()
            walls.append((end - start) * 1000)
            if s.action_type != "finish":
                actions.append(sum(ms for name, at, ms in log if name in ACTION_CALLS and start <= at <= end))
        settle = (s.meta or {}).get("settle_ms")
        if isinstance(settle, (int, float)):
            settles.append(float(settle))
        if s.action_type != "finish":  # a finish step takes no post observation of its own
            modes[str((s.meta or {}).get("settle_mode"))] += 1
    shots = sum(1 for name, _, _ in log if name == "screenshot")
    return walls, settles, {"steps": len(steps), "success": bool(result.success), "action_ms": actions,
                            "settle_modes": dict(modes), "late_changes": late,
                            "screenshots_per_step": round(shots / len(steps), 2) if steps else None}


def bench_backend(backend: str, serial: str, task: Any, samples: int, data: Path) -> dict[str, Any]:
    from artemis_cli.device.select import resolve_device

    dev = resolve_device(serial, backend=backend)  # type: ignore[arg-type]
    timed = TimedDevice(dev)
    try:
        timed.info()
        measure_observe(timed, timed, 1)  # warm-up (u2 server start, imports): not measured
        obs, slow = measure_observe(timed, timed, samples)
        seq_obs, seq_slow = measure_observe(timed, SerialDevice(timed), samples)
        walls, settles, run = run_steps(task, timed, data / f"{backend}-now", timed)
        seq_walls, _, seq_run = run_steps(task, SerialDevice(timed), data / f"{backend}-seq")
    finally:
        close = getattr(dev, "close", None)
        if callable(close):
            close()
    obs_p50, slow_p50 = p50(obs), p50(slow)
    step_p50, seq_step_p50 = p50(walls), p50(seq_walls)
    action_p50 = p50(run.pop("action_ms"))
    seq_run.pop("action_ms")
    return {
        "observe_ms_p50": obs_p50,
        "slowest_call_ms_p50": slow_p50,
        "observe_over_slowest": ratio(obs_p50, slow_p50),
        "step_ms_p50": step_p50,
        "action_ms_p50": action_p50,
        "step_over_observe_action": ratio(step_p50, (obs_p50 or 0) + (action_p50 or 0)),
        "step_over_observe_action_goal": 1.1,
        "settle_modes": run.pop("settle_modes"),
        "screenshots_per_step": run.pop("screenshots_per_step"),
        "late_changes": run.pop("late_changes"),
        "sequential_observe_ms_p50": p50(seq_obs),
        "sequential_slowest_call_ms_p50": p50(seq_slow),
        "sequential_step_ms_p50": seq_step_p50,
        "step_ratio": ratio(step_p50, seq_step_p50),
        "settle_ms_p50": p50(settles),
        "settle_fixed_ms": SETTLE_FIXED_MS,
        "settle_note": None if settles else "the loop records no settle_ms in step meta (no settle-by-watching yet)",
        "runs": {"current": run, "sequential": seq_run},
        "device_call_ms": {name: p50(ms) for name, ms in sorted(timed.calls.items()) if name != "info"},
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", default="pixel", help="sim latency profile: off, pixel, fast")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--samples", type=int, default=7, help="observations per mode and backend")
    ap.add_argument("--backends", default="adb,u2")
    ap.add_argument("--task", default=str(ROOT / "tasks" / "demo.yaml"))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    adb = shutil.which("adb")
    if adb is None:
        print("adb is not installed (apt-get install adb)", file=sys.stderr)
        return 2
    from artemis_cli.config.task import load_task
    from artemis_cli.sim.adbd import free_port
    from artemis_cli.sim.latency import PROFILES, parse_latency

    profile = parse_latency(args.latency)
    task = load_task(Path(args.task))
    adb_port = free_port()
    os.environ["ANDROID_ADB_SERVER_HOST"] = "127.0.0.1"
    os.environ["ANDROID_ADB_SERVER_PORT"] = str(adb_port)
    t_start = time.monotonic()
    subprocess.run([adb, "-P", str(adb_port), "start-server"], check=True, capture_output=True)
    out: dict[str, Any] = {"latency": profile, "seed": args.seed, "task": task.id,
                           "profile_ms": {k: round(v * 1000, 1) for k, v in PROFILES[profile].items()}}
    table: dict[str, Any] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            os.environ.setdefault("ARTEMIS_HOME", str(Path(tmp) / "home"))
            for backend in [b.strip() for b in args.backends.split(",") if b.strip()]:
                with served(adb, adb_port, profile, args.seed) as serial:
                    res = bench_backend(backend, serial, task, args.samples, Path(tmp))
                table[backend] = res.pop("device_call_ms")
                out[backend] = res
    finally:
        subprocess.run([adb, "-P", str(adb_port), "kill-server"], capture_output=True)
    out["device_call_ms"] = table
    out["wall_s"] = round(time.monotonic() - t_start, 1)
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for key, value in out.items():
            print(f"{key:14} {json.dumps(value)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
