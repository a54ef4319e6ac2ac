"""Task files: structure of a valid task, and file:line + field path for every broken case."""

from __future__ import annotations

from pathlib import Path

import pytest
from config_cases import BAD, BROKEN_CASES, FULL

from artemis_cli.config.task import ReferenceAction, Task, load_task, slugify, task_from_goal
from artemis_cli.errors import ConfigError, UsageError


def write(tmp_path: Path, text: str, name: str = "t.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def error_of(path: Path) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_task(path)
    return info.value


def test_full_task_loads_every_feature() -> None:
    task = load_task(FULL)
    assert (task.id, task.goal, task.app, task.profile, task.max_steps) == (
        "settings-wifi-on", "Turn on Wi-Fi", "com.android.settings", "pro", 40)
    assert task.tags == ["settings", "smoke"]
    assert task.source_path == FULL
    assert [s.shell for s in task.setup] == ["settings put global wifi_on 0"]
    assert [c.kind for c in task.success] == ["shell", "shell", "shell", "visible", "not_visible", "app"]
    assert task.success[0].equals == "1"  # a YAML number in a label field is read as text
    assert task.success[1].contains == "enabled"
    assert task.success[2].matches == "^1[0-9]$"
    assert task.success[5].app == "com.android.settings"
    assert task.inject[0].at_step == 5 and task.inject[0].text.startswith("Use the quick")
    assert task.sim is not None
    assert (task.sim.world, task.sim.seed, task.sim.popups, task.sim.faults) == ("default", 7, False, "flaky-wifi")

    ref = task.reference
    assert [a.kind for a in ref] == ["launch", "tap", "long_press", "type", "type", "swipe", "swipe", "swipe",
                                     "key", "wait", "note", "tap", "tap", "finish", "finish"]
    assert ref[0].launch == "com.android.settings"
    assert ref[1].tap is not None and ref[1].tap.text == "Network & internet" and ref[1].tap.nth == 0
    assert ref[2].long_press is not None and ref[2].long_press.id == "com.android.settings:id/title"
    assert ref[2].long_press.nth == 1
    typed = ref[3].type
    assert typed is not None and typed.text == "hello" and typed.clear and typed.submit
    assert typed.into is not None and typed.into.class_name == "EditText"
    assert ref[4].type is not None and ref[4].type.text == "42" and ref[4].type.into is None
    assert ref[5].swipe is not None and ref[5].swipe.direction == "up"
    assert ref[6].swipe is not None and ref[6].swipe.on is not None and ref[6].swipe.on.desc == "Carousel"
    assert ref[7].swipe is not None and (ref[7].swipe.from_, ref[7].swipe.to) == ((100, 900), (100, 200))
    assert ref[8].key == "back"
    assert ref[9].wait == 1.5
    assert ref[10].note is not None and (ref[10].note.key, ref[10].note.content) == ("ssid", "HomeNet")
    assert ref[11].tap is not None and (ref[11].tap.x, ref[11].tap.y) == (540, 1200)
    assert not ref[11].tap.has_semantics
    assert ref[12].tap is not None and ref[12].tap.text_contains == "Wi"
    assert ref[13].finish is not None and ref[13].finish.answer == "Wi-Fi is on"
    assert ref[14].value == ref[14].finish and ref[14].finish is not None
    assert (ref[14].finish.success, ref[14].finish.answer) == (True, "")


def test_minimal_task_defaults_and_id_from_file_name(tmp_path: Path) -> None:
    task = load_task(write(tmp_path, "goal: Open the camera\n", name="Open Camera.yaml"))
    assert task.id == "open-camera"
    assert (task.app, task.profile, task.max_steps) == (None, "flash", 30)
    assert task.setup == task.success == task.inject == task.reference == task.tags == []
    assert task.sim is None and task.description is None


@pytest.mark.parametrize("name", sorted(BROKEN_CASES))
def test_broken_task_names_file_line_and_field(name: str) -> None:
    line, field, fragment = BROKEN_CASES[name]
    path = BAD / name
    exc = error_of(path)
    assert isinstance(exc, UsageError) and exc.exit_code == 2
    assert (exc.path, exc.line, exc.field) == (str(path), line, field)
    first = str(exc).splitlines()[0]
    prefix = f"{path}:{line}: {field}: " if field else f"{path}:{line}: "
    assert first.startswith(prefix)
    assert fragment in first


def test_unknown_key_lists_allowed_keys() -> None:
    exc = error_of(BAD / "unknown_key.yaml")
    assert "allowed: id, goal, app, profile, max_steps" in str(exc)


def test_several_errors_are_all_reported_in_file_order() -> None:
    path = BAD / "several_errors.yaml"
    exc = error_of(path)
    errors = exc.errors  # type: ignore[attr-defined]
    assert [(line, field) for line, field, _ in errors] == [
        (1, "id"), (2, "goal"), (3, "max_steps"), (5, "inject[0].at_step"), (7, "inject[1].at_step"),
        (9, "reference[0].key"), (10, "reference[1].wait"),
    ]
    lines = str(exc).splitlines()
    assert len(lines) == 7
    assert lines[0].startswith(f"{path}:1: id: must be a slug")
    assert lines[2] == f"{path}:3: max_steps: must be ≥ 1 (got 0)"
    assert lines[4] == f"{path}:7: inject[1].at_step: required key is missing"
    assert lines[5] == f"{path}:9: reference[0].key: must be one of 'back', 'home', 'enter', 'recents', 'delete', 'tab', 'escape', 'search', 'menu', 'volume_up' or 'volume_down' (got 'power')"
    assert lines[6] == f"{path}:10: reference[1].wait: must be ≥ 0 (got -1)"
    assert (exc.line, exc.field) == (1, "id")


@pytest.mark.parametrize(
    ("body", "line", "field", "fragment"),
    [
        ("goal: g\nreference:\n  - swipe: sideways\n", 3, "reference[0].swipe", "must be one of 'up'"),
        ("goal: g\nreference:\n  - swipe: {from: [1, 2]}\n", 3, "reference[0].swipe.from", "'from' needs 'to' too"),
        ("goal: g\nreference:\n  - swipe: {from: [1, 2, 3], to: [4, 5]}\n", 3, "reference[0].swipe.from",
         "must be a point [x, y] (got [1, 2, 3])"),
        ("goal: g\nreference:\n  - swipe: {direction: up, from: [1, 2], to: [3, 4]}\n", 3,
         "reference[0].swipe.direction", "either 'direction' or 'from'/'to'"),
        ("goal: g\nreference:\n  - tap: {nth: 2}\n", 3, "reference[0].tap", "a selector needs at least one of"),
        ("goal: g\nreference:\n  - tap:\n      x: 5\n", 4, "reference[0].tap.x", "pixel 'x' needs 'y' too"),
        ("goal: g\nreference:\n  - tap: {txt: OK}\n", 3, "reference[0].tap.txt",
         "unknown key 'txt' (did you mean 'text'?)"),
        ("goal: g\nreference:\n  - tapp: {text: OK}\n", 3, "reference[0].tapp", "(did you mean 'tap'?)"),
        ("goal: g\nreference:\n  - {}\n", 3, "reference[0]", "empty step: expected one action"),
        ("goal: g\nreference:\n  - back\n", 3, "reference[0]", "must be a mapping with one action"),
        ("goal: g\nreference:\n  - tap: {text: A}\n    key: back\n", 4, "reference[0].key", "one action per step"),
        ("goal: g\nreference:\n  - tap:\n", 3, "reference[0].tap", "'tap' needs a value"),
        ("goal: g\nreference:\n  - type: {text: hi, clear: maybe}\n", 3, "reference[0].type.clear",
         "must be true or false (got 'maybe')"),
        ("goal: g\nreference:\n  - tap: {text: true}\n", 3, "reference[0].tap.text", "put it in quotes"),
        ("goal: g\nreference:\n  - wait: 99999\n", 3, "reference[0].wait", "must be ≤ 3600"),
        ("goal: g\nsuccess:\n  - equals: '1'\n", 3, "success[0]", "a success check needs one of shell"),
        ("goal: g\nsuccess:\n  - shell: ls\n", 3, "success[0]", "a shell check needs one of equals"),
        ("goal: g\nsuccess:\n  - visible: A\n    app: com.x.y\n", 4, "success[0].app", "one check per item"),
        ("goal: g\nsuccess:\n  - visible: A\n    equals: B\n", 4, "success[0].equals", "only goes with 'shell'"),
        ("goal: g\nsuccess:\n  - app: Settings\n", 3, "success[0].app", "must be an Android package name"),
        ("goal: g\napp: settings\n", 2, "app", "must be an Android package name"),
        ("goal: g\nmax_steps: 10001\n", 2, "max_steps", "must be ≤ 10000 (got 10001)"),
        ("goal: g\nmax_steps: '30'\n", 2, "max_steps", "must be a whole number (got '30')"),
        ("goal: g\nmax_steps: 2.5\n", 2, "max_steps", "must be a whole number (got 2.5)"),
        ("goal: g\ntags: smoke\n", 2, "tags", "must be a list (got 'smoke')"),
        ("goal: g\nsim:\n  seed: -1\n", 3, "sim.seed", "must be ≥ 0"),
        ("goal: g\nsim: fast\n", 2, "sim", "must be a mapping (got 'fast')"),
        ("goal: g\ninject:\n  - at_step: 2\n", 3, "inject[0].text", "required key is missing"),
        ("goal: [a, b]\n", 1, "goal", "must be a string (got ['a', 'b'])"),
        ("goal:\n", 1, "goal", "must be a string (got null)"),
        ("goal: g\ngoal: h\n", 2, None, "duplicate key 'goal' (first defined on line 1)"),
        ("- goal: g\n", 1, None, "the top level must be a mapping"),
        ("", 1, None, "the file is empty"),
        ("goal: 'unterminated\n", 2, None, "YAML syntax error"),
        ("a: &x [*x]\n", 1, None, "recursive alias"),
    ],
)
def test_error_locations(tmp_path: Path, body: str, line: int, field: str | None, fragment: str) -> None:
    exc = error_of(write(tmp_path, body))
    assert (exc.line, exc.field) == (line, field), str(exc)
    assert fragment in str(exc).splitlines()[0], str(exc)


def test_file_problems_are_config_errors(tmp_path: Path) -> None:
    assert "file not found" in str(error_of(tmp_path / "nope.yaml"))
    assert "is a directory" in str(error_of(tmp_path))
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes(b"goal: caf\xe9\n")
    assert error_of(bad).line == 1


def test_yaml_on_key_stays_a_string_and_merge_keys_work(tmp_path: Path) -> None:
    body = (
        "goal: g\n"
        "reference:\n"
        "  - swipe: {direction: up, on: {text: List}}\n"
        "  - tap: &ok {text: OK}\n"
        "  - long_press: {<<: *ok, nth: 2}\n"
    )
    task = load_task(write(tmp_path, body))
    assert task.reference[0].swipe is not None and task.reference[0].swipe.on is not None
    press = task.reference[2].long_press
    assert press is not None and (press.text, press.nth) == ("OK", 2)


def test_task_from_goal() -> None:
    task = task_from_goal("Turn on Wi-Fi!", app="com.android.settings", max_steps=12)
    assert (task.id, task.goal, task.app, task.max_steps, task.source_path) == (
        "turn-on-wi-fi", "Turn on Wi-Fi!", "com.android.settings", 12, None)
    assert task_from_goal("Open camera").max_steps == 30
    with pytest.raises(ConfigError) as info:
        task_from_goal("  ", max_steps=0)
    assert str(info.value).splitlines() == [
        "command line: goal: must not be empty", "command line: max_steps: must be ≥ 1 (got 0)"]


def test_slugify() -> None:
    assert slugify("Hello, World") == "hello-world"
    assert slugify("___") == "task"
    assert len(slugify("x" * 200)) == 48


def test_reference_action_in_python() -> None:
    action = ReferenceAction.model_validate({"key": "home"})
    assert (action.kind, action.value) == ("key", "home")
    assert Task.model_validate({"id": "a", "goal": "b"}).max_steps == 30


def test_errors_follow_file_order_not_schema_order(tmp_path: Path) -> None:
    path = write(tmp_path, "reference: [{key: power}]\nmax_steps: 0\ngoal: ''\n")
    exc = error_of(path)
    assert [field for _, field, _ in exc.errors] == ["reference[0].key", "max_steps", "goal"]  # type: ignore[attr-defined]
    assert (exc.line, exc.field) == (1, "reference[0].key")
