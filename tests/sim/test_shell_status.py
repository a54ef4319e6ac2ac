"""The sim shell as a shell: exit statuses, `$?`, stderr apart from stdout, redirections, `exit`,
`sh -c`, what reads stdin; `am start` errors as Android prints them; the power keys; reboot."""

from __future__ import annotations

import pytest

from artemis_cli.sim import SimPhone
from artemis_cli.sim.shell import tokenize


@pytest.mark.parametrize(("cmd", "code"), [
    ("false", 1), ("true", 0), ("frobnicate", 127), ("cat /nonexistent", 1), ("exit 3", 3), ("exit 256", 0),
    ("ls /nope", 1), ("grep x /nope", 2), ("echo x | grep y", 1), ("false | true", 0), ("true | false", 1),
    ("sh -c 'exit 4'", 4), ("settings get bogus x", 1), ("am start -n com.example/.Nope", 0),
])
def test_exit_status(phone: SimPhone, cmd: str, code: int) -> None:
    assert phone.run(cmd).exit_code == code


def test_status_variable_and_exit_stops_the_script(phone: SimPhone) -> None:
    assert phone.shell("false; echo $?; true; echo $?") == "1\n0\n"
    assert phone.shell("frob; echo \"st=$?\"; echo '$?'") == (
        "/system/bin/sh: frob: inaccessible or not found\nst=127\n$?\n")
    r = phone.run("echo a; exit 5; echo b")
    assert (r.stdout, r.exit_code, r.exited) == (b"a\n", 5, True)
    assert phone.run("sh -c 'exit 2'; echo $?").stdout == b"2\n"  # a subshell's exit ends only it
    assert phone.run("exit nope").exit_code == 1


def test_stdout_and_stderr_are_kept_apart_and_in_order(phone: SimPhone) -> None:
    phone.write_file("/sdcard/a.txt", b"A\n")
    r = phone.run("cat /sdcard/a.txt /nope /sdcard/a.txt")
    assert (r.stdout, r.stderr) == (b"A\nA\n", b"cat: /nope: No such file or directory\n")
    assert r.output == b"A\ncat: /nope: No such file or directory\nA\n"  # as a pty shows them
    r = phone.run("echo out; frob")
    assert (r.stdout, r.stderr, r.exit_code) == (b"out\n", b"/system/bin/sh: frob: inaccessible or not found\n", 127)


def test_redirections(phone: SimPhone) -> None:
    assert phone.run("cat /nope 2>/dev/null").output == b""
    r = phone.run("cat /nope 2>&1")
    assert (r.stdout, r.stderr) == (b"cat: /nope: No such file or directory\n", b"")
    r = phone.run("echo e >&2")
    assert (r.stdout, r.stderr) == (b"", b"e\n")
    assert phone.shell("cat /nope 2>&1 | grep -c such") == "1\n"
    assert phone.shell("cat /nope 2>/sdcard/err.txt; cat /sdcard/err.txt") == "cat: /nope: No such file or directory\n"
    assert phone.shell("echo hi > /sdcard/in.txt; cat < /sdcard/in.txt; wc -l < /sdcard/in.txt") == "hi\n1\n"
    assert phone.run("cat < /nope").exit_code == 1
    assert phone.run("echo x >").exit_code == 1
    assert [str(t) for t in tokenize("a 2>&1 b 2>/x >&2 '2'>y")] == ["a", "2>&1", "b", "2>", "/x", ">&2", "2", ">", "y"]


def test_what_reads_stdin(phone: SimPhone) -> None:
    sh = phone.sh
    assert sh.reads_stdin("cat") and sh.reads_stdin("grep x") and sh.reads_stdin("true; wc -l")
    assert sh.reads_stdin("head -n 3") and sh.reads_stdin("sh") and sh.reads_stdin("cat -")
    for cmd in ("cat /x", "echo x | cat", "grep x /f", "head -n 3 /f", "sh -c 'cat'", "cat < /x", "false", "ls"):
        assert not sh.reads_stdin(cmd), cmd
    assert phone.sh.run("cat; cat", stdin=b"once\n").stdout == b"once\n"  # the first reader takes it
    assert phone.sh.run("grep -c b", stdin=b"a\nb\nb\n").stdout == b"2\n"
    assert phone.sh.run("sh", stdin=b"echo from-stdin; exit 6").exit_code == 6


def test_am_start_checks_the_activity_and_reports_like_android(phone: SimPhone) -> None:
    r = phone.run("am start -n com.android.settings/.Nope")
    assert r.exit_code == 0 and phone.current_app() == "com.android.launcher3"
    assert r.stderr == (b"Error type 3\nError: Activity class {com.android.settings/com.android.settings.Nope} "
                        b"does not exist.\n")
    r = phone.run("am start -W -n com.example/.Nope")  # -W: the error goes to stdout
    assert r.stderr == b"" and b"Error type 3" in r.stdout
    for comp in ("com.android.settings/.Settings", "com.android.settings/com.android.settings.Settings",
                 "com.android.deskclock/.DeskClock", "com.artemis.shop/.MainActivity"):
        assert phone.run(f"am start -n {comp}").stderr == b"", comp
    assert phone.current_app() == "com.artemis.shop"
    r = phone.run("am start -a android.intent.action.VIEW")
    assert r.exit_code == 0 and r.stderr.startswith(b"Error: Activity not started, unable to resolve Intent")
    r = phone.run("am start -n com.android.settings")
    assert r.exit_code == 255 and b"Bad component name" in r.stderr
    assert phone.run("am start -S -n com.artemis.notes/.MainActivity").stdout.startswith(b"Stopping: com.artemis.notes\n")


def test_power_keys_and_what_a_dark_screen_does(phone: SimPhone) -> None:
    lit = phone.screenshot()
    phone.shell("input keyevent KEYCODE_POWER")
    assert phone.screen_on is False and "mHoldingDisplaySuspendBlocker=false" in phone.shell("dumpsys power")
    assert "mScreenState=OFF" in phone.shell("dumpsys display")
    dark = phone.render_image().convert("L")
    assert dark.getextrema() == (0, 0) and phone.screenshot() != lit
    actions = phone.actions
    phone.shell("input tap 135 476; input text hi; input keyevent BACK")
    assert phone.current_app() == "com.android.launcher3" and phone.actions == actions
    assert phone.snapshot_state()["ignored_inputs"][-1] == "key back: the screen is off"
    phone.shell("input keyevent SLEEP")
    assert phone.screen_on is False
    phone.shell("input keyevent 224")  # WAKEUP
    assert phone.screen_on and phone.screenshot() == lit
    assert "Display Power: state=ON" in phone.shell("dumpsys power")


def test_reboot_in_process_keeps_data_and_resets_apps(phone: SimPhone) -> None:
    phone.shell("settings put system screen_brightness 51; echo kept > /sdcard/keep.txt")
    phone.shell("monkey -p com.artemis.notes 1; input tap 868 2118; input tap 540 379; input text draft")
    assert phone.apps["com.artemis.notes"].ui_state.fields.get("title") == "draft"  # the editor is open
    phone.shell("input keyevent POWER")
    assert phone.run("reboot").exit_code == 0
    state = phone.snapshot_state()
    assert (state["foreground"], state["screen_on"], state["boots"]) == ("com.android.launcher3", True, 2)
    assert state["settings"]["system"]["screen_brightness"] == "51" and "/sdcard/keep.txt" in state["files"]
    assert state["apps"]["com.artemis.notes"]["ui"]["screen"] == "list"
    assert state["apps"]["com.artemis.notes"]["fields"].get("title", "") == ""
    assert len(state["apps"]["com.artemis.notes"]["ui"]["notes"]) == 3  # app data was kept


def test_redirections_apply_left_to_right_as_sh_does(phone: SimPhone) -> None:
    # `>/dev/null 2>&1` silences both streams; `2>&1 >/dev/null` sends stderr to the terminal
    r = phone.run("ls /nope >/dev/null 2>&1")
    assert (r.stdout, r.stderr, r.exit_code) == (b"", b"", 1)
    r = phone.run("ls /nope 2>&1 >/dev/null")
    assert (r.stdout, r.stderr) == (b"ls: /nope: No such file or directory\n", b"")
    phone.run("ls / /nope > /data/local/tmp/both 2>&1")
    both = phone.shell("cat /data/local/tmp/both")
    assert "No such file or directory" in both and "sdcard" in both


def test_a_background_job_and_nohup_as_mobilecli_starts_its_agent(phone: SimPhone) -> None:
    # mobilecli: `CLASSPATH=… nohup app_process / Server >/dev/null 2>&1 &`: the shell reports the
    # job started ($? 0) and the missing app_process's error goes where the redirection says
    r = phone.run("CLASSPATH=/data/local/tmp/x.dex nohup app_process / Server >/dev/null 2>&1 &")
    assert (r.stdout, r.stderr, r.exit_code) == (b"", b"", 0)
    assert phone.shell("frob & echo $?").endswith("0\n")
    assert phone.run("nohup echo hi").stdout == b"hi\n"
    assert phone.run("frob; echo $?").stdout == b"127\n"  # `;` still reports the status
