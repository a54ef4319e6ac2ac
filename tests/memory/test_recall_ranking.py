"""recall ranking and snippets (SPEC §10.5), over real SQLite/FTS5: phrases first, then all terms,
then bm25; the same screen seen again goes last; snippets keep values whole."""

from __future__ import annotations

from dataclasses import replace

import pytest
from test_recall import screen, tap

from artemis_cli.engine import DataEngine, SessionRecord
from artemis_cli.memory import recall_search
from artemis_cli.memory.recall import Recall


def record(engine: DataEngine, sid: str, n: int, *labels: str, thought: str | None = None) -> None:
    step = tap(sid, n, f"Row {n}")
    engine.record_step(replace(step, thought=thought or step.thought), blobs={"ui_xml": (screen(*labels), "ui_xml")})


def test_exact_phrase_ranks_device_name_above_connected_devices(engine: DataEngine) -> None:
    sid = engine.create_session(SessionRecord(goal="rename the phone"))
    # Step 1 would win on bm25 alone: short, "device" twice, and it has "name" too, just not next to it.
    record(engine, sid, 1, "Connected devices", "Pair new device", "Name")
    record(engine, sid, 2, "About phone", "Device name", "Artemis Sim", "Model", "Artemis Sim", "Android version",
           "14", "Build number", "AP1A.240305.019", "Legal information", "Regulatory labels", "Emergency info")
    record(engine, sid, 3, "Connected devices", "Bluetooth", "Pairing")
    result = Recall(engine).recall(sid, "device name")
    assert result.steps[:3] == [2, 1, 3]
    assert result.hits[0].text().splitlines()[1].startswith('    screen: "About phone" | "Device name" | "Artemis Sim"')
    question = Recall(engine).recall(sid, "what is the device name?")
    assert question.steps[0] == 2


def test_all_terms_rank_before_some_terms_then_bm25(engine: DataEngine) -> None:
    sid = engine.create_session(SessionRecord(goal="g"))
    record(engine, sid, 1, "Lamp", "Lamp", "Lamp")  # one rare term, often, in a short text: best bm25
    record(engine, sid, 2, "Desk organizer", "Reading lamp", "Shelf", "Chair", "Rug", "Curtains", "Sofa", "Table",
           "Mirror", "Vase", "Clock", "Cushion")  # both terms, apart, in a long text
    for n in range(3, 8):
        record(engine, sid, n, "Desk", "Office")  # "desk" is common: worth little to bm25
    recall = Recall(engine)
    assert recall.recall(sid, "lamp for the desk").steps == [2, 1, 3, 4, 5]
    # bm25 alone would put step 1 first: it does for one term
    assert recall.recall(sid, "lamp").steps == [1, 2]


def test_a_phrase_match_is_found_past_the_fts_row_cap(engine: DataEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    sid = engine.create_session(SessionRecord(goal="g"))
    for n in range(1, 9):
        record(engine, sid, n, "Order", "Order", "Order history", "Number of orders")
    record(engine, sid, 9, "Thank you", "Your order number is ART-10001", "Some", "Other", "Long", "Text", "Here")
    monkeypatch.setattr(recall_search, "FTS_ROWS", 3)  # the "any term" query sees only 3 rows per table
    result = Recall(engine).recall(sid, "what was the order number?")
    assert result.steps[0] == 9 and "ART-10001" in result.hits[0].text()


def test_the_same_screen_again_goes_after_other_screens_and_is_named(engine: DataEngine) -> None:
    sid = engine.create_session(SessionRecord(goal="g"))
    settings = ("Settings", "Display · Dark theme, brightness, screen timeout", "Battery")
    record(engine, sid, 1, *settings)
    record(engine, sid, 2, *settings)
    record(engine, sid, 3, *settings)
    record(engine, sid, 4, "Display", "Brightness level · 50%", "Screen timeout · After 30 seconds of inactivity",
           "Dark theme", "Colors", "Font size", "Display size", "Wallpaper", "Night light", "Always on")
    result = Recall(engine).recall(sid, "brightness")
    assert result.steps == [1, 4, 2, 3]
    assert "    same screen text at steps 2-3" in result.hits[0].text().splitlines()
    assert "Brightness level · 50%" in result.hits[1].text()


def test_snippets_keep_values_whole(engine: DataEngine) -> None:
    sid = engine.create_session(SessionRecord(goal="g"))
    filler = [f"Recommended item {i} with a long description line" for i in range(16)]
    record(engine, sid, 1, *filler[:8], "Order #A-10432", "Total $1,299.99", "Call +1 555-0102 for help", *filler[8:],
           thought="I can see the order confirmation with everything the shop has to say about the order and the "
                   "delivery of the parcel to the customer. It took a while. The order number is #A-10432 and the "
                   "support line is +1 555-0102 for any questions about the parcel or the invoice of the order.")
    text = Recall(engine).recall(sid, "order number").hits[0].text()
    thought, screen_line = text.splitlines()[1:3]
    assert thought.startswith("    thought: ") and "#A-10432" in thought and "+1 555-0102" in thought
    assert screen_line.startswith("    screen: …") and '"Order #A-10432" | "Total $1,299.99"' in screen_line


def test_results_cut_to_the_budget_never_halve_a_value(engine: DataEngine) -> None:
    sid = engine.create_session(SessionRecord(goal="g"))
    values = [f"#A-1043{n} for $1,29{n}.99 call +1 555-010{n}" for n in range(1, 10)]
    for n, value in enumerate(values, start=1):
        record(engine, sid, n, "Receipt", thought=f"The order number is {value} today")
    parts = [p for n in range(1, 10) for p in (f"#A-1043{n}", f"$1,29{n}.99", f"+1 555-010{n}")]
    cut_in_thought = 0
    for tokens in range(150, 300, 3):  # cuts that land all over the thought lines
        hits = Recall(engine).recall(sid, "order number", max_results=9, max_text_tokens=tokens).hits
        assert len(hits) == 9
        for hit in hits:
            body = hit.text().removesuffix("…")
            # the thought is quoted (model text that may quote the screen): one value, whole or left out
            last = body.splitlines()[-1]
            cut_in_thought += hit.truncated and last.startswith("    thought:")
            assert last.count('"') % 2 == 0, hit.text()
            for value in parts:  # the text never ends in the first part of a value
                assert not any(body.endswith(value[:k]) for k in range(2, len(value))), (value, hit.text())
    assert cut_in_thought > 50
