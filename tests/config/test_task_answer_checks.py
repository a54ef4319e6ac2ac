"""Success checks on the finish answer (``answer: {equals|contains|matches: …}``) and on how the
model finished (``finished: {success: false}``: the task must be refused): schema and errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from artemis_cli.config.task import load_task
from artemis_cli.errors import ConfigError


def _load(tmp_path: Path, body: str) -> object:
    path = tmp_path / "t.yaml"
    path.write_text(body, encoding="utf-8")
    return load_task(path)


def test_answer_and_finished_checks_load(tmp_path: Path) -> None:
    task = _load(tmp_path, (
        "goal: g\n"
        "success:\n"
        "  - answer: {contains: Wi-Fi}\n"
        "  - answer: {matches: '^\\d+ items$'}\n"
        "  - answer: {equals: 3}\n"
        "  - finished: {success: false}\n"
        "  - shell: settings get global wifi_on\n"
        "    equals: '1'\n"
    ))
    checks = task.success  # type: ignore[attr-defined]
    assert [c.kind for c in checks] == ["answer", "answer", "answer", "finished", "shell"]
    assert checks[0].answer.contains == "Wi-Fi" and checks[0].answer.equals is None
    assert checks[1].answer.matches == r"^\d+ items$"
    assert checks[2].answer.equals == "3"  # a YAML number is read as text, as for shell checks
    assert checks[3].finished.success is False
    assert checks[4].answer is None and checks[4].finished is None


def test_checks_survive_the_sessions_stored_copy(tmp_path: Path) -> None:
    """A session stores its task as JSON; resume and replay validate it again."""
    from artemis_cli.config.task import Task

    task = _load(tmp_path, "goal: g\nsuccess:\n  - answer: {contains: x}\n  - finished: {success: true}\n")
    again = Task.model_validate(task.model_dump(mode="json"))  # type: ignore[attr-defined]
    assert again.success == task.success  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("body", "line", "field", "fragment"),
    [
        ("goal: g\nsuccess:\n  - answer: Wi-Fi\n", 3, "success[0].answer",
         "must be a mapping with one of equals, contains, matches, e.g. 'answer: {contains: Wi-Fi}' (got 'Wi-Fi')"),
        ("goal: g\nsuccess:\n  - answer: {}\n", 3, "success[0].answer",
         "an answer check needs one of equals, contains, matches"),
        ("goal: g\nsuccess:\n  - answer:\n", 3, "success[0].answer", "'answer' needs a value"),
        ("goal: g\nsuccess:\n  - answer:\n      contains: a\n      equals: b\n", 4, "success[0].answer.contains",
         "use one of equals, contains, matches (found 'equals' and 'contains')"),
        ("goal: g\nsuccess:\n  - answer: {matches: '[a'}\n", 3, "success[0].answer.matches",
         "invalid regular expression: unterminated character set"),
        ("goal: g\nsuccess:\n  - answer: {contain: a}\n", 3, "success[0].answer.contain",
         "unknown key 'contain' (did you mean 'contains'?); allowed: equals, contains, matches"),
        ("goal: g\nsuccess:\n  - answer:\n      contains: a\n    contains: b\n", 5, "success[0].contains",
         "put 'contains' inside answer, e.g. 'answer: {contains: …}'"),
        ("goal: g\nsuccess:\n  - finished: false\n", 3, "success[0].finished",
         "must be a mapping, e.g. 'finished: {success: false}' (got false)"),
        ("goal: g\nsuccess:\n  - finished: {}\n", 3, "success[0].finished.success", "required key is missing"),
        ("goal: g\nsuccess:\n  - finished:\n", 3, "success[0].finished", "'finished' needs a value"),
        ("goal: g\nsuccess:\n  - finished: {success: 'false'}\n", 3, "success[0].finished.success",
         "must be true or false (got 'false')"),
        ("goal: g\nsuccess:\n  - finished: {success: false, answer: x}\n", 3, "success[0].finished.answer",
         "unknown key 'answer'"),
        ("goal: g\nsuccess:\n  - finished: {success: false}\n    answer: {contains: x}\n", 3,
         "success[0].finished", "one check per item, found 'answer' and 'finished'"),
        ("goal: g\nsuccess:\n  - finished: {success: false}\n    equals: x\n", 4, "success[0].equals",
         "'equals' only goes with 'shell'"),
        ("goal: g\nsuccess:\n  - equals: '1'\n", 3, "success[0]",
         "a success check needs one of shell, visible, not_visible, app, answer, finished"),
    ],
)
def test_bad_answer_and_finished_checks_name_file_line_and_field(
    tmp_path: Path, body: str, line: int, field: str, fragment: str
) -> None:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, body)
    exc = info.value
    assert (exc.line, exc.field) == (line, field), str(exc)  # type: ignore[attr-defined]
    first = str(exc).splitlines()[0]
    assert first.startswith(f"{tmp_path / 't.yaml'}:{line}: {field}: "), first
    assert fragment in first, first
