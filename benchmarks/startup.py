"""Start-up time of the CLI (issue 23 item 14, issue 38 item 3): median wall time of

* ``python -c pass`` (the bare interpreter, the floor nothing can beat),
* ``python -m artemis_cli --help``,
* ``python -m artemis_cli sessions list`` on an empty temporary ARTEMIS_HOME (never used: nothing
  is created) and on one holding a few sessions (``sessions_list_ms`` is the larger of the two),
* ``python -m artemis_cli PATH --help`` for every command and sub-command (``help_by_command``;
  ``--only-main`` skips them),

each run ``--runs`` times (default 15) as a fresh process, after one warm-up run each. Prints one
JSON object with ``--json``, else aligned lines::

    python benchmarks/startup.py [--json] [--runs N] [--sessions N] [--only-main]

Keys: runs, bare_ms, help_raw_ms, sessions_list_empty_raw_ms, sessions_list_raw_ms (the raw
medians), help_ms and sessions_list_ms (the medians OVER bare_ms; goal ≤ 250 each on an idle
2-core machine), help_cpu_ms and sessions_list_cpu_ms (the same over the bare interpreter's CPU
time, user + system: what the command costs, less disturbed than wall time on a shared machine),
and, per command, the slowest run (``*_max_ms``); sessions_list_created_data_dir (must be false);
help_by_command (each command's help: raw, over bare, CPU over bare, in ms), slowest_help (its
path and over-bare figure) and goal_margin_ms (250 less the worst over-bare figure of every help
and ``sessions list``: negative when the goal is missed). Figures are measured, never asserted
here (SPEC §14); on a busy machine read them with the import-time breakdown
(``python -X importtime -m artemis_cli --help``); ``uptime`` is printed beside them.
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


GOAL_MS = 250.0


def command_paths() -> list[tuple[str, ...]]:
    """Every command and sub-command of ``artemis``, walked with Click's own API."""
    import typer

    from artemis_cli.cli.app import app

    root = typer.main.get_command(app)
    paths: list[tuple[str, ...]] = []

    def walk(command: Any, path: tuple[str, ...]) -> None:
        for name in command.list_commands(None):
            sub = command.get_command(None, name)
            if sub is None or sub.hidden:
                continue
            paths.append((*path, name))
            if hasattr(sub, "list_commands"):
                walk(sub, (*path, name))

    walk(root, ())
    return paths


def measure(runs: int, sessions: int, every_command: bool = True) -> dict[str, Any]:
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
        helps = {" ".join(path): _time([py, "-m", "artemis_cli", *path, "--help"],
                                       {**base, "ARTEMIS_HOME": str(empty)}, runs)
                 for path in (command_paths() if every_command else [])}
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
    by_command = {path: {"raw_ms": round(statistics.median(wall), 1),
                         "over_bare_ms": round(statistics.median(wall) - med["bare"], 1),
                         "cpu_over_bare_ms": round(statistics.median(cpu_) - cpu["bare"], 1)}
                  for path, (wall, cpu_) in helps.items()}
    out["help_by_command"] = by_command
    worst = max(by_command.items(), key=lambda kv: kv[1]["over_bare_ms"], default=None)
    out["slowest_help"] = None if worst is None else {"path": worst[0], "over_bare_ms": worst[1]["over_bare_ms"]}
    figures_over_bare = [out["help_ms"], out["sessions_list_ms"], *(f["over_bare_ms"] for f in by_command.values())]
    out["goal_margin_ms"] = round(GOAL_MS - max(figures_over_bare), 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--runs", type=int, default=15, help="runs per command (median taken)")
    parser.add_argument("--sessions", type=int, default=5, help="sessions in the seeded ARTEMIS_HOME")
    parser.add_argument("--only-main", action="store_true", help="skip the help of each sub-command")
    args = parser.parse_args()
    load = os.getloadavg()
    result = measure(max(1, args.runs), max(1, args.sessions), every_command=not args.only_main)
    result["load_average"] = [round(x, 2) for x in (*load, *os.getloadavg())]  # 1/5/15 min, before and after
    if args.json:
        print(json.dumps(result, indent=2))
        return
    by_command = result.pop("help_by_command")
    width = max(len(k) for k in result)
    for key, value in result.items():
        print(f"{key:<{width}}  {value}")
    if by_command:
        print(f"\nhelp of each command (ms; median of {result['runs']}; bare {result['bare_ms']}; goal ≤ {GOAL_MS:.0f} over bare)")
        name_width = max(len(p) for p in by_command) + len("artemis  --help")
        print(f"{'command':<{name_width}}  {'raw':>7}  {'over bare':>9}  {'cpu over bare':>13}")
        for path, fig in by_command.items():
            print(f"{'artemis ' + path + ' --help':<{name_width}}  {fig['raw_ms']:>7}  {fig['over_bare_ms']:>9}  "
                  f"{fig['cpu_over_bare_ms']:>13}")


if __name__ == "__main__":
    main()
