"""token_usage (issue 13): a session's llm_calls summed by role and role group, on real SQLite.

Each figure is checked against plain Python sums over the rows written, so a wrong GROUP BY, a
dropped status or a role put in the wrong group fails here."""

from __future__ import annotations

from artemis_cli.engine import DataEngine, LlmCallRecord, SessionRecord
from artemis_cli.engine.token_usage import GROUP_KEYS, TokenCounts, token_usage

ROWS = [
    # role, status, prompt, cached, completion, thoughts
    ("operator", "ok", 1000, 800, 40, 10),
    ("operator", "error", 1200, 900, 0, 0),  # a garbled reply: the prompt was billed
    ("operator", "error", 0, 0, 0, 0),  # a 503: no answer, nothing billed
    ("operator", "ok", 1300, 1000, 30, 0),
    ("lens", "ok", 2100, 0, 25, 5),
    ("lens", "ok", 2200, 0, 20, 0),
    ("chunk_lens", "ok", 3000, 0, 300, 0),
    ("planner", "ok", 900, 0, 60, 20),
    ("validator", "ok", 700, 0, 15, 0),
    ("validator", "error", 650, 0, 0, 0),
    ("checker", "ok", 500, 0, 8, 0),
    ("mystery_role", "ok", 100, 0, 1, 0),
]


def _record(engine: DataEngine, sid: str, rows: list[tuple[str, str, int, int, int, int]]) -> None:
    for i, (role, status, prompt, cached, completion, thoughts) in enumerate(rows):
        engine.record_llm_call(LlmCallRecord(
            session_id=sid, role=role, model="gemini-2.5-flash", step=i + 1, prompt_tokens=prompt,
            cached_tokens=cached, completion_tokens=completion, thoughts_tokens=thoughts, status=status,
            error_class=None if status == "ok" else "X"))


def _expected(role: str) -> TokenCounts:
    mine = [r for r in ROWS if r[0] == role]
    return TokenCounts(calls=len(mine), failed_calls=sum(1 for r in mine if r[1] != "ok"),
                       prompt=sum(r[2] for r in mine), cached=sum(r[3] for r in mine),
                       completion=sum(r[4] for r in mine), thoughts=sum(r[5] for r in mine))


def test_every_attempt_counts_by_role_group_and_total(engine: DataEngine, session_id: str) -> None:
    other = engine.create_session(SessionRecord(goal="another session"))
    _record(engine, session_id, ROWS)
    _record(engine, other, [("operator", "ok", 99_999, 0, 1, 0), ("lens", "ok", 77_777, 0, 1, 0)])

    usage = token_usage(engine, session_id)

    roles = {r[0] for r in ROWS}
    assert {r.role for r in usage.roles} == roles
    for role in roles:
        assert usage.role(role) == _expected(role), role
    assert usage.role("failure_analyzer") == TokenCounts()  # no calls: no row
    # display order: operator, visual lens, chunk lens, planner, validator, checker, then others
    assert [r.role for r in usage.roles] == ["operator", "lens", "chunk_lens", "planner", "validator", "checker",
                                             "mystery_role"]
    assert {r.role: r.group for r in usage.roles} == {
        "operator": "operator", "lens": "lens", "chunk_lens": "lens", "planner": "pro_roles",
        "validator": "pro_roles", "checker": "pro_roles", "mystery_role": "other"}
    assert [r.label for r in usage.roles][:3] == ["operator", "visual lens", "chunk lens"]

    assert usage.group("lens").counts == _expected("lens") + _expected("chunk_lens")
    assert usage.group("pro_roles").counts == _expected("planner") + _expected("validator") + _expected("checker")
    assert sum((g.counts for g in usage.groups), TokenCounts()) == usage.total
    total = usage.total
    assert total.calls == len(ROWS)
    assert total.failed_calls == sum(1 for r in ROWS if r[1] != "ok") == 3
    assert total.prompt == sum(r[2] for r in ROWS)  # the billed error attempts included
    assert total.output == sum(r[4] + r[5] for r in ROWS)  # output = completion + thoughts
    assert total.cached_share == sum(r[3] for r in ROWS) / sum(r[2] for r in ROWS)
    assert usage.billed


def test_to_dict_has_roles_groups_and_total(engine: DataEngine, session_id: str) -> None:
    _record(engine, session_id, ROWS)
    data = token_usage(engine, session_id).to_dict()
    assert data["output_is"] == "completion + thoughts"
    assert set(data["groups"]) == set(GROUP_KEYS)
    assert data["groups"]["lens"]["roles"] == ["lens", "chunk_lens"]
    assert data["groups"]["lens"]["prompt"] == 2100 + 2200 + 3000
    assert data["roles"]["chunk_lens"] == {"group": "lens", "label": "chunk lens", "calls": 1, "failed_calls": 0,
                                           "prompt": 3000, "cached": 0, "completion": 300, "thoughts": 0,
                                           "output": 300, "cached_share": 0.0}
    assert data["total"]["prompt"] == sum(g["prompt"] for g in data["groups"].values())
    assert data["total"]["output"] == sum(r["output"] for r in data["roles"].values())


def test_a_session_without_billed_tokens(engine: DataEngine, session_id: str) -> None:
    empty = token_usage(engine, session_id)
    assert empty.roles == () and empty.total == TokenCounts() and not empty.billed
    assert empty.total.cached_share is None
    # an offline model records its turns with zero usage: calls, but nothing billed
    _record(engine, session_id, [("operator", "ok", 0, 0, 0, 0)] * 3)
    offline = token_usage(engine, session_id)
    assert offline.total.calls == 3 and not offline.billed
