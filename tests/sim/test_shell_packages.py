"""The package manager, activity identity and the shell's variables, in process (the wire side is
tests/adbd/test_shell_phone.py)."""

from __future__ import annotations

from artemis_cli.sim import SimPhone
from artemis_cli.sim.shell import tokenize


def _rows(phone: SimPhone, uri: str) -> int:
    out = phone.shell(f"content query --uri {uri}")
    return 0 if out.startswith("No result") else len(out.splitlines())


def test_clear_is_per_app_like_a_phone(phone: SimPhone) -> None:
    alarms = _rows(phone, "content://com.android.deskclock/alarms")
    contacts = _rows(phone, "content://com.android.contacts/contacts")
    phone.shell("content query --uri content://com.artemis.notes/notes")
    assert _rows(phone, "content://com.artemis.notes/notes") > 0
    for pkg in ("com.artemis.notes", "com.android.deskclock", "com.android.contacts", "com.android.settings"):
        assert phone.shell(f"pm clear {pkg}") == "Success\n"
    assert _rows(phone, "content://com.artemis.notes/notes") == 0
    assert _rows(phone, "content://com.android.deskclock/alarms") == alarms  # DeskClock's default alarms
    assert _rows(phone, "content://com.android.contacts/contacts") == contacts  # the provider keeps them


def test_started_activity_is_what_every_command_names(phone: SimPhone) -> None:
    phone.shell("am start -n com.android.settings/.SubSettings")
    assert phone.activity_of("com.android.settings") == "com.android.settings/.SubSettings"
    assert "u0 com.android.settings/com.android.settings.SubSettings}" in phone.shell("dumpsys window")
    assert "topResumedActivity=ActivityRecord{" in phone.shell("dumpsys activity activities")
    assert " com.android.settings/.SubSettings t" in phone.shell("dumpsys activity activities")
    phone.shell("am force-stop com.android.settings")
    assert phone.activity_of("com.android.settings") == "com.android.settings/.Settings"
    assert phone.activity_of("com.android.launcher3") == "com.android.launcher3/.uioverrides.QuickstepLauncher"


def test_disable_user_and_uninstall_for_user_0(phone: SimPhone) -> None:
    assert phone.shell("pm disable-user com.artemis.shop") == "Package com.artemis.shop new state: disabled-user\n"
    assert phone.shell("pm list packages -d") == "package:com.artemis.shop\n"
    launchable = phone.shell("cmd package query-activities --components -a android.intent.action.MAIN "
                             "-c android.intent.category.LAUNCHER")
    assert "com.artemis.shop" not in launchable and "com.artemis.notes/.MainActivity" in launchable
    phone.shell("pm enable com.artemis.shop")
    assert phone.shell("pm list packages -d") == ""
    assert phone.run("pm uninstall com.android.launcher3").exit_code == 1
    assert phone.shell("pm uninstall --user 0 com.android.deskclock") == "Success\n"
    assert "deskclock" not in phone.shell("pm list packages")
    assert phone.shell("am start -n com.android.deskclock/.DeskClock").endswith("does not exist.\n")


def test_variables_are_tokens_expanded_when_the_command_runs(phone: SimPhone) -> None:
    assert tokenize("echo '$A' \\$A") == ["echo", "$A", "$A"]
    assert phone.shell("A=1; B=${A}2; echo \"$B\" $A$?") == "12 10\n"
    assert phone.shell("echo $EXTERNAL_STORAGE $TMPDIR") == "/sdcard /data/local/tmp\n"
    phone.shell("export LEAK=1")
    assert phone.shell("echo x$LEAK") == "x\n"  # each command line starts with adb shell's environment


def test_input_text_edge_cases(phone: SimPhone) -> None:
    res = phone.run("input text")
    assert res.exit_code == 255 and b'Argument expected after "text"' in res.stderr
    assert phone.run("input text ''").exit_code == 0
    assert phone.run("input keyboard text 日本").stderr.startswith(b"Exception occurred while executing 'keyboard':")
