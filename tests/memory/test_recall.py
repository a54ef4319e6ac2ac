"""recall_history over real SQLite/FTS5 (SPEC §10.5)."""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Iterator
from html import escape
from pathlib import Path

import pytest
import sqlite_utils
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from artemis_cli.cli.app import app
from artemis_cli.engine import DataEngine, SessionRecord, StepRecord
from artemis_cli.engine.migrations import MIGRATIONS, migrate
from artemis_cli.errors import SessionNotFound
from artemis_cli.memory.ledger_lines import ledger_lines
from artemis_cli.memory.recall import Recall, RecallError, query_terms

MARKER_STEP = 40
LONG_STEPS = 150
PNG_1 = b"\x89PNG\r\n\x1a\n" + b"one" * 10
PNG_2 = b"\x89PNG\r\n\x1a\n" + b"two" * 10


def node(text: str = "", *, rid: str = "", cls: str = "android.widget.TextView", desc: str = "",
         bounds: str = "[0,0][1080,100]", clickable: bool = False, children: str = "") -> str:
    return (
        f'<node index="0" text="{escape(text)}" resource-id="{rid}" class="{cls}" package="com.example.shop" '
        f'content-desc="{escape(desc)}" checkable="false" checked="false" clickable="{str(clickable).lower()}" '
        f'enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" '
        f'password="false" selected="false" bounds="{bounds}">{children}</node>'
    )


def screen(*labels: str) -> bytes:
    rows = "".join(
        node(label, rid=f"com.example.shop:id/row{i}", bounds=f"[0,{200 + i * 120}][1080,{300 + i * 120}]",
             clickable=True)
        for i, label in enumerate(labels)
    )
    root = node(cls="android.widget.FrameLayout", bounds="[0,0][1080,2400]", children=rows)
    return f"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">{root}</hierarchy>".encode()


def tap(sid: str, n: int, label: str, **kw: object) -> StepRecord:
    return StepRecord(
        session_id=sid, number=n, offset_ms=n * 5000, action_type="tap", action_args={"index": 0},
        x=540, y=250, thought=f"open item {n}",
        target={"text": label, "content_desc": "", "resource_id": "com.example.shop:id/row0",
                "class_name": "android.widget.TextView", "bounds": [0, 200, 1080, 300], "label_source": "index"},
        **kw,  # type: ignore[arg-type]
    )


def build_long_session(engine: DataEngine, steps: int = LONG_STEPS) -> str:
    sid = engine.create_session(SessionRecord(goal="browse the catalogue"))
    for n in range(1, steps + 1):
        labels = [f"Item {n}", "Catalogue", "Next page"]
        if n == MARKER_STEP:
            labels.append("Zanzibar spice tin")
        png = PNG_1 if n % 2 else PNG_2
        engine.record_step(tap(sid, n, f"Item {n}"), blobs={"ui_xml": (screen(*labels), "ui_xml"),
                                                             "pre_screenshot": (png, "screenshot")})
    return sid


@pytest.fixture(scope="module")
def long_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DataEngine, str]]:
    with DataEngine.open(tmp_path_factory.mktemp("long")) as eng:
        sid = build_long_session(eng)
        Recall(eng).sync(sid)
        yield eng, sid


# --- finding things -----------------------------------------------------------------------------


def test_word_seen_only_at_step_40_is_found_with_its_step(long_session: tuple[DataEngine, str]) -> None:
    engine, sid = long_session
    result = Recall(engine).recall(sid, "zanzibar")
    assert result.steps == [MARKER_STEP]
    text = result.render()
    assert text.splitlines()[0] == 'recall_history query="zanzibar": 1 match (best first)'
    assert text.splitlines()[1] == '- Step 40 (T+03:20): tap TextView "Item 40" (id row0) @(540,250) -> ok'
    assert "screen:" in text and "Zanzibar spice tin" in text


def test_results_capped_by_count(long_session: tuple[DataEngine, str]) -> None:
    engine, sid = long_session
    recall = Recall(engine)
    result = recall.recall(sid, "catalogue")
    assert len(result.hits) == 5 and result.total_matches == LONG_STEPS
    assert "5 of 150 matches" in result.render()
    assert len(recall.recall(sid, "catalogue", max_results=2).hits) == 2
    assert len(recall.recall(sid, "catalogue", max_results=1000).hits) == 20  # hard cap
    assert len(recall.recall(sid, "catalogue", max_results=0).hits) == 5  # 0 means the default


def test_results_capped_by_tokens_never_losing_step_numbers(long_session: tuple[DataEngine, str]) -> None:
    engine, sid = long_session
    full = Recall(engine).recall(sid, "catalogue open item", max_results=10)
    small = Recall(engine).recall(sid, "catalogue open item", max_results=10, max_text_tokens=60)
    assert [h.step for h in small.hits] == [h.step for h in full.hits]
    body = "\n".join(h.text() for h in small.hits)
    assert len(body) < len("\n".join(h.text() for h in full.hits))
    assert len(body) <= 450  # ~ _MIN_TEXT_CHARS (400) + separators; heads are kept even beyond it
    for hit in small.hits:
        assert hit.text().startswith(f"- Step {hit.step} (T+")
    assert any(h.truncated for h in small.hits)
    big = Recall(engine).recall(sid, "catalogue open item", max_results=10, max_text_tokens=2000)
    assert sum(len(h.text()) for h in big.hits) <= 2000 * 4


def test_ranking_bm25_then_step_number(engine: DataEngine) -> None:
    sid = engine.create_session(SessionRecord(goal="g"))
    for n in range(1, 9):
        label = "Lighthouse" if n in (3, 7) else f"Other {n}"
        engine.record_step(tap(sid, n, label))
    engine.record_step(StepRecord(session_id=sid, number=9, offset_ms=1, action_type="wait",
                                  thought="the lighthouse lighthouse lighthouse tour again",
                                  action_args={"seconds": 1}))
    result = Recall(engine).recall(sid, "lighthouse")
    assert result.steps[1:] == [3, 7]  # identical texts: earlier step first
    assert set(result.steps) == {3, 7, 9}


def test_cjk_label_is_found(engine: DataEngine) -> None:
    sid = engine.create_session(SessionRecord(goal="打开蓝牙"))
    engine.record_step(tap(sid, 1, "主页"), blobs={"ui_xml": (screen("主页", "应用"), "ui_xml")})
    engine.record_step(tap(sid, 2, "设置"), blobs={"ui_xml": (screen("打开设置页面", "蓝牙和设备"), "ui_xml")})
    engine.record_step(tap(sid, 3, "Done"), blobs={"ui_xml": (screen("Café crème"), "ui_xml")})
    recall = Recall(engine)
    assert recall.recall(sid, "蓝牙").steps == [2]
    assert 2 in recall.recall(sid, "设置").steps
    assert recall.recall(sid, "cafe creme").steps == [3]  # remove_diacritics 2
    assert recall.recall(sid, "CAFÉ").steps == [3]


def test_summaries_chunks_and_verdicts_are_searchable(engine: DataEngine) -> None:
    sid = engine.create_session(SessionRecord(goal="g"))
    for n in range(1, 6):
        engine.record_step(tap(sid, n, f"Item {n}", verdict={"ok": n != 4, "reason": f"check {n}"}))
    recall = Recall(engine)
    assert recall.recall(sid, "giraffe").hits == []
    engine.write_summary(sid, 2, status="ready", text="A giraffe picture fills the screen", source="lens", version=1)
    assert recall.recall(sid, "giraffe").steps == [2]  # picked up by sync (summary_version moved)
    recall.index_summary(sid, 2, "An elephant picture now", version=2)
    assert recall.recall(sid, "giraffe").hits == [] and recall.recall(sid, "elephant").steps == [2]
    assert 4 in recall.recall(sid, "false").steps  # validator verdict {"ok": false}
    recall.index_chunk(sid, 1, 5, "Steps 1-5: browsed the zebra aisle")
    chunk = recall.recall(sid, "zebra")
    assert [(h.kind, h.step, h.end_step) for h in chunk.hits] == [("chunk", 1, 5)]
    assert chunk.hits[0].text().startswith("- Steps 1-5 (T+00:05 → T+00:25): ")
    recall.index_chunk(sid, 1, 5, "Steps 1-5: browsed the okapi aisle")  # a newer version replaces
    assert recall.recall(sid, "zebra").hits == []


def test_index_step_explicitly_and_sync_does_not_duplicate(engine: DataEngine) -> None:
    sid = engine.create_session(SessionRecord(goal="g"))
    rec = engine.record_step(tap(sid, 1, "Walrus"))
    recall = Recall(engine)
    recall.index_step(rec, ui_text="Walrus | Penguin")
    assert recall.sync(sid) == 0
    assert recall.recall(sid, "penguin").steps == [1]
    rows = list(engine.db.query("SELECT kind FROM step_fts WHERE session_id = ? ORDER BY kind", [sid]))
    assert [r["kind"] for r in rows] == ["action", "thought", "ui"]
    recall.index_step(rec, ui_text="Walrus")  # re-index replaces, never duplicates
    assert len(list(engine.db.query("SELECT kind FROM step_fts WHERE session_id = ?", [sid]))) == 3


def test_password_text_is_never_indexed(engine: DataEngine) -> None:
    sid = engine.create_session(SessionRecord(goal="log in"))
    engine.record_step(StepRecord(session_id=sid, number=1, action_type="type_text", action_args={"text": "hunter2"},
                                  target={"class_name": "android.widget.EditText", "label_source": "index",
                                          "password": True, "text": "", "content_desc": "Password"}))
    recall = Recall(engine)
    assert recall.recall(sid, "hunter2").hits == []
    assert "[redacted]" in recall.recall(sid, "password").render()


# --- step ranges, errors, images -----------------------------------------------------------------


def test_step_range_returns_exactly_the_ledger_lines(long_session: tuple[DataEngine, str]) -> None:
    engine, sid = long_session
    result = Recall(engine).recall(sid, step_range="10-14")
    expected = [line for s in engine.get_steps(sid, 10, 14) for line in ledger_lines(s)]
    assert result.range_lines == expected and len(expected) == 5
    assert result.hits == []
    assert result.render().startswith("\n".join(["recall_history steps=10-14", "Ledger of steps 10-14:", *expected,
                                                   "Screen of step 10 (T+00:50), before its action:"]))
    assert [v.step for v in result.views] == [10, 11, 12, 13, 14]  # and each step's screen text
    for bad in ((14, 10), "14-10", "14 to 10"):  # backwards: refused, never reversed
        with pytest.raises(RecallError, match="runs backwards") as info:
            Recall(engine).recall(sid, step_range=bad)
        assert info.value.hint == 'write the lower step first: "10-14"'
    assert Recall(engine).recall(sid, step_range="10 – 14").range_lines == expected
    with_query = Recall(engine).recall(sid, "catalogue", step_range="10-14", max_text_tokens=1)
    assert with_query.range_lines == expected  # full width even when the budget is tiny
    assert set(with_query.steps) <= set(range(10, 15)) and with_query.total_matches == 5


def test_step_range_includes_user_lines(engine: DataEngine) -> None:
    sid = engine.create_session(SessionRecord(goal="g"))
    engine.record_step(tap(sid, 1, "A"))
    engine.record_step(tap(sid, 2, "B", user_instruction="Pick the blue one"))
    result = Recall(engine).recall(sid, step_range="1-2")
    assert result.range_lines == [
        '- Step 1 (T+00:05): tap TextView "A" (id row0) @(540,250) -> ok',
        'User @ Step 2: "Pick the blue one"',
        '- Step 2 (T+00:10): tap TextView "B" (id row0) @(540,250) -> ok',
    ]
    empty = Recall(engine).recall(sid, step_range="50-60")
    assert empty.range_lines == [] and "it has steps 1-2" in empty.render()


def test_empty_query_without_range_is_an_error(engine: DataEngine) -> None:
    sid = engine.create_session(SessionRecord(goal="g"))
    for query in ("", "   ", "*** () :", '""'):
        with pytest.raises(RecallError) as info:
            Recall(engine).recall(sid, query)
        assert info.value.exit_code == 2 and "query" in str(info.value)
    for bad in ("abc", "1-2-3", "x-y"):
        with pytest.raises(RecallError):
            Recall(engine).recall(sid, "x", step_range=bad)
    with pytest.raises(RecallError, match="at most 200"):
        Recall(engine).recall(sid, step_range="1-500")
    with pytest.raises(SessionNotFound):
        Recall(engine).recall("nope", "x")


def test_include_images_returns_one_screenshot(long_session: tuple[DataEngine, str]) -> None:
    engine, sid = long_session
    result = Recall(engine).recall(sid, "zanzibar", include_images=True)
    assert result.image is not None and result.image.step == MARKER_STEP
    assert result.image.png == PNG_2 and result.image.sha256 == engine.get_step(sid, MARKER_STEP).pre_screenshot
    assert result.render().endswith("Screenshot of step 40 attached.")
    many = Recall(engine).recall(sid, "catalogue", include_images=True, max_results=5)
    assert many.image is not None and many.image.step == many.hits[0].step
    ranged = Recall(engine).recall(sid, step_range="7-9", include_images=True)
    assert ranged.image is not None and ranged.image.step == 9 and ranged.image.png == PNG_1
    assert Recall(engine).recall(sid, "zanzibar").image is None


def test_details_add_thought_and_summary(engine: DataEngine) -> None:
    sid = engine.create_session(SessionRecord(goal="g"))
    engine.record_step(tap(sid, 1, "Kiwi", verdict={"ok": True}, foreground_app="com.example.shop"))
    engine.write_summary(sid, 1, status="ready", text="A fruit list with kiwi", source="lens", version=1)
    plain = Recall(engine).recall(sid, "item").hits[0].text()
    detailed = Recall(engine).recall(sid, "item", include_details=True).hits[0].text()
    assert "summary:" not in plain and 'summary: "A fruit list with kiwi"' in detailed
    assert 'validator: "ok: true"' in detailed and "app: com.example.shop" in detailed


def test_render_golden_and_json(engine: DataEngine) -> None:
    sid = engine.create_session(SessionRecord(goal="g"))
    engine.record_step(tap(sid, 1, "Wombat"), blobs={"ui_xml": (screen("Wombat", "Koala"), "ui_xml")})
    engine.record_step(tap(sid, 2, "Koala", result_status="error", result_detail="DeviceError: boom"))
    engine.record_step(tap(sid, 3, "Emu"), blobs={"ui_xml": (screen("Emu"), "ui_xml")})
    from artemis_cli.memory.notes import save_note

    save_note(engine, sid, "animals", "koala seen twice", 2)
    result = Recall(engine).recall(sid, "koala (AND* ", step_range="3-3")
    assert result.render() == "\n".join([
        'recall_history query="koala (AND*" steps=3-3: no matches.',
        "Ledger of steps 3-3:",
        '- Step 3 (T+00:15): tap TextView "Emu" (id row0) @(540,250) -> ok',
        "Screen of step 3 (T+00:15), before its action:",
        '  TextView "Emu"',
    ])
    result = Recall(engine).recall(sid, "koala (AND* ")
    assert result.render() == "\n".join([
        'recall_history query="koala (AND*": 3 matches (best first)',
        '- Step 1 (T+00:05): tap TextView "Wombat" (id row0) @(540,250) -> ok',
        '    screen: "Wombat" | "Koala"',
        '- Note "animals" v1 @ Step 2 (T+00:10): "koala seen twice"',
        '- Step 2 (T+00:10): tap TextView "Koala" (id row0) @(540,250) -> error: DeviceError: boom',
    ])
    data = json.loads(json.dumps(result.to_dict()))
    assert [(r["kind"], r["step"]) for r in data["results"]] == [("step", 1), ("note", 2), ("step", 2)]
    assert data["results"][1]["time"] == "T+00:10" and data["terms"] == ["koala"]


# --- robustness -----------------------------------------------------------------------------------

NASTY = ['"', "'", "(", ")", "AND", "OR", "NOT", "NEAR(", "*", ":", "^", "-", "+", "col:val", "{a b}",
         "\\", "\x00", "é", "设置", "%", "_", "[x]", "zanzibar", "NEAR/3", "\u2028"]


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(st.text(max_size=60), st.lists(st.sampled_from(NASTY), max_size=8).map(" ".join)))
def test_any_query_never_raises_except_empty(long_session: tuple[DataEngine, str], query: str) -> None:
    engine, sid = long_session
    recall = Recall(engine)
    if not query_terms(query):
        with pytest.raises(RecallError):
            recall.recall(sid, query)
        return
    result = recall.recall(sid, query)
    assert len(result.hits) <= 5
    for hit in result.hits:
        assert hit.text().startswith(("- Step ", "- Note ", "- Steps "))
    result.render()
    json.dumps(result.to_dict())


# --- migration ------------------------------------------------------------------------------------


def test_migration_2_recorded_and_idempotent(tmp_path: Path) -> None:
    DataEngine.open(tmp_path).close()
    db = sqlite_utils.Database(tmp_path / "artemis.db")
    names = [r["name"] for r in db.query("SELECT name FROM _migrations ORDER BY id")]
    assert names[:2] == ["0001_core_tables", "0002_memory_notes_fts"] == [n for n, _ in MIGRATIONS][:2]
    tables = set(db.table_names())
    assert {"notes", "recall_indexed", "step_fts", "note_fts", "chunk_fts"} <= tables
    assert migrate(db) == []
    with DataEngine.open(tmp_path) as engine:
        assert migrate(engine.db) == []
    tokenizer = next(iter(db.query("SELECT sql FROM sqlite_master WHERE name = 'step_fts'")))["sql"]
    assert "unicode61 remove_diacritics 2" in tokenizer


# --- end to end -----------------------------------------------------------------------------------


def test_scripted_run_is_recallable(tmp_path: Path) -> None:
    from artemis_cli.config.profile import load_profile
    from artemis_cli.config.task import load_task
    from artemis_cli.models.offline.scripted import ScriptedModel
    from artemis_cli.models.registry import reference_script
    from artemis_cli.runner import run_task
    from artemis_cli.sim.phone import SimPhone

    task = load_task(Path(__file__).resolve().parents[2] / "tasks" / "settings-bluetooth-airplane.yaml")
    with DataEngine.open(tmp_path / "run") as engine:
        run = run_task(task, load_profile("flash"), SimPhone(popups=False), ScriptedModel(reference_script(task)),
                       engine, real_time=False)
        assert run.status == "succeeded"
        result = Recall(engine).recall(run.session_id, "airplane_switch")
        assert result.steps[0] == 3
        assert "airplane_switch" in result.render().splitlines()[1]


def test_cli_recall(long_session: tuple[DataEngine, str]) -> None:
    engine, sid = long_session
    runner = CliRunner()
    data_dir = str(engine.data_dir)
    res = runner.invoke(app, ["recall", sid[:15], "zanzibar", "--json", "--data-dir", data_dir])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert [r["step"] for r in data["results"]] == [MARKER_STEP] and data["session_id"] == sid
    res = runner.invoke(app, ["recall", sid, "zanzibar", "--steps", "39-41", "--data-dir", data_dir])
    assert res.exit_code == 0
    assert "Step 40 (T+03:20)" in res.stdout and "Ledger of steps 39-41" in res.stdout
    assert res.stdout.count("- Step 4") >= 2


def test_cli_recall_empty_query_exits_2(long_session: tuple[DataEngine, str], tmp_path: Path) -> None:
    import subprocess
    import sys

    engine, sid = long_session
    proc = subprocess.run([sys.executable, "-m", "artemis_cli", "recall", sid, "  ", "--data-dir", str(engine.data_dir)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "Error: nothing to recall: give words to search for, --steps" in proc.stderr


def test_recall_latency_150_steps(long_session: tuple[DataEngine, str]) -> None:
    engine, sid = long_session
    recall = Recall(engine)
    timings = []
    for query in ["zanzibar", "catalogue next page", "item 77", "设置", "nothing-matches-this", "open"] * 5:
        t0 = time.perf_counter()
        recall.recall(sid, query)
        timings.append((time.perf_counter() - t0) * 1000)
    print(f"\nrecall latency over {LONG_STEPS} steps: median {statistics.median(timings):.2f} ms, "
          f"max {max(timings):.2f} ms (n={len(timings)})")
