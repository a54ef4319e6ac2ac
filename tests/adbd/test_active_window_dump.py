"""Dumps like a phone's (issue 25): over `artemis sim serve`'s wire, Debian's adb gets a
`uiautomator dump` of the active window alone, and Artemis's adb backend still sees the bars,
the keyboard and the dialogs: from `dumpsys window` (read with the app in front) and
`dumpsys input_method`."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from adbd_support import SimDevice, needs_adb
from outcome_support import act, look, tap

from artemis_cli.device.adb import AdbDevice
from artemis_cli.perception.hittest import hit_test

pytestmark = needs_adb


def _adb(sim: SimDevice) -> AdbDevice:
    return AdbDevice(sim.serial, port=sim.adb.port, sleep=lambda s: None)


def test_adb_shell_uiautomator_dump_writes_one_window(sim_device: SimDevice, tmp_path: Path) -> None:
    sim_device.phone.launch("com.android.contacts")
    sim_device.phone.tap(540, 344)  # the search field: the keyboard comes up
    assert sim_device.phone.keyboard_visible()
    out = sim_device.shell("uiautomator dump /sdcard/x.xml")
    assert out.strip() == "UI hierchary dumped to: /sdcard/x.xml"
    sim_device.adb.run("pull", "/sdcard/x.xml", str(tmp_path / "x.xml"), serial=sim_device.serial)
    root = ET.fromstring((tmp_path / "x.xml").read_text(encoding="utf-8"))
    assert [w.get("package") for w in root] == ["com.android.contacts"]  # no bars, no keyboard
    assert "mInputShown=true" in sim_device.shell("dumpsys input_method")
    wm = sim_device.shell("dumpsys window windows")
    assert "Window{" in wm and "NavigationBar0}:" in wm and "InputMethod}:" in wm


def test_the_adb_observation_has_the_bars_and_keyboard_the_dump_lacks(sim_device: SimDevice) -> None:
    dev = _adb(sim_device)
    sim_device.phone.launch("com.android.contacts")
    sim_device.phone.tap(540, 344)
    obs = look(dev)
    assert obs.keyboard_shown is True  # from dumpsys input_method, in the parallel reads
    assert "keyboard" in obs.timings
    back = hit_test(obs.tree, 270, 2337)  # a tap on ◁ is a tap on the navigation bar, not the app
    assert back.content_desc == "Navigation bar"
    assert hit_test(obs.tree, 100, 1700).content_desc == "Keyboard"  # Henry's row is under the keys
    labels = [e.label for e in obs.elements]
    assert "Alice Anderson" in labels and "Julia Lopez" not in labels and "Navigation bar" not in labels


def test_a_dialog_opening_is_a_new_window_not_the_screen_closing(sim_device: SimDevice) -> None:
    dev = _adb(sim_device)
    sim_device.phone.launch("com.android.contacts")
    tap(dev, desc="Alice Anderson")
    done = tap(dev, text="Delete")
    assert [n.package for n in done.post.tree.nodes if n.depth == 0 and not n.synthetic] == ["com.android.contacts"]
    assert done.outcome.windows_opened and not done.outcome.windows_closed, done.outcome.summary
    closed = act(dev, "press_key", key="back")
    assert closed.outcome.windows_closed and not closed.outcome.windows_opened, closed.outcome.summary
