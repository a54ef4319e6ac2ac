"""Steps by number, time and app (SPEC §10.5): a step's screen text, summary and ledger line, within
the recall caps; the recall_history tool and the CLI surface of them. Real SQLite, no mocks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_recall import screen, tap
from typer.testing import CliRunner

from artemis_cli.cli.app import app
from artemis_cli.engine import DataEngine, SessionRecord, StepRecord
from artemis_cli.memory.ledger_lines import ledger_lines
from artemis_cli.memory.recall import Recall, RecallError
from artemis_cli.models.base import FunctionCall
from artemis_cli.operators.memory_tools import MemoryTools
from artemis_cli.operators.tools import validate_call

SETTINGS = "com.android.settings"
CONTACTS = "com.android.contacts"


def build(engine: DataEngine, steps: int = 60, labels_per_screen: int = 12) -> str:
    """Steps every 5 s; steps 1-20 and 41-60 in Settings, 21-40 in Contacts; each screen shows
    its own values; step 33 carries a summary."""
    sid = engine.create_session(SessionRecord(goal="look around"))
    for n in range(1, steps + 1):
        app_ = CONTACTS if 21 <= n <= 40 else SETTINGS
        labels = [f"Screen {n}", f"Order #A-{10000 + n}", f"Price ${n}.99",
                  *[f"Row {k} of screen {n}" for k in range(labels_per_screen - 3)]]
        engine.record_step(tap(sid, n, f"Row 0 of {n}", foreground_app=app_),
                           blobs={"ui_xml": (screen(*labels), "ui_xml")})
    if steps >= 33:
        engine.write_summary(sid, 33, status="ready", text="A contact card with the phone number +1 555-0133.",
                             source="lens", version=1)
    return sid


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DataEngine, str]]:
    with DataEngine.open(tmp_path_factory.mktemp("views")) as eng:
        sid = build(eng)
        Recall(eng).sync(sid)
        yield eng, sid


# --- one step, a range ---------------------------------------------------------------------------


def test_one_step_brings_its_screen_text_summary_and_ledger_line(session: tuple[DataEngine, str]) -> None:
    engine, sid = session
    result = Recall(engine).recall(sid, step_range="33-33")
    (ledger,) = ledger_lines(engine.get_step(sid, 33))
    assert result.render() == "\n".join([
        "recall_history steps=33-33",
        "Ledger of steps 33-33:",
        ledger,
        "Screen of step 33 (T+02:45, com.android.contacts), before its action:",
        '  summary: "A contact card with the phone number +1 555-0133."',
        '  TextView "Screen 33"',
        '  TextView "Order #A-10033"',
        '  TextView "Price $33.99"',
        *[f'  TextView "Row {k} of screen 33"' for k in range(9)],
    ])
    data = json.loads(json.dumps(result.to_dict()))
    (shown,) = data["screens"]
    assert shown["step"] == 33 and shown["app"] == CONTACTS and shown["screen"][1] == 'TextView "Order #A-10033"'


def test_a_long_range_keeps_every_ledger_line_and_screens_as_fit(session: tuple[DataEngine, str]) -> None:
    engine, sid = session
    result = Recall(engine).recall(sid, step_range="1-60")
    expected = [line for s in engine.get_steps(sid, 1, 60) for line in ledger_lines(s)]
    assert result.range_lines == expected  # full width, the whole range (SPEC)
    shown = [v.step for v in result.views]
    assert shown == list(range(1, len(shown) + 1)) and 3 <= len(shown) < 60
    text = result.render()
    assert len(text) <= 2000 * 4 + 300  # within the cap (the cut notice may go a little over)
    (notice,) = [n for n in result.notices if "not shown" in n]
    first = len(shown) + 1
    assert f"screens of step(s) {first}-60 are not shown" in notice
    assert f'step_range="{first}-{first + 2}"' in notice
    # asking for what was cut brings it
    more = Recall(engine).recall(sid, step_range=f"{first}-{first + 2}")
    assert [v.step for v in more.views] == [first, first + 1, first + 2] and not more.notices


def test_a_screen_too_big_for_the_cap_is_cut_by_lines_and_says_so(engine: DataEngine) -> None:
    sid = build(engine, steps=1, labels_per_screen=18)
    result = Recall(engine).recall(sid, step_range="1-1", max_text_tokens=90)
    (view,) = result.views
    assert 0 < view.cut_lines < 18 and view.lines[:3] == ('TextView "Screen 1"', 'TextView "Order #A-10001"',
                                                          'TextView "Price $1.99"')
    assert view.text().endswith(f'  … {view.cut_lines} more element line(s) cut to fit; '
                                'ask step_range="1-1" for the whole screen')
    assert len(result.render()) <= 90 * 4


def test_steps_without_a_dump_say_so(engine: DataEngine) -> None:
    sid = engine.create_session(SessionRecord(goal="g"))
    engine.record_step(StepRecord(session_id=sid, number=1, offset_ms=0, action_type="wait", action_args={"seconds": 1}))
    engine.record_step(tap(sid, 2, "x"), blobs={"ui_xml": (b"<hierarchy><broken", "ui_xml")})
    text = Recall(engine).recall(sid, step_range="1-2").render()
    assert "Screen of step 1 (T+00:00), before its action:\n  (no UI dump was recorded for this step)" in text
    assert "Screen of step 2 (T+00:10), before its action:\n  (the UI dump could not be read" in text


# --- at -------------------------------------------------------------------------------------------


def test_at_finds_the_step_at_or_just_before_the_time_and_its_neighbours(session: tuple[DataEngine, str]) -> None:
    engine, sid = session
    result = Recall(engine).recall(sid, at="T+02:47")  # step 33 is at T+02:45, step 34 at T+02:50
    assert result.at_step == 33 and result.step_range == (31, 35)
    assert result.render().splitlines()[:3] == [
        'recall_history at="T+02:47" steps=31-35',
        "At T+02:47: step 33 (T+02:45) is the step at or just before it.",
        "Ledger of steps 31-35:",
    ]
    assert [v.step for v in result.views] == [31, 32, 33, 34, 35]
    exact = Recall(engine).recall(sid, at="2:50")
    assert exact.at_step == 34
    # a tighter cap: the anchor's screen first, then the next step's, then the one before, ...
    priority = [33, 34, 32, 35, 31]
    seen = set()
    for tokens in range(200, 800, 20):
        shown = [v.step for v in Recall(engine).recall(sid, at="T+02:47", max_text_tokens=tokens).views]
        assert sorted(shown) == sorted(priority[: len(shown)]), (tokens, shown)
        seen.add(len(shown))
    assert {1, 2, 3, 4, 5} <= seen
    assert Recall(engine).recall(sid, at="T+00:00").at_step == 1
    late = Recall(engine).recall(sid, at="T+99:00")
    assert late.at_step == 60 and late.step_range == (58, 60)


def test_at_with_a_query_searches_around_that_time(session: tuple[DataEngine, str]) -> None:
    engine, sid = session
    result = Recall(engine).recall(sid, "price", at="T+01:00")
    assert sorted(result.steps) == [10, 11, 12, 13, 14] and result.step_range == (10, 14)


def test_bad_at_and_conflicting_arguments_are_errors(session: tuple[DataEngine, str]) -> None:
    engine, sid = session
    with pytest.raises(RecallError, match="is not a session time"):
        Recall(engine).recall(sid, at="12:99")
    with pytest.raises(RecallError, match="not both"):
        Recall(engine).recall(sid, step_range="1-2", at="T+00:05")
    with pytest.raises(RecallError, match="needs a query"):
        Recall(engine).recall(sid, "", at="  ", package="")


# --- package --------------------------------------------------------------------------------------


def test_package_alone_lists_that_apps_steps_latest_first(session: tuple[DataEngine, str]) -> None:
    engine, sid = session
    result = Recall(engine).recall(sid, package=CONTACTS)
    lines = result.render().splitlines()
    assert lines[:3] == [f"recall_history package={CONTACTS}", f"Steps in {CONTACTS}: 21-40 (20 steps).",
                         f"Ledger of the steps in {CONTACTS}:"]
    assert result.range_lines == [ln for s in engine.get_steps(sid, 21, 40) for ln in ledger_lines(s)]
    assert result.views and result.views[-1].step == 40  # the latest screens first
    assert all(v.app == CONTACTS for v in result.views)
    settings = Recall(engine).recall(sid, package=SETTINGS, max_text_tokens=300)
    assert settings.lead == [f"Steps in {SETTINGS}: 1-20, 41-60 (40 steps)."]
    assert settings.ledger_heading() == f"Ledger of the latest steps in {SETTINGS}:"
    assert any("earlier steps in com.android.settings" in n for n in settings.notices)


def test_package_filters_a_query_and_a_range(session: tuple[DataEngine, str]) -> None:
    engine, sid = session
    hits = Recall(engine).recall(sid, "price", package=CONTACTS, max_results=20)
    assert hits.total_matches == 20 and set(hits.steps) <= set(range(21, 41))
    ranged = Recall(engine).recall(sid, step_range="38-43", package=CONTACTS)
    assert len(ranged.range_lines) == 6  # the range's ledger lines stay whole
    assert [v.step for v in ranged.views] == [38, 39, 40]
    unknown = Recall(engine).recall(sid, package="com.example.nothing")
    assert unknown.lead == [f"No step of this session was in com.example.nothing. Apps seen: {SETTINGS} (40 steps), "
                            f"{CONTACTS} (20 steps)."]


# --- the tool -------------------------------------------------------------------------------------


def call(tools: MemoryTools, **args: object) -> dict[str, object]:
    return tools.handler(61)(validate_call(FunctionCall("recall_history", dict(args))))


def test_the_tool_takes_at_and_package_and_refuses_a_backwards_range(session: tuple[DataEngine, str]) -> None:
    engine, sid = session
    tools = MemoryTools(engine, sid, Recall(engine))
    one = call(tools, step_range="33-33")
    assert "Screen of step 33" in str(one["results"]) and "+1 555-0133" in str(one["results"])
    at = call(tools, at="T+02:47")
    assert str(at["results"]).splitlines()[1] == "At T+02:47: step 33 (T+02:45) is the step at or just before it."
    app_ = call(tools, query="price", package=CONTACTS)
    assert set(app_["steps"]) <= set(range(21, 41))  # type: ignore[call-overload]
    backwards = call(tools, step_range="40-33")
    assert backwards == {"error": 'step_range \'40-33\' runs backwards (write the lower step first: "33-40")'}
    bad_time = call(tools, at="12:99")
    assert "is not a session time" in str(bad_time["error"]) and "T+mm:ss" in str(bad_time["error"])


# --- the CLI --------------------------------------------------------------------------------------


def test_cli_steps_at_and_package(session: tuple[DataEngine, str]) -> None:
    engine, sid = session
    runner = CliRunner()
    data_dir = ["--data-dir", str(engine.data_dir)]
    res = runner.invoke(app, ["recall", sid, "--steps", "33-33", *data_dir])
    assert res.exit_code == 0, res.output
    assert "Screen of step 33 (T+02:45, com.android.contacts), before its action:" in res.stdout
    assert 'TextView "Order #A-10033"' in res.stdout and 'summary: "A contact card' in res.stdout
    res = runner.invoke(app, ["recall", sid, "--at", "T+02:47", "--json", *data_dir])
    assert res.exit_code == 0 and json.loads(res.stdout)["at_step"] == 33
    res = runner.invoke(app, ["recall", sid, "--package", CONTACTS, *data_dir])
    assert res.exit_code == 0 and f"Steps in {CONTACTS}: 21-40 (20 steps)." in res.stdout
    for args, message in ((["--at", "12:99"], "is not a session time"), (["--steps", "40-33"], "runs backwards"),
                          (["--package", "not a package"], "is not a package name"),
                          (["--steps", "1-2", "--at", "T+00:05"], "not both")):
        res = runner.invoke(app, ["recall", sid, *args, *data_dir])
        assert res.exit_code == 2 and message in res.output, (args, res.output)


def test_cli_prints_device_text_literally(tmp_path: Path) -> None:
    with DataEngine.open(tmp_path / "d") as engine:
        sid = engine.create_session(SessionRecord(goal="g"))
        engine.record_step(tap(sid, 1, "[bold]x[/bold]"), blobs={"ui_xml": (screen("[red]Alert[/red]", "a\\b"), "ui_xml")})
        data_dir = str(engine.data_dir)
    res = CliRunner().invoke(app, ["recall", sid, "--steps", "1-1", "--data-dir", data_dir])
    assert res.exit_code == 0, res.output
    assert 'TextView "[red]Alert[/red]"' in res.stdout and 'TextView "a\\\\b"' in res.stdout


def test_the_index_reads_every_text_of_the_dump_not_just_the_callers_labels(engine: DataEngine) -> None:
    from artemis_cli.sim.phone import SimPhone

    phone = SimPhone(popups=False)
    phone.launch(SETTINGS)
    phone.tap(540, 1364)  # About phone: rows whose texts are their children's ("Build number", the value)
    sid = engine.create_session(SessionRecord(goal="g"))
    stored = engine.record_step(tap(sid, 1, "About phone", foreground_app=SETTINGS),
                                blobs={"ui_xml": (phone.hierarchy().encode(), "ui_xml")})
    # what the step writer passes today: the element nodes' own labels (a row has none of its own)
    Recall(engine).index_step(stored, ui_text="About phone Navigate up")
    result = Recall(engine).recall(sid, "build number")
    assert result.steps == [1] and '"Build number" | "AP1A.240305.019"' in result.hits[0].text()
    rows = [r["text"] for r in engine.db.query("SELECT text FROM step_fts WHERE kind = 'ui' AND session_id = ?", [sid])]
    assert rows and "AP1A.240305.019" in rows[0] and "Wi-Fi" not in rows[0] and "Home" not in rows[0]  # no bars


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(st.none(), st.text(max_size=20), st.from_regex(r"T\+\d{1,3}:\d{2}", fullmatch=True)),
       st.one_of(st.none(), st.text(max_size=30), st.sampled_from([SETTINGS, CONTACTS, "a.b"])),
       st.one_of(st.none(), st.text(max_size=12), st.from_regex(r"\d{1,3}-\d{1,3}", fullmatch=True)))
def test_any_at_package_or_range_is_answered_or_a_usage_error(
        session: tuple[DataEngine, str], at: str | None, package: str | None, steps: str | None) -> None:
    engine, sid = session
    try:
        result = Recall(engine).recall(sid, "order", at=at, package=package, step_range=steps)
    except RecallError as exc:
        assert exc.exit_code == 2 and str(exc)
        return
    assert len(result.render()) <= 2000 * 4 + 2000 or len(result.range_lines) > 20  # a long range may overflow
    json.dumps(result.to_dict())
