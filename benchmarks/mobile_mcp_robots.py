"""mobile-mcp's two robots on the same served sim: each tool's result and median time.

    ARTEMIS_MOBILE_MCP=…/node_modules/.bin/mcp-server-mobile python benchmarks/mobile_mcp_robots.py [--reps 15]
        [--latency pixel] [--sim-python /path/to/other/.venv/bin/python] [--json]

Starts a private adb server on a free port (never 5037) and one ``artemis sim serve --no-popups``
(``--latency`` passed on), ``adb connect``-ed to it; then, per robot — ``default`` (mobilecli, with
its on-device DeviceServer) and ``legacy`` (``MOBILEMCP_LEGACY_ROBOT=1``: adb itself) — starts
mobile-mcp over stdio with the official MCP SDK client, a private HOME, and calls each tool
``--reps`` times on one seeded phone (Settings force-stopped and HOME pressed before each round,
not timed; the first round pays mobilecli's dex push and server start-up).
Prints per tool: the result (ok/error and what came back) and the median ms, the robots side by
side. ``--sim-python``: serve the sim with another checkout's interpreter (e.g. old main) for a
before/after.  Exits 2 without adb, node or mobile-mcp.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import os
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SETTINGS = "com.android.settings"


def _round(serial: str) -> list[tuple[str, dict[str, Any]]]:
    """One round of tool calls, each leaving the phone where the next expects it."""
    d = {"device": serial}
    return [
        ("mobile_list_available_devices", {}),
        ("mobile_list_apps", d),
        ("mobile_launch_app", {**d, "packageName": SETTINGS}),
        ("mobile_get_foreground_app", d),
        ("mobile_get_screen_size", d),
        ("mobile_get_orientation", d),
        ("mobile_list_elements_on_screen", d),
        ("mobile_take_screenshot", d),
        ("mobile_click_on_screen_at_coordinates", {**d, "x": 540, "y": 600}),
        ("mobile_press_button", {**d, "button": "BACK"}),
        ("mobile_swipe_on_screen", {**d, "direction": "up"}),
        ("mobile_type_keys", {**d, "text": "a", "submit": False}),
    ]


def _free_port() -> int:
    from artemis_cli.sim.adbd import free_port

    return free_port()


def _adb(adb: str, port: int, *args: str, serial: str | None = None) -> subprocess.CompletedProcess[bytes]:
    cmd = [adb, "-P", str(port), *(["-s", serial] if serial else []), *args]
    return subprocess.run(cmd, capture_output=True, timeout=60, env={**os.environ, "ANDROID_ADB_SERVER_PORT": str(port)})


def _summary(res: Any) -> str:
    if res.is_error:
        text = " ".join(c.text for c in res.content if c.type == "text")
        return "ERROR " + text.replace("\n", " ")[:70]
    for c in res.content:
        if c.type == "image":
            data = base64.b64decode(c.data)
            if data.startswith(b"\x89PNG"):
                w, h = struct.unpack(">II", data[16:24])
                return f"ok image/png {w}x{h}"
            return f"ok {c.mime_type} {len(data) // 1024} KiB"
    text = " ".join(c.text for c in res.content if c.type == "text").replace("\n", " ")
    return "ok " + text[:70]


def robot_env(robot: str, home: Path, adb: str, adb_port: int) -> dict[str, str]:
    """mobile-mcp's environment for ``robot`` (default or legacy): a private HOME and adb server."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANDROID_", "MOBILEMCP_"))}
    env.update({"HOME": str(home), "ANDROID_ADB_SERVER_PORT": str(adb_port), "MOBILEMCP_DISABLE_TELEMETRY": "1",
                "PATH": os.path.dirname(adb) + os.pathsep + env.get("PATH", "")})
    if robot == "legacy":
        env["MOBILEMCP_LEGACY_ROBOT"] = "1"
    return env


def robot_cleanup(robot: str, home: Path, serial: str, adb: str, adb_port: int) -> None:
    """Stop the mobilecli daemon ``robot`` left under ``home``, give the phone back, remove ``home``."""
    with contextlib.suppress(OSError, ValueError, KeyError):
        pid = int(json.loads((home / ".mobilecli" / "daemon.pid").read_text())["pid"])
        os.kill(pid, signal.SIGTERM)
    if robot == "default":  # give the phone's UiAutomation back for the next robot
        _adb(adb, adb_port, "shell", "pkill -f '[D]eviceServer'; true", serial=serial)
        _adb(adb, adb_port, "forward", "--remove-all", serial=serial)
    shutil.rmtree(home, ignore_errors=True)


async def _robot(mcp_bin: str, robot: str, serial: str, adb: str, adb_port: int, reps: int) -> dict[str, Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    home = Path(tempfile.mkdtemp(prefix=f"artemis-mobile-mcp-bench-{robot}-"))
    env = robot_env(robot, home, adb, adb_port)
    times: dict[str, list[float]] = {}
    results: dict[str, str] = {}
    try:
        with (home / "stderr.log").open("w") as errlog:
            async with stdio_client(StdioServerParameters(command=mcp_bin, env=env), errlog=errlog) as streams, \
                    ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                for _ in range(reps):
                    # back to the launcher with Settings stopped; not `artemis-sim reset`, which wipes the
                    # phone (and so mobilecli's pushed dex and server) like a factory reset would
                    _adb(adb, adb_port, "shell", f"am force-stop {SETTINGS}; input keyevent KEYCODE_HOME", serial=serial)
                    for name, args in _round(serial):
                        t0 = time.perf_counter()
                        res = await session.call_tool(name, args)
                        times.setdefault(name, []).append((time.perf_counter() - t0) * 1000)
                        results.setdefault(name, _summary(res))
    finally:
        robot_cleanup(robot, home, serial, adb, adb_port)
    return {"median_ms": {k: round(statistics.median(v), 1) for k, v in times.items()}, "result": results}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--latency", default="off", help="the served sim's device-latency profile (off, pixel, …)")
    ap.add_argument("--sim-python", default=sys.executable, help="interpreter that runs `artemis sim serve`")
    ap.add_argument("--robots", default="default,legacy")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    adb, node, mcp_bin = shutil.which("adb"), shutil.which("node"), os.environ.get("ARTEMIS_MOBILE_MCP", "")
    if adb is None or node is None or not os.access(mcp_bin, os.X_OK):
        print("needs adb, node and ARTEMIS_MOBILE_MCP (the mcp-server-mobile bin .ci/run installs)", file=sys.stderr)
        return 2
    from benchmarks.device_latency import served

    adb_port = _free_port()
    _adb(adb, adb_port, "start-server")
    cwd = str(Path(a.sim_python).parents[2]) if a.sim_python != sys.executable else None  # …/.venv/bin/python
    report: dict[str, Any] = {"reps": a.reps, "latency": a.latency, "sim_python": a.sim_python, "robots": {}}
    serial = ""
    try:
        with served(adb, adb_port, a.latency, 0, a.sim_python, cwd) as serial:
            for robot in a.robots.split(","):
                report["robots"][robot] = asyncio.run(_robot(mcp_bin, robot, serial, adb, adb_port, a.reps))
    finally:
        _adb(adb, adb_port, "kill-server")
    if a.json:
        print(json.dumps(report, indent=2))
        return 0
    robots = list(report["robots"])
    print(f"mobile-mcp tools on `artemis sim serve` (latency {a.latency}), median of {a.reps} calls each")
    print(f"{'tool':40} " + " ".join(f"{r + ' ms':>12}" for r in robots) + "  result (" + " | ".join(robots) + ")")
    for name, _ in _round(serial):
        cells = [report["robots"][r]["median_ms"].get(name) for r in robots]
        results = [report["robots"][r]["result"].get(name, "-") for r in robots]
        print(f"{name:40} " + " ".join(f"{c if c is not None else '-':>12}" for c in cells) + "  "
              + " | ".join(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
