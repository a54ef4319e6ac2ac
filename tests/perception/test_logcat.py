"""Crashes and ANRs read from logcat text in Android 14's formats (``logcat -v epoch``, the
threadtime layout: AndroidRuntime's FATAL EXCEPTION block, libc's Fatal signal line,
ActivityManager's ANR report), and the watcher that reads only what is new since its last call."""

from __future__ import annotations

from artemis_cli.perception.logcat import LogEvents, LogWatch, parse_logcat

CRASH = """\
--------- beginning of crash
1733100000.120  4321  4321 E AndroidRuntime: FATAL EXCEPTION: main
1733100000.120  4321  4321 E AndroidRuntime: Process: com.android.deskclock, PID: 4321
1733100000.120  4321  4321 E AndroidRuntime: java.lang.IllegalStateException: Could not execute method for android:onClick
1733100000.120  4321  4321 E AndroidRuntime: \tat androidx.appcompat.app.AppCompatViewInflater$DeclaredOnClickListener.onClick(AppCompatViewInflater.java:468)
1733100000.120  4321  4321 E AndroidRuntime: \tat android.view.View.performClick(View.java:7659)
1733100000.120  4321  4321 E AndroidRuntime: \tat android.view.View.performClickInternal(View.java:7636)
1733100000.120  4321  4321 E AndroidRuntime: \tat android.view.View.-$$Nest$mperformClickInternal(Unknown Source:0)
1733100000.120  4321  4321 E AndroidRuntime: Caused by: java.lang.NullPointerException
"""

ANR = """\
--------- beginning of system
1733100005.500  1500  1532 E ActivityManager: ANR in com.artemis.notes (com.artemis.notes/.NoteListActivity)
1733100005.500  1500  1532 E ActivityManager: PID: 5012
1733100005.500  1500  1532 E ActivityManager: Reason: Input dispatching timed out (ae4f1c2 com.artemis.notes/com.artemis.notes.NoteListActivity (server) is not responding. Waited 5001ms for MotionEvent)
1733100005.500  1500  1532 E ActivityManager: Parent: com.artemis.notes/.NoteListActivity
1733100005.500  1500  1532 E ActivityManager: ErrorId: 0b3a3f6e-61c4-4b5e-9f0e-0c1d0f6a3b2e
1733100005.500  1500  1532 E ActivityManager: Frozen: false
"""

NATIVE = ("1733100009.001  6001  6020 F libc    : Fatal signal 11 (SIGSEGV), code 1 (SEGV_MAPERR), "
          "fault addr 0x0 in tid 6020 (RenderThread), pid 6001 (com.artemis.shop)\n")


def test_a_java_crash_names_its_package_pid_exception_line_and_first_frames() -> None:
    events = parse_logcat(CRASH)
    assert events.problems == [] and events.errors == 0
    [crash] = events.faults
    assert (crash.kind, crash.package, crash.pid, crash.thread) == ("crash", "com.android.deskclock", 4321, "main")
    assert crash.detail == "java.lang.IllegalStateException: Could not execute method for android:onClick"
    assert len(crash.frames) == 3
    assert crash.frames[0].startswith("at androidx.appcompat.app.AppCompatViewInflater")


def test_an_anr_names_its_package_and_reason_and_a_native_crash_its_signal() -> None:
    events = parse_logcat(ANR + NATIVE)
    anr, native = events.faults
    assert (anr.kind, anr.package, anr.pid) == ("anr", "com.artemis.notes", 5012)
    assert anr.detail.startswith("Input dispatching timed out")
    assert (native.kind, native.package, native.pid) == ("crash", "com.artemis.shop", 6001)
    assert native.detail.startswith("Fatal signal 11 (SIGSEGV)")


def test_other_error_lines_are_counted_and_lower_priorities_ignored() -> None:
    text = ("1733100001.000  800  812 E BluetoothAdapter: getState() failed\n"
            "1733100001.001  800  812 W Settings: not an error\n"
            "1733100001.002  900  900 E chatty  : uid=1000 system_server expire 3 lines\n")
    events = parse_logcat(text)
    assert events.faults == [] and events.errors == 2
    assert events.samples == ["BluetoothAdapter: getState() failed", "chatty: uid=1000 system_server expire 3 lines"]


def test_garbled_output_is_a_problem_never_an_exception() -> None:
    junk = "\x00\x1b[31m\ufffd\ufffd binary\n" + CRASH.replace("Process: com.android.deskclock", "Process: ;rm -rf /")
    events = parse_logcat(junk)
    assert events.faults == []  # a crash whose process is not a package name is not believed
    assert events.problems and "unreadable" in events.problems[0]
    assert "\x1b" not in events.problems[0] and "\x00" not in events.problems[0]
    assert parse_logcat("").faults == [] and not parse_logcat("")


def test_device_text_is_bounded_and_one_line() -> None:
    long_line = "java.lang.RuntimeException: " + "x" * 5000 + "\u2028next"
    text = CRASH.replace("java.lang.IllegalStateException: Could not execute method for android:onClick", long_line)
    [crash] = parse_logcat(text).faults
    assert len(crash.detail) <= 301 and "\u2028" not in crash.detail


class FakeLogcat:
    """A phone's logcat buffer answering the commands LogWatch sends (-t 1, -T <time>)."""

    def __init__(self, text: str = "") -> None:
        self.lines = text.splitlines()
        self.commands: list[str] = []

    def __call__(self, command: str) -> str:
        self.commands.append(command)
        lines = [line for line in self.lines if not line.startswith("---")]
        if " -t 1" in command:
            return "\n".join(lines[-1:]) + "\n" if lines else ""
        if " -T " in command:
            since = float(command.split(" -T ", 1)[1].split()[0])
            lines = [line for line in lines if float(line.split()[0]) >= since]  # -T is inclusive
        return "".join(line + "\n" for line in lines if line.split()[3] in "EF")


def test_the_first_read_is_the_baseline_and_later_reads_report_only_new_lines() -> None:
    phone = FakeLogcat(CRASH)
    watch = LogWatch(phone)
    first = watch.read()
    assert first.baseline and first.faults == []  # the crash from before the session is not reported
    assert phone.commands == ["logcat -d -v epoch -b main,system,crash -t 1"]
    assert watch.read().faults == []
    assert phone.commands[-1] == "logcat -d -v epoch -b main,system,crash -T 1733100000.120 '*:E'"
    phone.lines += ANR.splitlines()
    [anr] = watch.read().faults
    assert anr.package == "com.artemis.notes"
    assert watch.read() == LogEvents()  # nothing new: the lines at the last time are not read twice


def test_an_empty_buffer_at_the_baseline_then_reads_everything_new() -> None:
    phone = FakeLogcat()
    watch = LogWatch(phone)
    assert watch.read().baseline
    phone.lines += CRASH.splitlines()
    assert [f.package for f in watch.read().faults] == ["com.android.deskclock"]
    assert phone.commands[-1] == "logcat -d -v epoch -b main,system,crash '*:E'"


def test_a_failing_logcat_is_a_problem_and_the_baseline_waits() -> None:
    calls: list[str] = []

    def missing(command: str) -> str:
        calls.append(command)
        return "/system/bin/sh: logcat: inaccessible or not found\n"

    watch = LogWatch(missing)
    events = watch.read()
    assert not events.baseline and "logcat unreadable" in events.problems[0]

    def broken(command: str) -> str:
        raise OSError("connection reset")

    assert "OSError" in LogWatch(broken).read().problems[0]
    assert watch.command().endswith("-t 1")  # still no baseline: the next read sets it
