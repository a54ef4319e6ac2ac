"""How ``artemis report`` scales: wall time, peak RSS and HTML size for a long session.

Makes a long session with ``benchmarks/rss.py --steps N`` (the deterministic multi-app chore
through the real google-genai SDK against a fake server; ~4-5 min for 2,000 steps), or reuses the
longest session already in ``--data-dir``, then runs ``python -m artemis_cli report ID -o FILE``
as a child process and measures that process alone (``os.wait4``: wall seconds, CPU seconds, peak
RSS). Prints one JSON object (or aligned lines)::

    python benchmarks/report_scale.py --steps 2000 --json [--data-dir DIR] [--assets]

Keys: seconds, cpu_seconds, peak_rss_mb, html_mb, assets_mb (with --assets), steps,
distinct_screenshots, session_id, session_made_s (when this run made the session), data_dir
(when kept) and ``targets`` / ``met``. Figures are measured, never asserted (SPEC §14): the
speed goals live here, not in timed tests.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

TARGETS = {"seconds": 20.0, "peak_rss_mb": 200.0, "html_mb": 25.0}


def longest_session(data_dir: Path) -> tuple[str, int, int] | None:
    """(session id, steps, distinct pre-action screenshots) of the longest session, if any."""
    db = data_dir / "artemis.db"
    if not db.is_file():
        return None
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        row = conn.execute("SELECT session_id, COUNT(*) AS n, COUNT(DISTINCT pre_screenshot) FROM steps "
                           "GROUP BY session_id ORDER BY n DESC LIMIT 1").fetchone()
    finally:
        conn.close()
    return (str(row[0]), int(row[1]), int(row[2])) if row else None


def make_session(steps: int, data_dir: Path) -> float:
    """Record a ``steps``-step session into ``data_dir`` with rss.py; returns the seconds it took."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, str(HERE / "rss.py"), "--steps", str(steps), "--data-dir", str(data_dir),
                           "--json"], cwd=REPO, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"rss.py failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return time.perf_counter() - t0


def time_report(session_id: str, data_dir: Path, html: Path, assets: Path | None) -> dict[str, float]:
    """Run the report command as a child; wall and CPU seconds and peak RSS of that child alone."""
    cmd = [sys.executable, "-m", "artemis_cli", "report", session_id, "-o", str(html), "--data-dir", str(data_dir)]
    if assets is not None:
        cmd += ["--assets", str(assets)]
    env = {**os.environ, "ARTEMIS_HOME": str(data_dir)}
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode != 0:
        raise SystemExit(f"artemis report failed ({proc.returncode}):\n{err[-2000:]}")
    return {"seconds": seconds, "cpu_seconds": usage.ru_utime + usage.ru_stime,
            "peak_rss_mb": usage.ru_maxrss / 1024}  # Linux: kB


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def run(steps: int, data_dir: Path, assets: bool) -> dict[str, Any]:
    made_s: float | None = None
    found = longest_session(data_dir)
    if found is None or found[1] < steps:
        made_s = make_session(steps, data_dir)
        found = longest_session(data_dir)
    if found is None:
        raise SystemExit(f"no session in {data_dir}")
    session_id, count, distinct = found
    out_dir = Path(tempfile.mkdtemp(prefix="artemis-report-scale-"))
    try:
        html = out_dir / "report.html"
        assets_dir = out_dir / "assets" if assets else None
        timing = time_report(session_id, data_dir, html, assets_dir)
        figures: dict[str, Any] = {
            "steps": count,
            "seconds": round(timing["seconds"], 2),
            "cpu_seconds": round(timing["cpu_seconds"], 2),
            "peak_rss_mb": round(timing["peak_rss_mb"], 1),
            "html_mb": round(html.stat().st_size / 1e6, 2),
            "distinct_screenshots": distinct,
            "session_id": session_id,
            "cpus": os.cpu_count(),
            "load_avg_1min": round(os.getloadavg()[0], 2),
        }
        if assets_dir is not None:
            figures["assets_mb"] = round(dir_bytes(assets_dir) / 1e6, 2)
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
    if made_s is not None:
        figures["session_made_s"] = round(made_s, 1)
    figures["targets"] = {k: f"<= {v:g}" for k, v in TARGETS.items()}
    figures["met"] = {k: figures[k] <= v for k, v in TARGETS.items()}
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="reuse the longest session here (made here first when it is shorter than --steps)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary data dir")
    parser.add_argument("--assets", action="store_true", help="time --assets DIR instead of embedded images")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.steps < 2:
        parser.error("--steps must be at least 2")
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="artemis-report-scale-data-"))
    data_dir.mkdir(parents=True, exist_ok=True)
    try:
        figures = run(args.steps, data_dir, args.assets)
    finally:
        if args.data_dir is None and not args.keep:
            shutil.rmtree(data_dir, ignore_errors=True)
    if args.data_dir is not None or args.keep:
        figures["data_dir"] = str(data_dir)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for k, v in figures.items():
            print(f"{k:22} {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
