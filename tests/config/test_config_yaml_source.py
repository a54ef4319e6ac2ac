"""yaml_source: data plus the line of every node and key; every malformed input is a ConfigError."""

from __future__ import annotations

from pathlib import Path

import pytest

from artemis_cli.config.yaml_source import format_field_path, load_yaml_file, load_yaml_text
from artemis_cli.errors import ConfigError

TEXT = """\
# comment
id: x
reference:
  - tap:
      text: OK
  - key: back
on: 1
"""


def test_data_lines_and_key_lines() -> None:
    doc = load_yaml_text(TEXT, "t.yaml")
    assert doc.data == {"id": "x", "reference": [{"tap": {"text": "OK"}}, {"key": "back"}], "on": 1}
    assert doc.lines[("reference",)] == 4
    assert doc.lines[("reference", 0, "tap")] == 5  # a block mapping starts at its first key
    assert doc.key_lines[("reference", 0, "tap")] == 4
    assert doc.lines[("reference", 1, "key")] == 6
    assert doc.key_lines[("on",)] == 7  # a key is its source text, never YAML 1.1's True
    assert doc.line_of(("reference", 1, "key", "missing")) == 6  # nearest ancestor
    assert doc.value_at(("reference", 0, "tap", "text")) == (True, "OK")
    assert doc.value_at(("reference", 5)) == (False, None)


def test_format_field_path() -> None:
    assert format_field_path(("reference", 3, "tap", "text")) == "reference[3].tap.text"
    assert format_field_path((0,)) == "[0]"
    assert format_field_path(()) == ""


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("a: 1\nb: [1,\n", 3, "YAML syntax error"),
        ("a: 1\na: 2\n", 2, "duplicate key 'a' (first defined on line 1)"),
        ("a:\n  b: 1\n  b: 2\n", 3, "duplicate key 'b'"),
        ("- 1\n", 1, "top level must be a mapping"),
        ("just text\n", 1, "top level must be a mapping"),
        ("", 1, "the file is empty"),
        ("# only a comment\n", 1, "the file is empty"),
        ("a: 1\n---\nb: 2\n", 2, "YAML syntax error"),
        ("a: !!python/object:os.system x\n", 1, "invalid value"),
        ("a:\n  when: 2024-13-45\n", 2, "invalid value: month must be in 1..12"),
        ("a: &x [*x]\n", 1, "recursive alias"),
        ("? [a]\n: 1\n", 1, "mapping keys must be plain words"),
        ("a: {<<: 5}\n", 1, "'<<' must be followed by a mapping"),
        ("a: \x00\n", 1, "YAML syntax error"),
        ("a: " + "[" * 100 + "]" * 100, 1, "nested more than 64 levels deep"),
    ],
)
def test_malformed_yaml(text: str, line: int, fragment: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_yaml_text(text, "t.yaml")
    assert info.value.line == line and fragment in str(info.value), str(info.value)


def test_pathological_documents_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="nesting is too deep"):
        load_yaml_text("a: " + "[" * 5000 + "]" * 5000, "t.yaml")
    bomb = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n" for p, n in zip("abcdef", "bcdefg", strict=True))
    with pytest.raises(ConfigError, match="document too large"):
        load_yaml_text(bomb, "t.yaml")


def test_merge_keys_and_aliases() -> None:
    doc = load_yaml_text("base: &b {x: 1, y: 2}\nitem:\n  <<: *b\n  y: 3\nsame: *b\n", "t.yaml")
    assert doc.data["item"] == {"x": 1, "y": 3}
    assert doc.data["same"] == {"x": 1, "y": 2}
    assert doc.key_lines[("item", "y")] == 4


def test_files(tmp_path: Path) -> None:
    path = tmp_path / "bom.yaml"
    path.write_bytes("\ufeffgoal: café\n".encode())
    assert load_yaml_file(path).data == {"goal": "café"}
    with pytest.raises(ConfigError, match="file not found"):
        load_yaml_file(tmp_path / "none.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"a: 1\nb: \xff\n")
    with pytest.raises(ConfigError) as info:
        load_yaml_file(bad)
    assert info.value.line == 2 and "not valid UTF-8" in str(info.value)
