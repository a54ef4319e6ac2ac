"""Hypothesis: arbitrary YAML text and arbitrary mutations of a valid task only ever raise ConfigError."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from config_cases import FULL
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artemis_cli.config.profile import Profile
from artemis_cli.config.task import Task, load_task
from artemis_cli.config.yaml_source import load_yaml_text
from artemis_cli.errors import ConfigError

VALID = yaml.safe_load(FULL.read_text())

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
    st.sampled_from(["up", "back", "tap", "com.x.y", "(", "[a-", "0", "", "finish", "text"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.sampled_from(["text", "x", "y", "tap", "on", "from", "to", "nth",
                                                             "shell", "equals", "k"]) | st.text(max_size=5),
                                            inner, max_size=3)),
    max_leaves=8,
)

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out += _paths(value, (*prefix, index))
    return out


def _check(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    try:
        task = load_task(path)
    except ConfigError as exc:
        assert str(exc)
        assert all(len(tuple(issue)) == 3 for issue in getattr(exc, "errors", []))
    else:
        assert isinstance(task, Task)


@SETTINGS
@given(text=st.text(alphabet=st.sampled_from(list("ab:- \n{}[]'\"&*!#|>%@`,?~0.\t")), max_size=80))
def test_random_yaml_text(tmp_path: Path, text: str) -> None:
    _check(tmp_path / "t.yaml", text)


@SETTINGS
@given(data=st.data())
def test_random_mutations_of_a_valid_task(tmp_path: Path, data: st.DataObject) -> None:
    doc = copy.deepcopy(VALID)
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_paths(doc)))
        if not path:
            continue
        parent = doc
        for part in path[:-1]:
            parent = parent[part]
        action = data.draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "delete":
            del parent[path[-1]]
        elif action == "add" and isinstance(parent, dict):
            parent[data.draw(st.text(max_size=6))] = data.draw(values)
        else:
            parent[path[-1]] = data.draw(values)
    _check(tmp_path / "t.yaml", yaml.safe_dump(doc, allow_unicode=True))


@SETTINGS
@given(value=values)
def test_random_profiles_only_raise_config_error(value: Any) -> None:
    doc = {"loop": "flash", "memory": {"transcript": value}, "models": {"operator": value}}
    text = yaml.safe_dump(doc)
    try:
        loaded = load_yaml_text(text, "p.yaml")
        from artemis_cli.config.validation import DocumentLocator, validate_model

        profile = validate_model(Profile, {"name": "p", **loaded.data}, DocumentLocator(loaded))
    except ConfigError:
        pass
    else:
        assert profile.loop == "flash"


TASK_KEYS = st.sampled_from(["id", "goal", "app", "profile", "max_steps", "setup", "success", "inject",
                             "reference", "sim", "tags", "description"])


@SETTINGS
@given(doc=st.dictionaries(TASK_KEYS | st.text(max_size=6), values, max_size=6))
def test_random_yaml_documents(tmp_path: Path, doc: dict[str, Any]) -> None:
    _check(tmp_path / "t.yaml", yaml.safe_dump(doc, allow_unicode=True))
