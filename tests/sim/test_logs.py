"""Processes, the log buffers, logcat and the crash / ANR faults on the in-process sim."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterator

import pytest

from artemis_cli.sim.faults import FaultInjector, parse_faults
from artemis_cli.sim.logbuf import LogEntry
from artemis_cli.sim.phone import SimPhone

THREADTIME = re.compile(r"^\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} +\d+ +\d+ [VDIWEF] .{8,}?: ")
SETTINGS = "com.android.settings"


def _phone(**kw: object) -> SimPhone:
    return SimPhone(popups=False, **kw)  # type: ignore[arg-type]


def test_pidof_and_ps_follow_the_process_lifecycle() -> None:
    p = _phone(seed=5)
    res = p.run(f"pidof {SETTINGS}")
    assert (res.stdout, res.exit_code) == (b"", 1)  # not running: no output, exit 1
    p.run(f"am start -n {SETTINGS}/.Settings")
    pid = int(p.run(f"pidof {SETTINGS}").stdout)
    assert pid >= 2000
    ps = p.shell("ps -A").splitlines()
    assert ps[0].split() == ["USER", "PID", "PPID", "VSZ", "RSS", "WCHAN", "ADDR", "S", "NAME"]
    row = next(line.split() for line in ps if line.endswith(" " + SETTINGS))
    assert len(row) == 9 and int(row[1]) == pid and row[0] == "system"  # Settings runs as uid 1000
    for name in ("system_server", "com.android.systemui", "com.android.launcher3"):
        assert any(line.endswith(" " + name) for line in ps), name
    assert p.shell("ps -A -o PID,NAME").splitlines()[0].split() == ["PID", "NAME"]
    assert p.shell(f"ps -p {pid}").splitlines()[1].split()[-1] == SETTINGS
    p.run(f"am force-stop {SETTINGS}")
    assert p.run(f"pidof {SETTINGS}").exit_code == 1
    p.run(f"monkey -p {SETTINGS} 1")
    assert int(p.run(f"pidof {SETTINGS}").stdout) > pid  # a relaunch is a new, higher pid


def test_pids_and_log_are_deterministic_from_the_seed() -> None:
    def run(seed: int) -> tuple[str, str]:
        p = _phone(seed=seed)
        p.launch(SETTINGS)
        p.swipe(540, 1600, 540, 700)
        return p.shell(f"pidof {SETTINGS}"), p.shell("logcat -d")
    assert run(3) == run(3)
    assert run(3)[0] != run(4)[0]


def test_logcat_threadtime_lines_dividers_and_launch_lines() -> None:
    p = _phone(seed=1)
    p.launch(SETTINGS)
    pid = p.shell(f"pidof {SETTINGS}").strip()
    log = p.shell("logcat -d")
    lines = log.splitlines()
    assert lines[0] == "--------- beginning of main"
    assert "--------- beginning of system" in lines
    body = [ln for ln in lines if not ln.startswith("---------")]
    assert body and all(THREADTIME.match(ln) for ln in body), body[:3]
    assert re.search(rf"I ActivityManager: Start proc {pid}:{SETTINGS}/1000 for top-activity \{{", log)
    assert "I ActivityTaskManager: START u0 {" in log and "from uid 2000" in log
    # times are in order and come from the virtual clock (the day `date` reports)
    assert lines[1][:5] == p.shell("date +%m-%d").strip() or lines[1][:5] == "06-03"
    stamps = [ln[:18] for ln in body]
    assert stamps == sorted(stamps)


def test_logcat_formats_buffers_tail_and_filters() -> None:
    p = _phone(seed=2)
    p.launch(SETTINGS)
    assert re.match(r"^[VDIWEF]/.{8,}\( *\d+\): ", p.shell("logcat -d -v brief").splitlines()[1])
    assert re.match(r"^\d{10}\.\d{3} +\d+ +\d+ [VDIWEF] ", p.shell("logcat -d -v epoch").splitlines()[1])
    assert re.match(r"^\d{4}-\d\d-\d\d ", p.shell("logcat -d -v threadtime -v year").splitlines()[1])
    raw = p.shell("logcat -d -b system -v raw").splitlines()
    assert "System now ready" in raw
    assert re.match(r"^\[ \d\d-\d\d [\d:.]+ +\d+: *\d+ [VDIWEF]/", p.shell("logcat -d -v long").splitlines()[1])
    assert p.shell("logcat -d -b crash") == ""  # nothing crashed: not even the divider
    assert len([ln for ln in p.shell("logcat -t 3").splitlines() if not ln.startswith("---")]) == 3
    only = p.shell("logcat -d -s ActivityTaskManager").splitlines()
    assert only and all("ActivityTaskManager" in ln for ln in only if not ln.startswith("---"))
    assert all(" I " not in ln for ln in p.shell("logcat -d *:W").splitlines())
    zpid = p.shell("pidof zygote64").strip()
    assert all(f" {zpid} " in ln for ln in p.shell(f"logcat -d --pid={zpid}").splitlines()
               if not ln.startswith("---"))
    events = p.shell("logcat -d -b events")
    assert "beginning of events" in events and "am_proc_start" in events
    # -t TIME / -T TIME: only the lines at or after it
    lines = [ln for ln in p.shell("logcat -d").splitlines() if not ln.startswith("---")]
    mid = lines[len(lines) // 2]
    since = p.shell(f"logcat -d -t '{mid[:18]}'")
    assert mid in since and lines[0] not in since
    assert "ring buffer is 256 KiB" in p.shell("logcat -g")
    res = p.run("logcat -d -b nosuch")
    assert res.exit_code != 0 and b"nosuch" in res.stderr
    assert p.run("logcat -d -v fancy").exit_code != 0
    p.run("logcat -c")
    assert p.shell("logcat -d") == ""


def test_log_buffer_is_a_bounded_ring() -> None:
    p = _phone()
    for _ in range(4000):
        p.logs.write("main", "I", "Chatty", "x" * 200, 1234)
    assert p.logs.sizes["main"] <= p.logs.capacity
    assert len(p.logs.bufs["main"]) < 4000


def _crashy(seed: int = 0) -> SimPhone:
    p = _phone(seed=seed, faults="crash:1")
    return p


def test_crash_fault_logs_fatal_exception_kills_the_app_and_shows_the_dialog() -> None:
    p = _crashy()
    p.launch(SETTINGS)  # the launch is an action in Settings: it crashes at once (P=1)
    crash = p.shell("logcat -d -b crash")
    lines = crash.splitlines()
    assert lines[0] == "--------- beginning of crash"
    assert re.search(r" E AndroidRuntime: FATAL EXCEPTION: main$", lines[1])
    m = re.search(rf"E AndroidRuntime: Process: {SETTINGS}, PID: (\d+)$", lines[2])
    assert m
    pid = m.group(1)
    assert re.search(r"E AndroidRuntime: java\.lang\.\w+Exception: ", lines[3])
    assert "E AndroidRuntime: \tat " in lines[4]
    assert all(f" {pid}  {pid} E AndroidRuntime: " in ln or f"{pid} {pid} E" in ln.replace("  ", " ")
               for ln in lines[1:])
    system = p.shell("logcat -d -b system")
    assert f"Force finishing activity {SETTINGS}/" in system
    assert f"Process {SETTINGS} (pid {pid}) has died" in system
    assert p.run(f"pidof {SETTINGS}").exit_code == 1
    assert p.current_package() == "com.android.launcher3"
    xml = p.dump_xml()
    assert 'text="Settings keeps stopping"' in xml
    assert 'resource-id="android:id/aerr_close"' in xml and 'resource-id="android:id/aerr_app_info"' in xml
    assert re.search(r'<node [^>]*package="android"', xml)


def _tap_rid(p: SimPhone, rid: str) -> None:
    for win in p.windows():
        for w in win.root.walk():
            if w.rid == rid:
                b = w.bounds
                p.tap((b[0] + b[2]) // 2, (b[1] + b[3]) // 2)
                return
    raise AssertionError(f"no {rid} on screen")


def test_close_app_dismisses_the_crash_dialog_and_the_app_relaunches_with_a_new_pid() -> None:
    p = _phone(seed=0, faults="crash:0")
    p.launch(SETTINGS)
    first = int(p.shell(f"pidof {SETTINGS}"))
    p.errors.crash(SETTINGS)
    _tap_rid(p, "android:id/aerr_close")
    assert p.errors.current is None and "keeps stopping" not in p.dump_xml()
    p.launch(SETTINGS)
    assert int(p.shell(f"pidof {SETTINGS}")) > first


def test_crash_fault_is_deterministic_and_spares_the_launcher() -> None:
    def crashes(seed: int) -> list[int]:
        p = _phone(seed=seed, faults="crash:0.2")
        at = []
        for i in range(40):
            if p.current_package() != SETTINGS:
                if p.errors.current is not None:
                    _tap_rid(p, "android:id/aerr_close")
                p.launch(SETTINGS)
            p.swipe(540, 1600, 540, 900)
            if p.errors.current is not None:
                at.append(i)
        return at
    assert crashes(7) == crashes(7) and crashes(7)
    home = _phone(faults="crash:1")
    for _ in range(5):
        home.swipe(540, 1600, 540, 900)  # on the launcher: never crashes
    assert home.errors.current is None and home.shell("logcat -d -b crash") == ""


def test_older_fault_specs_keep_their_random_streams() -> None:
    from artemis_cli.sim.faults import _seed_key
    # the seed key of a spec without crash/anr is exactly what it was before they existed
    assert _seed_key(parse_faults("idle_state:0.5")) == (
        "FaultSpec(idle_state=0.5, null_root=0.0, stale_dump=0.0, screencap_fail=0.0, latency_ms=0, drop=0.0, "
        "popup_storm=False)")
    a = FaultInjector(parse_faults("idle_state:0.5"), 3)
    b = FaultInjector(parse_faults("idle_state:0.5,crash:0"), 3)
    assert [a.dump_fault() for _ in range(30)] == [b.dump_fault() for _ in range(30)]


def test_anr_freezes_the_app_until_wait_and_close_app_kills_it() -> None:
    p = _phone(seed=0, faults="anr:1")
    p.launch("com.android.contacts")
    pid = p.shell("pidof com.android.contacts").strip()
    xml = p.dump_xml()
    assert 'text="Contacts isn\'t responding"' in xml or "Contacts isn&apos;t responding" in xml
    assert 'resource-id="android:id/aerr_wait"' in xml
    system = p.shell("logcat -d -b system")
    assert "E ActivityManager: ANR in com.android.contacts (com.android.contacts/" in system
    assert f"E ActivityManager: PID: {pid}" in system
    assert "E ActivityManager: Reason: Input dispatching timed out" in system
    before = p.apps["com.android.contacts"].snapshot()
    p.tap(540, 344)  # outside the dialog: swallowed, the app takes no input
    p.key("back")
    assert p.apps["com.android.contacts"].snapshot() == before and p.errors.current is not None
    p.faults = FaultInjector(parse_faults(""), 0)
    _tap_rid(p, "android:id/aerr_wait")
    assert p.errors.current is None and p.current_package() == "com.android.contacts"
    assert p.shell("pidof com.android.contacts").strip() == pid
    p.errors.anr("com.android.contacts")
    _tap_rid(p, "android:id/aerr_close")
    assert p.run("pidof com.android.contacts").exit_code == 1
    assert p.current_package() == "com.android.launcher3"


@pytest.mark.parametrize("bad", ["crash:2", "anr:x"])
def test_bad_app_fault_values_are_usage_errors(bad: str) -> None:
    from artemis_cli.errors import UsageError
    with pytest.raises(UsageError):
        parse_faults(bad)


def test_am_start_w_reports_a_cold_start_only_when_no_process_runs() -> None:
    p = _phone()
    assert "LaunchState: COLD" in p.shell(f"am start -W -n {SETTINGS}/.Settings")
    assert "LaunchState: HOT" in p.shell(f"am start -W -n {SETTINGS}/.Settings")  # already in front
    p.key("home")
    assert "LaunchState: WARM" in p.shell(f"am start -W -n {SETTINGS}/.Settings")  # running behind
    assert "LaunchState: COLD" in p.shell(f"am start -W -S -n {SETTINGS}/.Settings")  # -S stops it first


class _CountingRing(deque[LogEntry]):
    """A log ring that counts the entries a reader walks over."""

    walked = 0

    def __iter__(self) -> Iterator[LogEntry]:
        for e in super().__iter__():
            _CountingRing.walked += 1
            yield e

    def __reversed__(self) -> Iterator[LogEntry]:
        for e in super().__reversed__():
            _CountingRing.walked += 1
            yield e


def test_logcat_since_a_time_walks_only_the_newer_entries() -> None:
    """``logcat -d -T TIME`` (what each observation's log read asks) prints what the whole ring
    filtered by time prints, and walks only the entries at or after TIME (plus one older entry
    per buffer): a long session's full rings are not scanned on every step."""
    p = _phone(seed=4)
    for _ in range(30):
        p.launch(SETTINGS)
        p.run(f"am force-stop {SETTINGS}")
    logs = p.logs
    buffers = ("main", "system", "crash")
    everything = logs.entries(buffers)
    since = everything[-5].ms
    newer = [e for e in everything if e.ms >= since]
    assert logs.entries(buffers, since) == newer
    for b in buffers:
        logs.bufs[b] = _CountingRing(logs.bufs[b])
    _CountingRing.walked = 0
    stamp = f"{since // 1000}.{since % 1000:03d}"
    text = p.shell(f"logcat -d -v epoch -b main,system,crash -T {stamp}")
    assert [ln for ln in text.splitlines() if not ln.startswith("---")] and len(everything) > 10 * len(newer)
    assert _CountingRing.walked <= len(newer) + len(buffers), (_CountingRing.walked, len(newer))
    assert all(e.msg.splitlines()[0] in text for e in newer)
