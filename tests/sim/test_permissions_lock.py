"""The runtime permission dialog (the Clock asks for notifications) and the locked start."""

from __future__ import annotations

import re

from artemis_cli.config.task import SimOptions
from artemis_cli.device.select import sim_for
from artemis_cli.sim.phone import SimPhone

CLOCK = "com.android.deskclock"
NOTIF = "android.permission.POST_NOTIFICATIONS"
ALLOW = "com.android.permissioncontroller:id/permission_allow_button"
DENY = "com.android.permissioncontroller:id/permission_deny_button"


def _task_phone(**kw: object) -> SimPhone:
    phone = sim_for(SimOptions(popups=False, **kw))  # type: ignore[arg-type]
    assert isinstance(phone, SimPhone)
    return phone


def _tap_rid(p: SimPhone, rid: str) -> None:
    for win in p.windows():
        for w in win.root.walk():
            if w.rid == rid:
                p.tap((w.bounds[0] + w.bounds[2]) // 2, (w.bounds[1] + w.bounds[3]) // 2)
                return
    raise AssertionError(f"no {rid} on screen")


def test_a_task_phone_asks_for_notifications_on_the_clocks_first_launch() -> None:
    p = _task_phone()
    p.launch(CLOCK)
    xml = p.dump_xml()
    assert 'text="Allow Clock to send you notifications?"' in xml
    assert f'resource-id="{ALLOW}"' in xml and f'resource-id="{DENY}"' in xml
    assert re.search(r'package="com\.google\.android\.permissioncontroller"', xml)
    alarms = p.apps[CLOCK].snapshot()
    p.tap(540, 200)  # outside the dialog: swallowed
    assert p.apps[CLOCK].snapshot() == alarms
    _tap_rid(p, ALLOW)
    assert "send you notifications" not in p.dump_xml()
    assert p.permissions.granted(CLOCK) == {NOTIF: True}
    p.run(f"am force-stop {CLOCK}")
    p.launch(CLOCK)
    assert "send you notifications" not in p.dump_xml()  # granted: never asked again


def test_two_refusals_are_final_and_pm_grant_revoke_set_the_state() -> None:
    p = _task_phone()
    for _ in range(2):
        p.launch(CLOCK)
        _tap_rid(p, DENY)
        p.key("home")
    p.launch(CLOCK)
    assert "send you notifications" not in p.dump_xml()
    assert p.permissions.granted(CLOCK) == {NOTIF: False}
    assert p.run(f"pm grant {CLOCK} {NOTIF}").exit_code == 0
    assert p.permissions.granted(CLOCK) == {NOTIF: True}
    p.run(f"pm revoke {CLOCK} {NOTIF}")
    p.key("home")
    p.launch(CLOCK)
    assert "send you notifications" in p.dump_xml()  # revoked: the app may ask again
    res = p.run(f"pm grant com.android.settings {NOTIF}")
    assert res.exit_code == 255 and b"has not requested permission" in res.stderr
    res = p.run(f"pm grant no.such.pkg {NOTIF}")
    assert res.exit_code == 255 and b"Unknown package: no.such.pkg" in res.stderr


def test_the_task_setup_grant_keeps_the_clock_quiet() -> None:
    p = _task_phone()
    p.run(f"pm grant {CLOCK} {NOTIF}")
    p.launch(CLOCK)
    assert "send you notifications" not in p.dump_xml()
    assert _task_phone(permission_prompts=False).permissions.enabled is False


def test_locked_start_shows_the_keyguard_until_a_swipe_up() -> None:
    p = _task_phone(locked=True)
    assert p.locked
    xml = p.dump_xml()
    assert 'text="Swipe up to unlock"' in xml
    assert "mShowingLockscreen=true" in p.shell("dumpsys window")
    assert "mDreamingLockscreen=true" in p.shell("dumpsys window")
    p.run("input tap 540 1200")
    p.run("input keyevent 3")  # HOME does nothing on the lock screen
    p.run("input swipe 540 1200 900 1200")  # sideways: still locked
    assert p.locked
    p.run(f"am start -n {p.current_package()}/.MainActivity")
    p.run("input swipe 540 2000 540 600")
    assert not p.locked and "Swipe up to unlock" not in p.dump_xml()
    assert "mShowingLockscreen=false" in p.shell("dumpsys window")
    p.run("input keyevent 26")  # power off: a phone with a lock screen locks again
    p.run("input keyevent 224")
    assert p.locked
    p.run("input keyevent 82")  # MENU unlocks (no PIN)
    assert not p.locked


def test_an_unlocked_phone_never_shows_the_keyguard() -> None:
    p = _task_phone()
    assert not p.locked and "Swipe up to unlock" not in p.dump_xml()
    p.run("input keyevent 26")
    p.run("input keyevent 224")
    assert not p.locked
