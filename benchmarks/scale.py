"""Bench pairs on 1, 2 and 4 phones at once: wall time, speedup, Artemis's own CPU per step.

    python benchmarks/scale.py --devices 1,2,4 --json

The same small suite (short task files from ``tasks/``, one memory mode) runs with the
``--devices`` scheduler (:func:`artemis_cli.bench.scheduler.run_items`, local backend: one worker process per device) on N
simulated phones served as adbd over TCP by ``artemis sim serve`` and attached to a private adb
server (Debian's real ``adb`` on a free port; the developer's server on 5037 is never touched), so
every device call takes the real adb path. ``--faults latency_ms:N`` on the served sims adds N ms
to every device call, so a step costs about what it costs on a real phone (screencap + UI dump
≈ 0.5–2 s); the device time per step that results is measured and printed.

Each pair needs its own task's world, seed and pop-up setting on the served phone, and the sims
have no reset over adb: the worker that owns a device restarts that device's ``sim serve`` for
every pair, on the device's own port, with the task's settings (``adb connect`` again, then the
pair runs on the serial). The restart costs ~1 s of wall time per pair (a Python start-up);
``serve_s_per_pair`` reports it.

Figures per device count: ``wall_s`` (the pairs phase, workers' start-up included), ``speedup``
(vs 1 device), ``steps``, ``device_ms_per_step`` (time inside device calls, per step),
``artemis_cpu_ms_per_step`` (user+system CPU of the worker processes — Artemis itself, from
``getrusage`` in each worker, summed; the sim servers and adb are not counted), and
``artemis_pair_cpu_ms_per_step`` (the same counted inside the pairs only: no imports).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: short tasks (3–8 reference steps) with plain sim settings (the served sim takes world, seed,
#: faults and pop-ups; none of these needs the Shop password)
DEFAULT_TASKS = ("settings-brightness-80", "contacts-add-contact", "clock-add-alarm", "notes-new-note",
                 "settings-bluetooth-on-airplane-off", "settings-rename-device", "notes-delete-note",
                 "settings-screen-timeout-5min")
DEFAULT_LATENCY_MS = 200


def _wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError as e:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                why = proc.stderr.read() if proc.stderr else b""
                raise RuntimeError(f"artemis sim serve did not start on {port}: {why!r}") from e
            time.sleep(0.05)


def _adb(adb_port: int, *args: str, timeout: float = 20) -> subprocess.CompletedProcess[bytes]:
    adb = shutil.which("adb") or "adb"
    return subprocess.run([adb, "-P", str(adb_port), *args], capture_output=True, timeout=timeout,
                          env={**os.environ, "ANDROID_ADB_SERVER_PORT": str(adb_port)})


def served_pair(job: Any, device: str, work_dir: Path, on_step: Any = None, *, latency_ms: int,
                adb_port: int) -> dict[str, Any]:
    """The worker's runner: (re)start this device's ``artemis sim serve`` with the task's sim
    settings on the device's port, attach it, run the pair on the serial, stop the server."""
    from artemis_cli.bench.worker import run_pair_job
    from artemis_cli.config.task import SimOptions, load_task

    t0 = time.perf_counter()
    port = int(device.rsplit(":", 1)[1])
    sim = load_task(job.task_file).sim or SimOptions()
    faults = ",".join(f for f in (sim.faults, f"latency_ms:{latency_ms}" if latency_ms else None) if f)
    cmd = [sys.executable, "-m", "artemis_cli", "sim", "serve", "--port", str(port), "--world", sim.world,
           "--seed", str(sim.seed), "--popups" if sim.popups else "--no-popups", *(["--faults", faults] if faults else [])]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _wait_port(port, proc)
        out = _adb(adb_port, "connect", device).stdout.decode()
        if "connected to" not in out:
            raise RuntimeError(f"adb connect {device}: {out}")
        _adb(adb_port, "-s", device, "wait-for-device", timeout=10)
        serve_s = time.perf_counter() - t0
        row = run_pair_job(job, device, work_dir, on_step=on_step)
        return {**row, "serve_s": round(serve_s, 3)}
    finally:
        _adb(adb_port, "disconnect", device)
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def probe_latency(latency_ms: int, adb_port: int) -> dict[str, float]:
    """Median time of one screencap and one UI dump through adb on a served sim."""
    import statistics

    from artemis_cli.device.adb import AdbDevice
    from artemis_cli.sim.adbd import free_port

    port = free_port()
    cmd = [sys.executable, "-m", "artemis_cli", "sim", "serve", "--port", str(port), "--no-popups",
           *(["--faults", f"latency_ms:{latency_ms}"] if latency_ms else [])]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    serial = f"127.0.0.1:{port}"
    try:
        _wait_port(port, proc)
        _adb(adb_port, "connect", serial)
        _adb(adb_port, "-s", serial, "wait-for-device", timeout=10)
        dev = AdbDevice(serial, port=adb_port)
        shots, dumps = [], []
        for _ in range(3):
            t0 = time.perf_counter()
            dev.screenshot()
            t1 = time.perf_counter()
            dev.hierarchy()
            shots.append(t1 - t0)
            dumps.append(time.perf_counter() - t1)
        return {"screencap_ms": round(1000 * statistics.median(shots), 1),
                "dump_ms": round(1000 * statistics.median(dumps), 1),
                "screencap_plus_dump_ms": round(1000 * (statistics.median(shots) + statistics.median(dumps)), 1)}
    finally:
        _adb(adb_port, "disconnect", serial)
        proc.terminate()
        proc.wait(timeout=10)


def run_count(n: int, tasks: list[str], modes: list[str], latency_ms: int, adb_port: int, work: Path) -> dict[str, Any]:
    from artemis_cli.bench.parallel import DeviceSlot
    from artemis_cli.bench.runner import BenchConfig
    from artemis_cli.bench.scheduler import WorkItem, run_items
    from artemis_cli.bench.worker import tasks_and_jobs
    from artemis_cli.sim.adbd import free_port

    config = BenchConfig(suite=ROOT / "tasks", out=work / f"n{n}.json", modes=modes, tasks=tasks)
    # longest pairs first (by reference length), so the last pairs to start are short ones
    pairs = sorted(tasks_and_jobs(config), key=lambda tj: -len(tj[0].reference))
    items = [WorkItem(f"{t.id}|{job.mode}", f"{t.id} · {job.mode}", job, work / f"n{n}" / f"{t.id}-{job.mode}")
             for t, job in pairs]
    slots = [DeviceSlot(f"served#{i + 1}", f"127.0.0.1:{free_port()}") for i in range(n)]
    runner = functools.partial(served_pair, latency_ms=latency_ms, adb_port=adb_port)
    report = run_items(items, runner, devices=slots)
    rows = list(report.rows.values())
    if report.unfinished or len(rows) != len(items):
        raise SystemExit(f"{n} devices: pairs did not finish: {report.unfinished}")
    failed = [r["task"] for r in rows if not r["success"]]
    steps = sum(int(r["steps"]) for r in rows)
    worker_cpu = sum(float(s["cpu_s"] or 0) for s in report.devices.values())
    return {
        "devices": n,
        "pairs": len(rows),
        "failed": failed,
        "wall_s": round(report.wall_s, 2),
        "steps": steps,
        "device_ms_per_step": round(1000 * sum(float(r["device_s"]) for r in rows) / max(steps, 1), 1),
        "artemis_cpu_ms_per_step": round(1000 * worker_cpu / max(steps, 1), 1),
        "artemis_pair_cpu_ms_per_step": round(1000 * sum(float(r["cpu_s"]) for r in rows) / max(steps, 1), 1),
        "serve_s_per_pair": round(sum(float(r["serve_s"]) for r in rows) / max(len(rows), 1), 2),
        "pairs_per_device": {s: v["items"] for s, v in report.devices.items()},
        "pair_wall_s_mean": round(sum(float(r["wall_s"]) for r in rows) / max(len(rows), 1), 2),
        "rows": [{k: r[k] for k in ("task", "device", "steps", "wall_s", "device_s", "serve_s", "cpu_s")}
                 for r in rows],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--devices", default="1,2,4", help="comma list of device counts")
    ap.add_argument("--tasks", default=",".join(DEFAULT_TASKS), help="task ids from tasks/")
    ap.add_argument("--memory", default="transcript", help="comma list of memory modes")
    ap.add_argument("--latency-ms", type=int, default=DEFAULT_LATENCY_MS,
                    help="the served sims' latency_ms fault: added to every device call")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--rows", action="store_true", help="also print every pair's figures")
    args = ap.parse_args()
    if shutil.which("adb") is None:
        print("adb is not installed (apt-get install adb)", file=sys.stderr)
        return 2
    from artemis_cli.sim.adbd import free_port

    counts = [int(c) for c in args.devices.split(",") if c.strip()]
    tasks = [t for t in args.tasks.split(",") if t]
    modes = [m for m in args.memory.split(",") if m]
    adb_port = free_port()
    # the workers (spawned, so they inherit os.environ) talk to this adb server only
    os.environ["ANDROID_ADB_SERVER_HOST"] = "127.0.0.1"
    os.environ["ANDROID_ADB_SERVER_PORT"] = str(adb_port)
    _adb(adb_port, "start-server", timeout=30).check_returncode()
    results: list[dict[str, Any]] = []
    try:
        observe = probe_latency(args.latency_ms, adb_port)
        if not args.json:
            print(json.dumps(observe), flush=True)
        with tempfile.TemporaryDirectory(prefix="artemis-scale-") as tmp:
            os.environ.setdefault("ARTEMIS_HOME", str(Path(tmp) / "home"))
            for n in counts:
                results.append(run_count(n, tasks, modes, args.latency_ms, adb_port, Path(tmp)))
                if not args.json:
                    print(json.dumps(results[-1]), flush=True)
    finally:
        _adb(adb_port, "kill-server")
    base = next((r["wall_s"] for r in results if r["devices"] == 1), None)
    for r in results:
        if not args.rows:
            r.pop("rows")
        r["speedup"] = round(base / r["wall_s"], 2) if base else None
    out = {"tasks": tasks, "modes": modes, "latency_ms": args.latency_ms, "cpus": os.cpu_count(),
           "per_observation": observe,
           "counts": results,
           "goal": "speedup at 4 devices >= 3.0 (device-bound; figures only, never asserted)"}
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for r in results:
            print(f"{r['devices']} device(s): wall {r['wall_s']} s, speedup {r['speedup']}, {r['steps']} steps, "
                  f"device {r['device_ms_per_step']} ms/step, Artemis CPU {r['artemis_cpu_ms_per_step']} ms/step")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
