"""`artemis mcp` beside mobile-mcp's legacy robot on one served phone: each call's median time,
the ratio, and where artemis's time goes.

    ARTEMIS_MOBILE_MCP=~/.cache/artemis-ci/mobile-mcp-1.0.4/node_modules/.bin/mcp-server-mobile \\
        python benchmarks/mcp_calls.py [--reps 5] [--flows 2] [--latency pixel]
        [--artemis-python /path/to/other/.venv/bin/python] [--json]

Starts a private adb server on a free port (never 5037) and one ``artemis sim serve --latency
pixel --no-popups`` (``benchmarks.device_latency.served``), ``adb connect``-ed to it. Then, one
after the other on that phone, ``artemis mcp --device SERIAL --backend adb`` and mobile-mcp with
its legacy robot (``MOBILEMCP_LEGACY_ROBOT=1``; ``$ARTEMIS_MOBILE_MCP`` names the binary,
``benchmarks.mobile_mcp_robots``), each over stdio through the official MCP SDK client.

Each round starts from a reset phone with Contacts in front (not timed) and times, with what the
client gets back being the screen after the action on both sides:

===============  ========================================  ==========================================
call             artemis mcp                               mobile-mcp (legacy robot)
===============  ========================================  ==========================================
observe          ``observe`` after an observe, on a        ``mobile_list_elements_on_screen``
                 screen changed through adb since
tap              ``tap(index)`` Create contact             click at its centre + list
tap_field        ``tap(index)`` the First name field       click + list
type             ``type_text("Sofia")`` (focused field)    ``mobile_type_keys`` + list
back             ``press_key(back)``                       ``mobile_press_button(BACK)`` + list
observe_again    ``observe`` right after back's answer     list
observe_changed  ``observe`` right after an action's       list
                 answer, the screen changed through adb
                 since (a screenshot, then a full look)
flow             launch Contacts, tap Create contact, type first and last name (by element), tap Save,
                 back: each step answered with the screen after it (mobile-mcp: each action + list)
===============  ========================================  ==========================================

Artemis's split comes from inside its server process: the server runs under this file's
``--timed-server`` mode, which wraps the device in ``device_latency.TimedDevice`` and a few stages
(``plan``: planning and the staleness check, ``perceive``: parsing the dump, indexing and hashing
screenshots, ``judge``: the outcome, ``record``: writing the step, ``render``: the answer and its
marked screenshot) and writes one line per call (name, start, ms) to a file. A call's split is what
ran between the client sending it and the answer arriving: per device method the calls and their
summed ms, ``device``: the time any device call was running (they overlap in an observation), and
``other``: the wall time outside every timed interval (MCP transport, the rest of the server).
Medians over ``--reps`` rounds (``--flows`` for the flow). ``--artemis-python``: serve
``artemis mcp`` with another checkout's interpreter (e.g. old main's venv) for a before/after; the
sim and mobile-mcp are the same. Prints figures, asserts nothing; exits 2 without adb, node or
mobile-mcp.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

if __name__ == "__main__" and sys.argv[1:2] == ["--timed-server"]:
    # the server side: runs under whichever interpreter serves `artemis mcp` (its own checkout's
    # artemis_cli, imported before this directory's modules can put another on the path)
    import artemis_cli  # noqa: F401

    sys.path.insert(0, str(HERE))

import argparse  # noqa: E402
import asyncio  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from typing import Any  # noqa: E402

ROOT = HERE.parent

CONTACTS, SETTINGS = "com.android.contacts", "com.android.settings"
CALLS = ("observe", "tap", "tap_field", "type", "back", "observe_again", "observe_changed")
#: the stages timed inside the server besides the device calls: name -> (module, attribute)
STAGES: dict[str, list[tuple[str, str]]] = {
    "plan": [("artemis_cli.mcp_server.session", "plan_action")],
    "perceive": [("artemis_cli.operators.observe", "parse_hierarchy"), ("artemis_cli.operators.observe", "index_screen"),
                 ("artemis_cli.operators.observe", "dhash_hex")],
    "judge": [("artemis_cli.operators.perform", "assess")],
    "record": [("artemis_cli.operators.recording", "StepWriter.write")],
    "render": [("artemis_cli.mcp_server.server", "ArtemisMcp._view_result"),
               ("artemis_cli.mcp_server.server", "ArtemisMcp._step_result")],
}


# -- the server side -----------------------------------------------------------------------------

class _Lines(list):  # type: ignore[type-arg]
    """TimedDevice's log, each entry also written as a JSON line (the benchmark reads it live)."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self.out = open(path, "a", buffering=1)  # noqa: SIM115 - open for the process's life
        self.lock = threading.Lock()

    def append(self, item: Any) -> None:
        with self.lock:
            self.out.write(json.dumps(list(item)) + "\n")


def _timed_stage(log: _Lines, label: str, fn: Any) -> Any:
    def timed(*args: Any, **kwargs: Any) -> Any:
        t0, wall = time.perf_counter(), time.time()
        try:
            return fn(*args, **kwargs)
        finally:
            log.append((label, wall, (time.perf_counter() - t0) * 1000))

    return timed


def timed_server(log_path: str, argv: list[str]) -> None:
    """``artemis mcp ARGV`` with its device and stages timed into ``log_path``."""
    from device_latency import TimedDevice

    import artemis_cli.device.select as select

    log = _Lines(log_path)
    for label, places in STAGES.items():
        for module_name, attr in places:
            module = importlib.import_module(module_name)
            owner, name = (getattr(module, attr.split(".")[0]), attr.split(".")[1]) if "." in attr else (module, attr)
            setattr(owner, name, _timed_stage(log, label, getattr(owner, name)))
    resolve = select.resolve_device

    def resolve_timed(*args: Any, **kwargs: Any) -> Any:
        timed = TimedDevice(resolve(*args, **kwargs))
        timed.log = log  # type: ignore[assignment]
        return timed

    select.resolve_device = resolve_timed  # type: ignore[assignment]
    from artemis_cli.cli.app import main

    sys.argv = ["artemis", *argv]
    main()


# -- the client side -----------------------------------------------------------------------------

def _index(listing: str, label: str, cls: str | None = None) -> int:
    """The index of the artemis element-list line labelled (or hinted) ``label``."""
    for m in re.finditer(r'^\[(\d+)\] (\S+) (?:"([^"]*)"|hint="([^"]*)")', listing, re.M):
        if label in (m.group(3), m.group(4)) and (cls is None or m.group(2) == cls):
            return int(m.group(1))
    raise SystemExit(f"artemis lists no {label!r}:\n{listing}")


def _centre(body: str, label: str) -> tuple[int, int]:
    """The centre of the element mobile-mcp lists as ``label`` (text, label or id)."""
    items: list[dict[str, Any]] = json.loads(body[body.index("["):body.rindex("]") + 1])
    while items:
        el = items.pop(0)
        items[:0] = el.get("children") or []
        if label in (el.get("text"), el.get("label"), (el.get("identifier") or "").rsplit("/", 1)[-1]):
            r = el["coordinates"]
            return r["x"] + r["width"] // 2, r["y"] + r["height"] // 2
    raise SystemExit(f"mobile-mcp lists no {label!r}: {body[:300]}")


def _text(res: Any) -> str:
    body = " ".join(c.text for c in res.content if c.type == "text")
    if res.is_error:
        raise SystemExit(f"tool error: {body[:300]}")
    return body


class Phone:
    """The served phone through the private adb server (set-up between timed calls)."""

    def __init__(self, adb: str, port: int, serial: str) -> None:
        self.adb, self.port, self.serial = adb, port, serial

    def shell(self, cmd: str) -> None:
        from benchmarks.mobile_mcp_robots import _adb

        _adb(self.adb, self.port, "shell", cmd, serial=self.serial)

    def fresh(self, contacts: bool) -> None:
        """A reset phone (seeded world), Contacts in front when ``contacts``."""
        self.shell("artemis-sim reset --world default --seed 0 --no-popups")
        if contacts:
            self.shell(f"monkey -p {CONTACTS} -c android.intent.category.LAUNCHER 1")


class Timer:
    def __init__(self) -> None:
        self.windows: dict[str, list[tuple[float, float]]] = defaultdict(list)

    async def __call__(self, label: str, coro: Any) -> Any:
        t0 = time.time()
        out = await coro
        self.windows[label].append((t0, time.time()))
        return out


async def _artemis(cmd: list[str], env: dict[str, str], cwd: str | None, phone: Phone, reps: int, flows: int
                   ) -> Timer:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    timer = Timer()
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env, cwd=cwd)
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as streams, ClientSession(streams[0], streams[1]) as s:
            await s.initialize()

            async def call(label: str | None, name: str, **args: Any) -> str:
                coro = s.call_tool(name, args)
                return _text(await (timer(label, coro) if label else coro))

            await call(None, "observe")  # starts the session (not timed)
            for _ in range(reps):
                phone.fresh(contacts=True)
                listing = await call("observe", "observe")
                form = await call("tap", "tap", index=_index(listing, "Create contact", "ImageButton"))
                await call("tap_field", "tap", index=_index(form, "First name"))
                await call("type", "type_text", text="Sofia")
                await call("back", "press_key", key="back")
                await call("observe_again", "observe")
                await call(None, "press_key", key="back")  # an action's answer (not timed)…
                phone.shell(f"monkey -p {SETTINGS} -c android.intent.category.LAUNCHER 1")  # …then a change
                await call("observe_changed", "observe")
            for _ in range(flows):
                phone.fresh(contacts=False)
                await call(None, "observe")  # the client sees the home screen (not timed)
                t0 = time.time()
                listing = await call(None, "launch_app", app="Contacts")
                form = await call(None, "tap", index=_index(listing, "Create contact", "ImageButton"))
                form = await call(None, "type_text", index=_index(form, "First name"), text="Sofia")
                form = await call(None, "type_text", index=_index(form, "Last name"), text="Ortega")
                await call(None, "tap", index=_index(form, "Save"))
                await call(None, "press_key", key="back")
                timer.windows["flow"].append((t0, time.time()))
    return timer


async def _mobile(mcp_bin: str, env: dict[str, str], phone: Phone, reps: int, flows: int) -> Timer:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    timer = Timer()
    d = {"device": phone.serial}
    as_json = {**d, "format": "json"}
    with open(os.devnull, "w") as errlog:
        async with stdio_client(StdioServerParameters(command=mcp_bin, env=env), errlog=errlog) as streams, \
                ClientSession(streams[0], streams[1]) as s:
            await s.initialize()

            async def act_list(name: str, **args: Any) -> str:
                _text(await s.call_tool(name, {**d, **args}))
                return _text(await s.call_tool("mobile_list_elements_on_screen", as_json))

            async def click(body: str, label: str) -> str:
                x, y = _centre(body, label)
                return await act_list("mobile_click_on_screen_at_coordinates", x=x, y=y)

            async def listed() -> str:
                return _text(await s.call_tool("mobile_list_elements_on_screen", as_json))

            await listed()
            for _ in range(reps):
                phone.fresh(contacts=True)
                listing = await timer("observe", listed())
                form = await timer("tap", click(listing, "Create contact"))
                await timer("tap_field", click(form, "first_name"))
                await timer("type", act_list("mobile_type_keys", text="Sofia", submit=False))
                await timer("back", act_list("mobile_press_button", button="BACK"))
                await timer("observe_again", listed())
                await act_list("mobile_press_button", button="BACK")
                phone.shell(f"monkey -p {SETTINGS} -c android.intent.category.LAUNCHER 1")
                await timer("observe_changed", listed())
            for _ in range(flows):
                phone.fresh(contacts=False)
                await listed()
                t0 = time.time()
                listing = await act_list("mobile_launch_app", packageName=CONTACTS)
                form = await click(listing, "Create contact")
                await click(form, "first_name")
                form = await act_list("mobile_type_keys", text="Sofia", submit=False)
                await click(form, "last_name")
                form = await act_list("mobile_type_keys", text="Ortega", submit=False)
                await click(form, "Save")
                await act_list("mobile_press_button", button="BACK")
                timer.windows["flow"].append((t0, time.time()))
    return timer


def _union_ms(spans: list[tuple[float, float]]) -> float:
    total, end = 0.0, float("-inf")
    for a, b in sorted(spans):
        if b > end:
            total += b - max(a, end)
            end = b
    return total * 1000


def split(window: tuple[float, float], log: list[tuple[str, float, float]]) -> dict[str, float]:
    """What ran inside the server during ``window``: per device method or stage its calls' summed ms
    (and ``N×name`` counts), ``device`` (any device call running) and ``other`` (nothing timed)."""
    t0, t1 = window
    inside = [(name, at, ms) for name, at, ms in log if t0 <= at <= t1]
    out: dict[str, float] = defaultdict(float)
    for name, _, ms in inside:
        out[name] += ms
        out[f"n_{name}"] += 1
    spans = [(at, at + ms / 1000) for _, at, ms in inside]
    out["device"] = _union_ms([(at, at + ms / 1000) for name, at, ms in inside if name not in STAGES])
    out["other"] = (t1 - t0) * 1000 - _union_ms(spans)
    return dict(out)


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--flows", type=int, default=2)
    ap.add_argument("--latency", default="pixel")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--artemis-python", default=sys.executable, help="interpreter that serves `artemis mcp`")
    ap.add_argument("--no-mobile", action="store_true", help="artemis mcp only")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    adb, node, mcp_bin = shutil.which("adb"), shutil.which("node"), os.environ.get("ARTEMIS_MOBILE_MCP", "")
    if adb is None or (not a.no_mobile and (node is None or not os.access(mcp_bin, os.X_OK))):
        print("needs adb, node and ARTEMIS_MOBILE_MCP (the mcp-server-mobile bin .ci/run installs)", file=sys.stderr)
        return 2
    sys.path.insert(0, str(ROOT))
    from benchmarks.device_latency import served
    from benchmarks.mobile_mcp_robots import _adb, _free_port, robot_cleanup, robot_env

    adb_port = _free_port()
    _adb(adb, adb_port, "start-server")
    other = a.artemis_python != sys.executable
    cwd = str(Path(a.artemis_python).parents[2]) if other else None  # …/.venv/bin/python
    report: dict[str, Any] = {"reps": a.reps, "flows": a.flows, "latency": a.latency,
                              "artemis_python": a.artemis_python, "uptime": _uptime()}
    with tempfile.TemporaryDirectory(prefix="artemis-mcp-calls-") as tmp:
        log_path = Path(tmp) / "device.jsonl"
        log_path.touch()
        try:
            with served(adb, adb_port, a.latency, a.seed) as serial:
                phone = Phone(adb, adb_port, serial)
                env = {k: v for k, v in os.environ.items() if not k.startswith("ANDROID_")}
                env |= {"ANDROID_ADB_SERVER_PORT": str(adb_port), "ARTEMIS_HOME": str(Path(tmp) / "home")}
                cmd = [a.artemis_python, str(HERE / "mcp_calls.py"), "--timed-server", str(log_path), "mcp",
                       "--device", serial, "--backend", "adb", "--data-dir", str(Path(tmp) / "data")]
                artemis = asyncio.run(_artemis(cmd, env, cwd, phone, a.reps, a.flows))
                mobile: Timer | None = None
                if not a.no_mobile:
                    home = Path(tempfile.mkdtemp(prefix="artemis-mcp-calls-legacy-"))
                    try:
                        mobile = asyncio.run(_mobile(mcp_bin, robot_env("legacy", home, adb, adb_port), phone,
                                                     a.reps, a.flows))
                    finally:
                        robot_cleanup("legacy", home, serial, adb, adb_port)
        finally:
            _adb(adb, adb_port, "kill-server")
        log = [tuple(json.loads(line)) for line in log_path.read_text().splitlines() if line.strip()]
    report["uptime_after"] = _uptime()
    rows: dict[str, Any] = {}
    for label in (*CALLS, "flow"):
        mine = [(b - t) * 1000 for t, b in artemis.windows[label]]
        theirs = [(b - t) * 1000 for t, b in mobile.windows[label]] if mobile else []
        parts: dict[str, list[float]] = defaultdict(list)
        for w in artemis.windows[label]:
            for k, v in split(w, log).items():  # type: ignore[arg-type]
                parts[k].append(v)
        n = len(artemis.windows[label])
        row = {"artemis_ms": _median(mine), "mobile_mcp_ms": _median(theirs) if theirs else None,
               "split_ms": {k: round(sum(v) / n, 1) if k.startswith("n_") else _median(v + [0.0] * (n - len(v)))
                            for k, v in sorted(parts.items())}}
        row["ratio"] = round(row["artemis_ms"] / row["mobile_mcp_ms"], 2) if row["mobile_mcp_ms"] else None
        rows[label] = row
    report["calls"] = rows
    if a.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"artemis mcp vs mobile-mcp (legacy robot) on `artemis sim serve --latency {a.latency}`, medians of "
          f"{a.reps} (flow: {a.flows}); artemis: {a.artemis_python}")
    print(f"uptime before: {report['uptime']}\nuptime after:  {report['uptime_after']}")
    print(f"{'call':14} {'artemis ms':>11} {'mobile ms':>10} {'ratio':>6}  artemis split (median ms; N× = calls per call)")
    for label, row in rows.items():
        sp = row["split_ms"]
        names = [k for k in sp if not k.startswith("n_") and k not in ("device", "other")]
        cells = [f"{sp.get('n_' + k, 0):g}×{k} {sp[k]:.0f}" for k in names]
        print(f"{label:16} {row['artemis_ms']:>11} {row['mobile_mcp_ms'] or '-':>10} {row['ratio'] or '-':>6}  "
              f"device {sp.get('device', 0):.0f} | other {sp.get('other', 0):.0f} | " + ", ".join(cells))
    return 0


def _uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "?"


if __name__ == "__main__":
    if sys.argv[1:2] == ["--timed-server"]:
        timed_server(sys.argv[2], sys.argv[3:])
    else:
        raise SystemExit(main())
