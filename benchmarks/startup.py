"""Start-up time of the CLI (issue 23 item 14): median wall time of

* ``python -c pass`` (the bare interpreter, the floor nothing can beat),
* ``python -m artemis_cli --help``,
* ``python -m artemis_cli sessions list`` on an empty temporary ARTEMIS_HOME (never used: nothing
  is created) and on one holding a few sessions (``sessions_list_ms`` is the larger of the two),

each run ``--runs`` times (default 15) as a fresh process, after one warm-up run each. Prints one
JSON object with ``--json``, else aligned lines::

    python benchmarks/startup.py [--json] [--runs N] [--sessions N]

Keys: runs, bare_ms, help_raw_ms, sessions_list_empty_raw_ms, sessions_list_raw_ms (the raw
medians), help_ms and sessions_list_ms (the medians OVER bare_ms; goal ≤ 300 each on a 2-core
machine), help_cpu_ms and sessions_list_cpu_ms (the same over the bare interpreter's CPU time,
user + system: what the command costs, less disturbed than wall time on a shared machine), and,
per command, the slowest run (``*_max_ms``); sessions_list_created_data_dir (must be false). Figures are measured, never asserted
here (SPEC §14); on a busy machine read them with the import-time breakdown
(``python -X importtime -m artemis_cli --help``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _time(argv: list[str], env: dict[str, str], runs: int) -> tuple[list[float], list[float]]:
    """Wall and CPU (user + system) milliseconds of each run."""
    subprocess.run(argv, env=env, cwd=REPO, capture_output=True, check=False)  # warm the page cache
    wall, cpu = [], []
    for _ in range(runs):
        c0, t0 = _cpu_s(), time.perf_counter()
        proc = subprocess.run(argv, env=env, cwd=REPO, capture_output=True, check=False)
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((_cpu_s() - c0) * 1000)
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr.decode()[-500:]}")
    return wall, cpu


def _seed(home: Path, sessions: int) -> None:
    from artemis_cli.engine.db import DataEngine
    from artemis_cli.engine.records import SessionRecord

    with DataEngine.open(home) as engine:
        for i in range(sessions):
            engine.create_session(SessionRecord(goal=f"goal {i}", task_id=f"task-{i % 3}", status="succeeded",
                                                model_label="scripted (offline)", device_serial="sim"))


def measure(runs: int, sessions: int) -> dict[str, Any]:
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="artemis-startup-") as tmp:
        empty, seeded = Path(tmp) / "empty-home", Path(tmp) / "home"
        _seed(seeded, sessions)
        base = {k: v for k, v in os.environ.items() if not k.startswith("ARTEMIS_")}
        base["COLUMNS"] = "100"
        figures = {
            "bare": _time([py, "-c", "pass"], base, runs),
            "help": _time([py, "-m", "artemis_cli", "--help"], {**base, "ARTEMIS_HOME": str(empty)}, runs),
            "sessions_list_empty": _time([py, "-m", "artemis_cli", "sessions", "list"],
                                         {**base, "ARTEMIS_HOME": str(empty)}, runs),
            "sessions_list": _time([py, "-m", "artemis_cli", "sessions", "list"],
                                   {**base, "ARTEMIS_HOME": str(seeded)}, runs),
        }
        created = empty.exists()  # a read command must not create the data dir
    med = {k: statistics.median(w) for k, (w, _) in figures.items()}
    cpu = {k: statistics.median(c) for k, (_, c) in figures.items()}
    listing = max(med["sessions_list"], med["sessions_list_empty"])
    out: dict[str, Any] = {"runs": runs, "sessions": sessions, "bare_ms": round(med["bare"], 1),
                           "help_ms": round(med["help"] - med["bare"], 1),
                           "sessions_list_ms": round(listing - med["bare"], 1),
                           "help_cpu_ms": round(cpu["help"] - cpu["bare"], 1),
                           "sessions_list_cpu_ms": round(max(cpu["sessions_list"], cpu["sessions_list_empty"])
                                                         - cpu["bare"], 1),
                           "sessions_list_created_data_dir": created}
    for key, (wall, _) in figures.items():
        if key != "bare":
            out[f"{key}_raw_ms"] = round(med[key], 1)
        out[f"{key}_max_ms"] = round(max(wall), 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--runs", type=int, default=15, help="runs per command (median taken)")
    parser.add_argument("--sessions", type=int, default=5, help="sessions in the seeded ARTEMIS_HOME")
    args = parser.parse_args()
    result = measure(max(1, args.runs), max(1, args.sessions))
    if args.json:
        print(json.dumps(result, indent=2))
        return
    width = max(len(k) for k in result)
    for key, value in result.items():
        print(f"{key:<{width}}  {value}")


if __name__ == "__main__":
    main()
