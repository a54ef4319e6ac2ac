"""Every shipped task is solvable from what the model is told (issue 34 item 1).

A scripted run passes on a reference that holds the password; a model only has the goal, the
task's secret names and the screen. So, for every task file under tasks/ (tasks/bench and any
subdirectory included), each reference ``type`` step must type something the model can know:

* **Nothing literal into a password field.** A field is a password field when the step's
  ``into`` selector names it so: its id, text, text_contains or desc holds "password",
  "passcode" or "pin" as a word (``id: password``, ``text: PIN``, ``id: pin_code``). That is the
  selector a model reads too (the field's id and hint are in its element line), and it is the
  rule the sim's and real apps' login fields meet; a field whose selector says nothing of a
  password is held to the next rule anyway, so a literal cannot slip through unseen. Such a step
  types ``secret: NAME`` (the task declares NAME under ``secrets:``).
* **No literal the goal never mentions.** A literal ``text`` passes when, case and whitespace
  aside, it is part of the goal, or each of its words is a word of the goal (a plural's ``s``
  aside: "bills" for "bill"), of a note the reference saved before it (``note`` steps copy what
  the screen showed, as a model's save_note would), or one of the values :data:`SEEN_ON_SCREEN`
  lists for that task, each with where the screen shows it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from artemis_cli.config.task import Selector, Task, load_task

TASKS_DIR = Path(__file__).resolve().parents[2] / "tasks"
ALL_TASKS = sorted(TASKS_DIR.rglob("*.yaml"))
_PASSWORD_WORD = re.compile(r"(?<![a-z])(pass(?:word|code)|pin)(?![a-z])")
_WORD = re.compile(r"[^\W_]+")

#: Values a task types that the model reads off the screen during the run (the goal asks for them
#: without being able to give them): task id -> value -> where the screen shows it.
SEEN_ON_SCREEN = {
    "bench-long-recall": {"ART-10311": "the order number on the Shop's checkout screen (the goal asks for it)"},
}


def _words(text: str) -> set[str]:
    return {w.casefold() for w in _WORD.findall(text)}


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def password_field(into: Selector | None) -> bool:
    """Whether a ``type`` step's field is a password field, by what its selector names."""
    if into is None:
        return False
    named = " ".join(str(v) for v in (into.id, into.text, into.text_contains, into.desc) if v)
    return bool(_PASSWORD_WORD.search(named.casefold().replace("_", " ")))


def untold_literals(task: Task) -> list[str]:
    """The reference's ``type`` steps a model could not type from what it is told."""
    goal, goal_words = _norm(task.goal), _words(task.goal)
    noted: set[str] = set()
    screen = SEEN_ON_SCREEN.get(task.id, {})
    problems: list[str] = []
    for i, step in enumerate(task.reference):
        if step.note is not None:
            noted |= _words(step.note.content)
        spec = step.type
        if spec is None:
            continue
        if spec.text is not None and password_field(spec.into):
            problems.append(f"reference[{i}] types a literal into a password field: declare a secret "
                            "(secrets: {NAME: description}) and type {secret: NAME}")
            continue
        if spec.text is None or _norm(spec.text) in goal:
            continue
        rest = spec.text
        for value in screen:
            rest = rest.replace(value, " ")
        known = goal_words | noted
        missing = sorted(w for w in _words(rest) if w not in known and w.removesuffix("s") not in known)
        if missing:
            problems.append(f"reference[{i}] types {spec.text!r}, which the goal never mentions "
                            f"({', '.join(missing)}); state it in the goal")
    return problems


@pytest.mark.parametrize("path", ALL_TASKS, ids=lambda p: str(p.relative_to(TASKS_DIR)))
def test_every_typed_value_is_one_the_model_is_told(path: Path) -> None:
    task = load_task(path)
    assert untold_literals(task) == [], f"{path.relative_to(TASKS_DIR)}: {untold_literals(task)}"


def test_the_tasks_walked_include_the_bench_and_both_shop_logins() -> None:
    names = {str(p.relative_to(TASKS_DIR)) for p in ALL_TASKS}
    assert {"shop-buy-one.yaml", "shop-office-order.yaml", "bench/bench-shop-restock.yaml"} <= names
    logins = [t for t in map(load_task, ALL_TASKS)
              if any(s.type is not None and password_field(s.type.into) for s in t.reference)]
    assert len(logins) >= 5
    for task in logins:  # each types its password as a secret it declares, and names the username
        assert task.secrets == {"shop_password": "the demo account's password"}, task.id
        assert "username demo" in task.goal, task.id


def test_the_rule_catches_a_literal_password_and_an_untold_value(tmp_path: Path) -> None:
    """The rule fails both ways it should: a literal into {id: password}, even one the goal states,
    and a value the goal never mentions; a declared secret and a value from the goal pass."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: bad\ngoal: Log in as demo with password hunter2, then search for lamps\n"
                   "reference:\n"
                   "  - type: {text: demo, into: {id: username}}\n"
                   "  - type: {text: hunter2, into: {id: password}}\n"
                   "  - type: {text: hunter2, into: {text: PIN code}}\n"
                   "  - type: {text: desk chairs, into: {id: search}}\n", encoding="utf-8")
    problems = untold_literals(load_task(bad))
    assert [p.split(" ")[0] for p in problems] == ["reference[1]", "reference[2]", "reference[3]"], problems
    assert "password field" in problems[0] and "password field" in problems[1]
    assert "chairs, desk" in problems[2]
    good = tmp_path / "good.yaml"
    good.write_text("id: good\ngoal: Log in as demo, then search for desk lamps\n"
                    "secrets: {pw: the account's password}\n"
                    "reference:\n"
                    "  - type: {text: demo, into: {id: username}}\n"
                    "  - type: {secret: pw, into: {id: password}}\n"
                    "  - type: {text: Desk Lamps, into: {id: search}}\n", encoding="utf-8")
    assert untold_literals(load_task(good)) == []
    assert not password_field(Selector(id="spinner")) and password_field(Selector(id="pin_entry"))
