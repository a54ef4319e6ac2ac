"""A real phone's package list installed on the simulated phone as stub apps (``--packages``,
a task's ``sim.packages``): listed by pm, opened by monkey and am, reported by dumpsys, kept
across a served reset; bad lists and paths are clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from artemis_cli.config.task import load_task
from artemis_cli.device.app_list import installed_packages, launchable_packages
from artemis_cli.device.select import sim_for
from artemis_cli.errors import ConfigError
from artemis_cli.perception.packages import read_package_file
from artemis_cli.sim.phone import SimPhone

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "packages"
SAMSUNG = FIXTURES / "samsung-galaxy-j6.txt"


@pytest.fixture(scope="module")
def galaxy() -> SimPhone:
    return SimPhone(packages=SAMSUNG, popups=False)


def test_pm_lists_every_package_of_the_list_once_beside_the_worlds_apps(galaxy: SimPhone) -> None:
    listed = installed_packages(galaxy)
    real = read_package_file(SAMSUNG)
    assert set(real) <= set(listed)
    assert len(listed) == len(set(listed))
    assert {"com.artemis.notes", "com.artemis.shop", "com.android.deskclock"} <= set(listed)  # the world stays


def test_a_stub_opens_a_screen_naming_its_package_without_a_label(galaxy: SimPhone) -> None:
    out = galaxy.shell("monkey -p com.samsung.android.messaging -c android.intent.category.LAUNCHER 1")
    assert "Events injected: 1" in out
    assert galaxy.current_app() == "com.samsung.android.messaging"
    xml = galaxy.dump_xml()
    assert 'text="com.samsung.android.messaging"' in xml and "Messages" not in xml
    focus = galaxy.shell("dumpsys window windows")
    assert "mCurrentFocus=Window{" in focus and "u0 com.samsung.android.messaging/" in focus
    galaxy.shell("am start -n com.whatsapp/.MainActivity")
    assert galaxy.current_app() == "com.whatsapp"
    galaxy.key("home")


def test_the_launcher_query_lists_the_stubs_too(galaxy: SimPhone) -> None:
    launchable = launchable_packages(galaxy)
    assert launchable is not None
    assert "com.sec.android.app.camera" in launchable and "com.android.launcher3" not in launchable


def test_a_served_reset_keeps_the_list(galaxy: SimPhone) -> None:
    phone = SimPhone(packages=SAMSUNG)
    phone.shell("artemis-sim reset --world default --seed 3")
    assert phone.has_package("com.samsung.android.dialer")


def test_a_bad_line_is_named_with_its_line_number(tmp_path: Path) -> None:
    bad = tmp_path / "phone.txt"
    bad.write_text("package:com.a\r\n\r\npackage com.b\r\n")
    with pytest.raises(ConfigError, match=r"phone\.txt:3: 'package com\.b' is not a package:NAME line"):
        SimPhone(packages=bad)


def test_a_task_names_the_list_relative_to_itself(tmp_path: Path) -> None:
    (tmp_path / "lists").mkdir()
    (tmp_path / "lists" / "p.txt").write_text("package:com.example.expense\n")
    task_file = tmp_path / "t.yaml"
    task_file.write_text("goal: open it\nsim:\n  popups: false\n  packages: lists/p.txt\n")
    task = load_task(task_file)
    assert task.sim is not None and task.sim.packages == str(tmp_path / "lists" / "p.txt")
    phone = sim_for(task.sim)
    assert "com.example.expense" in installed_packages(phone)


def test_a_task_with_a_missing_or_bad_list_fails_to_load_with_file_and_line(tmp_path: Path) -> None:
    task_file = tmp_path / "t.yaml"
    task_file.write_text("goal: open it\nsim:\n  packages: nope.txt\n")
    with pytest.raises(ConfigError) as info:
        load_task(task_file)
    assert str(info.value).startswith(f"{task_file}:3: sim.packages: no such file ")
    (tmp_path / "bad.txt").write_text("package:com.a\nnot a package\n")
    task_file.write_text("goal: open it\nsim:\n  packages: bad.txt\n")
    with pytest.raises(ConfigError, match=r"bad\.txt:2: 'not a package' is not a package:NAME line"):
        load_task(task_file)
