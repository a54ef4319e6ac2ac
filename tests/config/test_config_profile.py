"""Profiles: shipped flash/pro load with the SPEC §13 defaults; extends merging, cycles, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from artemis_cli.config.profile import ROLES, MemorySettings, Profile, deep_merge, load_profile
from artemis_cli.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]

SPEC_13_MEMORY = {
    "runtime": {"max_concurrency": 2, "retry_limit": 3, "flush_timeout_s": 30},
    "transcript": {"context_budget_tokens": 80000, "soft_ratio": 0.7, "hard_ratio": 0.9,
                   "min_active_steps": 5, "reply_reserve_tokens": 1024, "emergency_interval_steps": 12,
                   "image_scrub_depth": 3, "pending_grace_steps": 3,
                   "xml_scrub_depth": 1, "image_scrub_batch": 3, "similarity_hint": True,
                   "similarity_max_distance": 5},
    "chunking": {"max_steps": 12, "target_source_tokens": 2000, "max_chunks": 8, "max_eras": None,
                 "frozen_budget_tokens": None, "max_resends": 3},
    "recall": {"enabled": True, "max_results": 5, "max_text_tokens": 2000, "max_image_steps": 1},
}


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_memory_defaults_are_spec_13() -> None:
    assert MemorySettings().model_dump() == SPEC_13_MEMORY
    assert MemorySettings().chunking.effective_max_eras == 8


@pytest.mark.parametrize("name", ["flash", "pro"])
def test_shipped_profiles_load_with_spec_defaults(name: str) -> None:
    profile = load_profile(name, search_dirs=[REPO])
    assert profile.name == name and profile.loop == name and profile.extends is None
    assert profile.memory.model_dump() == SPEC_13_MEMORY
    assert profile.coordinates == "pixels"
    assert (profile.max_steps, profile.step_delay_ms, profile.settle_ms) == (None, 0, 0)
    assert profile.models.visual_lens.model == "gemini-2.5-flash-lite"
    assert profile.files == [REPO / "profiles" / f"{name}.yaml"]
    # the shipped files spell out exactly what the built-in defaults give
    assert profile.model_dump(exclude={"name"}) == Profile(name="x", loop=name).model_dump(exclude={"name"})


def test_flash_and_pro_models() -> None:
    flash = load_profile("flash", search_dirs=[REPO])
    assert flash.models.operator.chain == ["gemini-2.5-flash", "gemini-2.0-flash"]
    pro = load_profile("pro", search_dirs=[REPO])
    assert pro.models.operator.model == pro.models.planner.model == "gemini-2.5-pro"
    assert set(pro.models.model_dump()) == set(ROLES)


def test_bare_name_searches_cwd_first_then_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "profiles", "flash.yaml", "loop: flash\nstep_delay_ms: 250\n")
    monkeypatch.chdir(tmp_path)
    assert load_profile("flash").step_delay_ms == 250  # ./profiles wins
    assert load_profile("pro").loop == "pro"  # falls back to the source checkout
    path = write(tmp_path / "elsewhere", "mine.yml", "loop: pro\n")
    assert load_profile(str(path)).name == "mine"


def test_extends_deep_merges_maps_and_replaces_lists(tmp_path: Path) -> None:
    write(tmp_path, "base.yaml", (
        "loop: flash\n"
        "models:\n"
        "  operator: {model: m-base, fallback: [a, b], temperature: 0.5}\n"
        "memory:\n"
        "  transcript: {context_budget_tokens: 50000, soft_ratio: 0.6}\n"
        "step_delay_ms: 100\n"
    ))
    write(tmp_path, "mid.yaml", "extends: base\nmodels:\n  operator: {fallback: [c]}\nsettle_ms: 20\n")
    path = write(tmp_path, "child.yaml", (
        "extends: ./mid.yaml\n"
        "name: custom\n"
        "loop: pro\n"
        "memory:\n"
        "  transcript: {soft_ratio: 0.5}\n"
    ))
    profile = load_profile(str(path), search_dirs=[])
    assert (profile.name, profile.extends, profile.loop) == ("custom", "./mid.yaml", "pro")
    op = profile.models.operator
    assert (op.model, op.fallback, op.temperature) == ("m-base", ["c"], 0.5)
    assert profile.models.planner.model == "gemini-2.5-pro"  # untouched role: the pro default
    t = profile.memory.transcript
    assert (t.context_budget_tokens, t.soft_ratio, t.hard_ratio) == (50000, 0.5, 0.9)
    assert (profile.step_delay_ms, profile.settle_ms) == (100, 20)
    assert [p.name for p in profile.files] == ["child.yaml", "mid.yaml", "base.yaml"]


def test_extends_shipped_flash(tmp_path: Path) -> None:
    path = write(tmp_path, "quick.yaml", "extends: flash\nmodels:\n  operator: {model: heuristic, fallback: []}\n")
    profile = load_profile(str(path), search_dirs=[REPO])
    assert (profile.name, profile.loop, profile.models.operator.chain) == ("quick", "flash", ["heuristic"])
    assert profile.memory.model_dump() == SPEC_13_MEMORY


def test_extends_cycle_is_reported(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", "loop: flash\nextends: b\n")
    write(tmp_path, "b.yaml", "# b\nextends: c\n")
    write(tmp_path, "c.yaml", "extends: a.yaml\n")
    with pytest.raises(ConfigError) as info:
        load_profile("a", search_dirs=[tmp_path])
    exc = info.value
    assert exc.field == "extends" and exc.line == 1 and exc.path.endswith("c.yaml")
    assert "extends cycle:" in str(exc) and str(exc).count("a.yaml") == 2


def test_self_extension_is_a_cycle(tmp_path: Path) -> None:
    write(tmp_path, "me.yaml", "loop: flash\nextends: me\n")
    with pytest.raises(ConfigError, match=r"me.yaml:2: extends: extends cycle"):
        load_profile("me", search_dirs=[tmp_path])


def test_unknown_key_in_profile_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, "p.yaml", "loop: flash\nmemory:\n  transcript:\n    soft_ratoi: 0.5\n")
    with pytest.raises(ConfigError) as info:
        load_profile(str(path))
    assert str(info.value).splitlines()[0] == (
        f"{path}:4: memory.transcript.soft_ratoi: unknown key 'soft_ratoi' (did you mean 'soft_ratio'?); "
        "allowed: context_budget_tokens, soft_ratio, hard_ratio, min_active_steps, reply_reserve_tokens, "
        "emergency_interval_steps, image_scrub_depth, "
        "pending_grace_steps, xml_scrub_depth, image_scrub_batch, similarity_hint, similarity_max_distance"
    )


def test_bad_value_is_located_in_the_file_it_came_from(tmp_path: Path) -> None:
    base = write(tmp_path, "base.yaml", "loop: flash\nmemory:\n  transcript:\n    hard_ratio: 0.6\n")
    child = write(tmp_path, "child.yaml", "extends: base\nmodels:\n  oprator: {model: x}\n  validator: {temperature: 9}\n")
    with pytest.raises(ConfigError) as info:
        load_profile(str(child), search_dirs=[])
    lines = str(info.value).splitlines()
    assert f"{base}:4: memory.transcript.soft_ratio: soft_ratio (0.7) must be below hard_ratio (0.6)" in lines
    assert any(line.startswith(f"{child}:3: models.oprator: unknown key 'oprator' (did you mean 'operator'?)")
               for line in lines)
    assert f"{child}:4: models.validator.temperature: must be ≤ 2 (got 9)" in lines
    assert {issue.path for issue in info.value.errors} == {str(base), str(child)}  # type: ignore[attr-defined]


def test_missing_loop_and_missing_profile(tmp_path: Path) -> None:
    path = write(tmp_path, "p.yaml", "# no loop\nstep_delay_ms: 5\n")
    with pytest.raises(ConfigError, match=r"p.yaml:2: loop: required key is missing"):
        load_profile(str(path))
    with pytest.raises(ConfigError, match=r"no profile named 'nosuch' \(available: flash, pro\)"):
        load_profile("nosuch", search_dirs=[REPO])
    child = write(tmp_path, "c.yaml", "loop: flash\nextends: ghost\n")
    with pytest.raises(ConfigError, match=r"c.yaml:2: extends: no profile named 'ghost'"):
        load_profile(str(child), search_dirs=[])
    with pytest.raises(ConfigError, match=r"profile file 'x/y\.yaml' not found"):
        load_profile("x/y.yaml")


def test_deep_merge_does_not_mutate() -> None:
    base = {"a": {"b": [1], "c": 1}}
    merged = deep_merge(base, {"a": {"b": [2]}, "d": None})
    assert merged == {"a": {"b": [2], "c": 1}, "d": None}
    assert base == {"a": {"b": [1], "c": 1}}
