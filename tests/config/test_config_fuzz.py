"""Hypothesis: arbitrary YAML text and arbitrary mutations of a valid task only ever raise ConfigError."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from config_cases import FULL
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artemis_cli.config.profile import Profile, load_profile
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

SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])  # count: profile


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


def _mutate(doc: Any, data: st.DataObject) -> None:
    """One to three random edits of ``doc`` in place: replace, delete or add a key."""
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


@SETTINGS
@given(data=st.data())
def test_random_mutations_of_a_valid_task(tmp_path: Path, data: st.DataObject) -> None:
    doc = copy.deepcopy(VALID)
    _mutate(doc, data)
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


# --- profiles through load_profile: files on disk, extends chains ---------------------------

REPO = Path(__file__).resolve().parents[2]
PROFILES = {name: yaml.safe_load((REPO / "profiles" / f"{name}.yaml").read_text()) for name in ("flash", "pro")}
EXTENDS = st.one_of(
    st.sampled_from(["flash", "pro", "child", "other", "missing", "./child.yaml", "other.yaml", "../nowhere.yaml",
                     "/dev/null", "", " ", "a\0b", "~/x.yaml", "profiles/flash.yaml"]),
    st.text(max_size=8), scalars,
)


def _check_profile(path: Path, search_dirs: list[Path]) -> None:
    try:
        profile = load_profile(str(path), search_dirs=search_dirs)
    except ConfigError as exc:
        assert str(exc)
    else:
        assert isinstance(profile, Profile) and profile.loop in ("flash", "pro")


@SETTINGS
@given(text=st.text(alphabet=st.sampled_from(list("ab:- \n{}[]'\"&*!#|>%@`,?~0.\t")), max_size=80))
def test_random_profile_text_through_load_profile(tmp_path: Path, text: str) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(text, encoding="utf-8")
    _check_profile(path, [tmp_path])


@SETTINGS
@given(base=st.sampled_from(sorted(PROFILES)), data=st.data())
def test_random_mutations_of_the_shipped_profiles(tmp_path: Path, base: str, data: st.DataObject) -> None:
    doc = copy.deepcopy(PROFILES[base])
    _mutate(doc, data)
    target = tmp_path / "p.yaml"
    target.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    _check_profile(target, [tmp_path, REPO])


@SETTINGS
@given(child_extends=EXTENDS, other_extends=st.none() | EXTENDS,
       override=st.dictionaries(st.sampled_from(["loop", "name", "coordinates", "memory", "models", "runtime"])
                                | st.text(max_size=5), values, max_size=2))
def test_random_extends_chains(tmp_path: Path, child_extends: Any, other_extends: Any,
                               override: dict[str, Any]) -> None:
    """Chains through flash/pro, missing parents, cycles (child → other → child) and odd values."""
    other = {"loop": "flash"} if other_extends is None else {"extends": other_extends}
    (tmp_path / "other.yaml").write_text(yaml.safe_dump(other, allow_unicode=True), encoding="utf-8")
    child = {"extends": child_extends, **override}
    path = tmp_path / "child.yaml"
    path.write_text(yaml.safe_dump(child, allow_unicode=True), encoding="utf-8")
    _check_profile(path, [tmp_path, REPO])


@SETTINGS
@given(name=st.text(max_size=20) | st.sampled_from(["", ".", "..", "../../etc/passwd", "a\0b", "flash ", "FLASH"]))
def test_random_profile_names(tmp_path: Path, name: str) -> None:
    try:
        profile = load_profile(name, search_dirs=[tmp_path, REPO])
    except ConfigError as exc:
        assert str(exc)
    else:
        assert profile.name


@pytest.mark.parametrize("loop", [[], {}, [["flash"]], {"a": 1}])
def test_unhashable_loop_is_a_config_error(tmp_path: Path, loop: Any) -> None:
    """Found by the mutation fuzz: ``loop: []`` crashed Profile._prepare with a TypeError."""
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump({"loop": loop}), encoding="utf-8")
    with pytest.raises(ConfigError, match="loop"):
        load_profile(str(path), search_dirs=[tmp_path])
