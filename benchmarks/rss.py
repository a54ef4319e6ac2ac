"""Resource bounds of a long run: peak resident memory at step 100 vs the last step, blob dedup.

Runs ``python -m artemis_cli run TASK --model gemini --device sim --max-steps N --no-live --json``
as a child process (the process whose memory is measured; ``rss_child.py`` runs the CLI as it is
and, at exit, writes the size of each in-memory cache) against a FakeGeminiServer in this
process, playing long_run.py's deterministic multi-app chore through the real google-genai SDK.
While the child runs, the DataEngine is polled read-only and ``/proc/<pid>/status`` is read when
the committed step count first reaches each sample point (VmHWM = peak RSS so far, VmRSS = now).
When the child has already exited by the time the last step is seen, the last figure is the
child's lifetime peak from ``wait4`` (ru_maxrss). Prints one JSON object (or aligned lines)::

    python benchmarks/rss.py --steps 1000 --json [--profile flash|pro] [--sample-every 100] [--tracemalloc]

Keys: steps, exit_code, status, elapsed_s, steps_per_s, rss_mb_step100, rss_mb_step1000 (peak
RSS at step 100 / at the last step, named after the default 1000 whatever --steps is),
rss_ratio (goal ≤ 1.15), rss_mb_peak_exit (lifetime peak), screenshots_recorded (pre + post
screenshot references over all steps), screenshot_blobs (distinct screenshots stored), xml_refs,
xml_blobs, blob_bytes_recorded (sizes in the blobs table), blob_bytes_on_disk, dedup_ratio
(references / distinct blobs, screenshots and XML together), with --sample-every N an
``rss_series`` of {step, vmrss_mb, vmhwm_mb}, and last ``caches`` (each cache's entries, bytes
and byte bound ``max_bytes`` at the child's exit) and the ratio again. --tracemalloc traces the
child's allocations and adds ``top_growers``: the allocation sites that grew most between the
first and the last sample point (slow, and its RSS figures are not comparable).
Linux only (/proc). Figures are measured, never asserted here (SPEC §14).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

from long_run import chore_script  # noqa: E402

from artemis_cli.models.fakes.gemini import FakeGeminiServer  # noqa: E402
from artemis_cli.models.offline.scripted import script_policy  # noqa: E402
from artemis_cli.models.offline.scripted_roles import pro_script_policy  # noqa: E402

FIRST_MARK = 100
POLL_S = 0.02


@dataclass
class Sample:
    step: int
    vmrss_mb: float
    vmhwm_mb: float


@dataclass
class Watch:
    """What the poller saw of the child while it ran."""

    samples: dict[int, Sample] = field(default_factory=dict)
    last_step: int = 0


def proc_memory_mb(pid: int) -> tuple[float, float] | None:
    """(VmRSS, VmHWM) of a live process in MB, or None when it is gone (or a zombie)."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    fields: dict[str, float] = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(rest.split()[0]) / 1024  # kB
    if "VmRSS" not in fields or "VmHWM" not in fields:
        return None
    return fields["VmRSS"], fields["VmHWM"]


def committed_steps(db_path: Path) -> int:
    """Highest committed step number in the data dir's database (read-only; 0 before it exists)."""
    if not db_path.is_file():
        return 0
    try:
        conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=1.0)
        try:
            row = conn.execute("SELECT COALESCE(MAX(number), 0) FROM steps").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:  # not migrated yet, or busy
        return 0
    return int(row[0])


def sample_points(steps: int, every: int | None) -> list[int]:
    points = {min(FIRST_MARK, steps), steps}
    if every:
        points.update(range(every, steps + 1, every))
    return sorted(points)


def watch_child(
    proc: subprocess.Popen[bytes], db_path: Path, points: list[int], trace: Tracing | None = None
) -> tuple[Watch, int, float]:
    """Poll until the child exits; returns what was seen, its exit code and peak RSS (MB, wait4)."""
    seen = Watch()
    pending = list(points)
    snap_at = {points[0], points[-1]} if trace is not None else set()
    while True:
        done_pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if done_pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            seen.last_step = max(seen.last_step, committed_steps(db_path))
            return seen, proc.returncode, usage.ru_maxrss / 1024  # Linux: kB
        step = committed_steps(db_path)
        seen.last_step = max(seen.last_step, step)
        if pending and step >= pending[0]:
            mem = proc_memory_mb(proc.pid)
            while pending and step >= pending[0]:
                point = pending.pop(0)
                if mem is not None:
                    seen.samples[point] = Sample(point, round(mem[0], 1), round(mem[1], 1))
                if trace is not None and point in snap_at:
                    trace.snapshot(proc)
        time.sleep(POLL_S)


@dataclass
class Tracing:
    """tracemalloc snapshots the child dumps on SIGUSR1 (``rss_child.py``), diffed at the end."""

    where: Path
    taken: int = 0

    def snapshot(self, proc: subprocess.Popen[bytes]) -> None:
        """Ask for one and wait for it to be written (or for the child to be gone)."""
        self.taken += 1
        done = self.where / f"snap-{self.taken}.done"
        os.kill(proc.pid, signal.SIGUSR1)
        while not done.exists() and proc.poll() is None:
            time.sleep(POLL_S)

    def growers(self, top: int = 20) -> list[dict[str, Any]]:
        """The allocation sites that grew most from the first snapshot to the last."""
        import tracemalloc

        snaps = sorted(self.where.glob("snap-*.tm"), key=lambda p: int(p.stem.split("-")[1]))
        if len(snaps) < 2:
            return []
        first, last = (tracemalloc.Snapshot.load(str(p)) for p in (snaps[0], snaps[-1]))
        out = []
        for stat in last.compare_to(first, "lineno")[:top]:
            frame = stat.traceback[0]
            out.append({"where": f"{frame.filename.replace(str(REPO) + '/', '')}:{frame.lineno}",
                        "kb_diff": round(stat.size_diff / 1024, 1), "kb_now": round(stat.size / 1024, 1),
                        "count_diff": stat.count_diff})
        return out


def blob_figures(data_dir: Path) -> dict[str, Any]:
    """Screenshot and UI-XML references over all steps vs distinct stored blobs, bytes on disk."""
    conn = sqlite3.connect(f"file:{data_dir / 'artemis.db'}?mode=ro", uri=True)
    try:
        shots = [r[0] for r in conn.execute("SELECT pre_screenshot FROM steps UNION ALL SELECT post_screenshot FROM steps")
                 if r[0]]
        xmls = [r[0] for r in conn.execute("SELECT ui_xml FROM steps UNION ALL SELECT post_ui_xml FROM steps") if r[0]]
        kinds = {k: n for k, n in conn.execute("SELECT kind, COUNT(*) FROM blobs GROUP BY kind")}
        recorded = conn.execute("SELECT COALESCE(SUM(size), 0) FROM blobs").fetchone()[0]
    finally:
        conn.close()
    on_disk = sum(p.stat().st_size for p in (data_dir / "blobs").rglob("*") if p.is_file() and not p.name.startswith("."))
    refs, distinct = len(shots) + len(xmls), len(set(shots)) + len(set(xmls))
    return {
        "screenshots_recorded": len(shots),
        "screenshot_blobs": len(set(shots)),
        "xml_refs": len(xmls),
        "xml_blobs": len(set(xmls)),
        "blob_rows_by_kind": kinds,
        "blob_bytes_recorded": int(recorded),
        "blob_bytes_on_disk": on_disk,
        "dedup_ratio": round(refs / distinct, 2) if distinct else None,
    }


def cache_figures(path: Path) -> dict[str, Any] | None:
    """Each in-memory cache of the child at exit (entries, bytes, its byte bound), from rss_child.py."""
    try:
        return dict(json.loads(path.read_text()))
    except (OSError, ValueError):
        return None


def write_task(path: Path, steps: int, profile: str) -> None:
    # JSON is YAML: no YAML writer needed
    task = {"id": f"rss-{steps}", "goal": "Do the daily phone chores", "profile": profile,
            "max_steps": steps, "sim": {"seed": 7, "popups": False},
            # the chores open the Clock, which asks for notifications on its first launch
            "setup": [{"shell": "pm grant com.android.deskclock android.permission.POST_NOTIFICATIONS"}]}
    path.write_text(json.dumps(task, indent=2) + "\n")


def run(steps: int, profile: str, every: int | None, data_dir: Path, trace: bool = False) -> dict[str, Any]:
    script, _ = chore_script(steps)
    task_file = data_dir / "rss-task.yaml"
    write_task(task_file, steps, profile)
    policy = pro_script_policy(script) if profile == "pro" else script_policy(script)
    points = sample_points(steps, every)
    with FakeGeminiServer(policy) as server:
        env = {**os.environ, "GEMINI_API_KEY": "fake-key", "ARTEMIS_GEMINI_BASE_URL": server.base_url,
               "ARTEMIS_HOME": str(data_dir), "ARTEMIS_RSS_STATS": str(data_dir / "caches.json")}
        env.pop("GOOGLE_API_KEY", None)
        tracing = None
        if trace:
            tracing = Tracing(data_dir / "tracemalloc")
            tracing.where.mkdir(exist_ok=True)
            env["ARTEMIS_RSS_TRACEMALLOC"] = str(tracing.where)
        # rss_child.py runs `python -m artemis_cli` as it is, then reports the caches' sizes at exit
        cmd = [sys.executable, str(HERE / "rss_child.py"), "run", str(task_file), "--model", "gemini", "--device", "sim",
               "--profile", profile, "--max-steps", str(steps), "--no-live", "--json"]
        t0 = time.perf_counter()
        with open(data_dir / "run.stdout", "wb") as out, open(data_dir / "run.stderr", "wb") as errs:
            proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=out, stderr=errs, stdin=subprocess.DEVNULL)
            seen, code, peak_exit = watch_child(proc, data_dir / "artemis.db", points, tracing)
        elapsed = time.perf_counter() - t0
    try:
        result = json.loads((data_dir / "run.stdout").read_text())
    except ValueError:
        result = {}
    first = min(FIRST_MARK, steps)
    rss_first = seen.samples[first].vmhwm_mb if first in seen.samples else None
    last = seen.samples.get(steps)
    rss_last = last.vmhwm_mb if last is not None else round(peak_exit, 1)
    done = int(result.get("steps") or seen.last_step)
    figures: dict[str, Any] = {
        "profile": profile,
        "steps": done,
        "exit_code": code,
        "status": result.get("status"),
        "stop_reason": result.get("stop_reason"),
        "elapsed_s": round(elapsed, 1),
        "steps_per_s": round(done / elapsed, 2) if elapsed else None,
        f"rss_mb_step{FIRST_MARK}": rss_first,
        "rss_mb_step1000": rss_last,
        "rss_last_source": "proc_vmhwm" if last is not None else "wait4_ru_maxrss",
        "rss_ratio": round(rss_last / rss_first, 3) if rss_first else None,
        "rss_mb_peak_exit": round(peak_exit, 1),
        **blob_figures(data_dir),
        "data_dir": str(data_dir),
        "goals": {"rss_ratio": "<= 1.15"},
    }
    if tracing is not None:
        figures["traced"] = "tracemalloc on: RSS figures are not comparable with an untraced run"
        figures["top_growers"] = tracing.growers()
    if every:
        figures["rss_series"] = [vars(seen.samples[p]) for p in sorted(seen.samples)]
    figures["caches"] = cache_figures(data_dir / "caches.json")
    if code not in (0, 1):
        figures["stderr_tail"] = (data_dir / "run.stderr").read_text(errors="replace")[-2000:]
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--profile", choices=("flash", "pro"), default="flash")
    parser.add_argument("--sample-every", type=int, default=None, metavar="N",
                        help="also record an RSS series every N steps")
    parser.add_argument("--data-dir", type=Path, default=None, help="keep the run's data here")
    parser.add_argument("--keep", action="store_true", help="keep the temporary data dir")
    parser.add_argument("--tracemalloc", action="store_true",
                        help="trace the child's allocations and list what grew most between the first and the "
                             "last sample point (slow; its RSS figures are not comparable)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.steps < 2:
        parser.error("--steps must be at least 2")
    if args.sample_every is not None and args.sample_every < 1:
        parser.error("--sample-every must be at least 1")
    if not Path("/proc/self/status").is_file():
        print("rss.py needs Linux /proc", file=sys.stderr)
        return 2
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="artemis-rss-"))
    data_dir.mkdir(parents=True, exist_ok=True)
    try:
        figures = run(args.steps, args.profile, args.sample_every, data_dir, args.tracemalloc)
    finally:
        if args.data_dir is None and not args.keep:  # ~30 MB of blobs per 1,000 steps
            shutil.rmtree(data_dir, ignore_errors=True)
    if args.data_dir is None and not args.keep:
        figures.pop("data_dir", None)
    figures["caches"] = figures.pop("caches")  # last: what the caches held, then the ratio
    figures["rss_ratio_last"] = figures["rss_ratio"]
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for k, v in figures.items():
            if k not in ("caches", "top_growers", "rss_ratio_last"):
                print(f"{k:24} {v}")
        for name, cache in (figures.get("caches") or {}).items():
            print(f"cache {name:32} {cache['entries']:>6} entries {cache['bytes'] / 2**20:8.2f} MB"
                  f" (bound {cache['max_bytes'] / 2**20:.1f} MB)")
        for grower in figures.get("top_growers", []):
            print(f"grew {grower['kb_diff']:>10} kB {grower['count_diff']:>8} blocks  {grower['where']}")
        print(f"rss_ratio {figures['rss_ratio']} (step {min(FIRST_MARK, args.steps)} -> step {figures['steps']})")
    return 0 if figures["exit_code"] in (0, 1) else 1


if __name__ == "__main__":
    raise SystemExit(main())
