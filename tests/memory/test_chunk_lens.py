"""The chunk lens (SPEC §10.3): the prompt pinned byte for byte, the machine checks on bands ①
and ② (each failure a failed attempt), the mechanical lens always passing them, and the model
lens through the real google-genai SDK against FakeGeminiServer with a fallback model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from golden_files import assert_golden
from hypothesis import given, settings
from hypothesis import strategies as st

from artemis_cli.engine.records import StepRecord
from artemis_cli.memory.chunk_lens import (
    ChunkAttempt,
    ChunkJob,
    ChunkLens,
    ChunkLensError,
    MechanicalChunkLens,
    build_chunk_lens_request,
    check_chunk_bands,
    run_chunk_lens,
)
from artemis_cli.memory.frozen import build_chunk
from artemis_cli.memory.notes import Note
from artemis_cli.models.fakes.gemini import FakeGeminiServer, FakeReply, FakeRequest
from artemis_cli.models.gemini import GeminiModel

GOLDEN = Path(__file__).parent / "golden"
SID = "s-lens"


def check_golden(name: str, text: str) -> None:
    assert_golden(GOLDEN / name, text)


def step(n: int, **kw: object) -> StepRecord:
    base: dict[str, object] = dict(
        session_id=SID, number=n, action_type="tap", offset_ms=n * 4000, x=10 * n, y=20 * n,
        target={"class_name": "android.widget.TextView", "text": f"Item {n}", "label_source": "index"},
        foreground_app="com.android.settings",
    )
    base.update(kw)
    return StepRecord(**base)  # type: ignore[arg-type]


def note(key: str, at: int) -> Note:
    return Note(SID, key, f"value of {key}", at, 1, "2024-01-01T00:00:00+00:00")


def job(notes: list[Note] | None = None) -> ChunkJob:
    steps = [
        step(4, thought="Open the list", summary='A list with "Item 4" highlighted.', summary_status="ready"),
        step(5, verdict={"verdict": "progress", "milestone_complete": False, "reason": 'the list scrolled to "Item 9"'}),
        step(6, action_type="press_key", action_args={"key": "back"}, target=None, user_instruction="Skip item 6"),
        step(7, result_status="error", result_detail="DeviceError: tap failed",
             verdict={"verdict": "no_effect", "milestone_complete": False, "reason": "the tap failed: " + "x" * 90}),
    ]
    return ChunkJob(SID, 4, 7, "Find the item", steps, notes if notes is not None else [note("item_name", 5)],
                    {7: ["press back"]})


BAND1 = {
    "purpose": "Find the item in the list.",
    "done": 'Opened the list, scrolled, pressed back, tapped "Item 7".',
    "effects": 'Note "item_name" holds the item name.',
    "entry_state": "Settings list.",
    "exit_state": "Settings list after a back press.",
    "verified_facts": ["the list shows 7 items"],
    "unresolved": ["item 7 did not respond"],
    "failed_paths": ["tap on item 7"],
    "entities": ["Item 4"],
}
GOOD_INTERVALS = ["Steps 4–5: the list opened and scrolled.", "Step 6: back key.", "Step 7: a tap on \"Item 7\"."]


def reply(band1: dict[str, object] | None = None, intervals: list[str] | None = None) -> str:
    return json.dumps({**(band1 or BAND1), "intervals": intervals or GOOD_INTERVALS}, ensure_ascii=False)


def test_prompt_is_pinned() -> None:
    request = build_chunk_lens_request(job())
    assert request.role == "chunk_lens"
    text = "=== system ===\n" + request.system + "\n=== user ===\n" + (request.messages[0].parts[0].text or "") + "\n"
    check_golden("chunk_lens_prompt.txt", text)


def test_each_verdict_is_shown_once_with_its_whole_reason() -> None:
    text = build_chunk_lens_request(job()).messages[0].parts[0].text or ""
    assert text.count('the list scrolled to \\"Item 9\\"') == 1
    assert text.count("validator:") == len(job().steps)  # one line per step, none on a ledger line
    assert '  validator: no_effect "the tap failed: ' + "x" * 90 + '"' in text  # not cut at 80


@pytest.mark.parametrize(
    ("intervals", "reason"),
    [
        (["Steps 4–5: a.", "Step 7: c."], "band2_gap"),
        (["Steps 4–6: a.", "Steps 6-7: b."], "band2_overlap"),
        (["Steps 4–5: a.", "Steps 6–8: b."], "band2_range"),
        (["Steps 4–5: a.", "Step 6: b."], "band2_gap"),
        (["Steps 4–7 a and b."], "band2_format"),
        (["The whole segment: stuff."], "band2_format"),
        (["Step 6: b.", "Steps 4–5: a.", "Step 7: c."], "band2_order"),
    ],
)
def test_interval_coverage_is_checked(intervals: list[str], reason: str) -> None:
    with pytest.raises(ChunkLensError) as info:
        check_chunk_bands(job(), BAND1, "\n".join(intervals))
    assert info.value.reason == reason


def test_hyphen_and_en_dash_both_accepted_and_normalised() -> None:
    _, band2 = check_chunk_bands(job(), BAND1, "Steps 4-5: a.\nStep 6: b.\nStep 7: c.")
    assert band2.splitlines()[0] == "Steps 4–5: a."


@pytest.mark.parametrize(
    ("band1", "reason"),
    [
        ({**BAND1, "effects": "Nothing left behind."}, "note_missing"),
        ({k: v for k, v in BAND1.items() if k != "entities"}, "band1_fields"),
        ({**BAND1, "purpose": ""}, "band1_fields"),
        ({**BAND1, "entities": "Item 4"}, "band1_fields"),
        ({**BAND1, "done": "The list was opened successfully."}, "verdict_word"),
    ],
)
def test_band1_checks(band1: dict[str, object], reason: str) -> None:
    with pytest.raises(ChunkLensError) as info:
        check_chunk_bands(job(), band1, "\n".join(GOOD_INTERVALS))
    assert info.value.reason == reason


def test_verdict_word_in_band2_fails_but_quoted_screen_text_does_not() -> None:
    with pytest.raises(ChunkLensError) as info:
        check_chunk_bands(job(), BAND1, "Steps 4–5: scrolling completed.\nStep 6: b.\nStep 7: c.")
    assert info.value.reason == "verdict_word"
    check_chunk_bands(job(), BAND1, 'Steps 4–5: the "Done" button shows.\nStep 6: b.\nStep 7: c.')


def test_mechanical_lens_names_notes_and_covers_the_segment() -> None:
    bands = MechanicalChunkLens().summarize(job([note("item_name", 5), note("done", 7)]))
    assert '"item_name"' in bands.band1["effects"] and '"done"' in bands.band1["effects"]
    # one interval per run of steps in the same app; together they cover the segment exactly
    assert [line.split(":")[0] for line in bands.band2.splitlines()] == ["Steps 4–7"]
    assert bands.source == "mechanical"


def test_mechanical_lens_writes_screen_quotes_plainly() -> None:
    """A result phrase already quotes its screen text; the stored chunk shows it as written,
    never JSON-escaped a second time (issue 23 item 15)."""
    popup = {"summary": 'new window "Special offer!" (com.artemis.promo)'}
    steps = [step(4), step(5, result_status="failed", result_detail="popup", outcome=popup)]
    bands = MechanicalChunkLens().summarize(ChunkJob(SID, 4, 5, None, steps, [], {}))
    stored = json.dumps(bands.band1, ensure_ascii=False)  # band ① is stored as JSON
    for text in (bands.band1["exit_state"], *bands.band1["failed_paths"]):
        assert '"Special offer!"' in text and "\\" not in text, text
    assert json.loads(stored)["exit_state"] == bands.band1["exit_state"]


texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(deadline=None)
@given(
    kinds=st.lists(st.sampled_from(["tap", "swipe", "press_key", "type_text", "launch_app", "wait"]), min_size=1, max_size=12),
    apps=st.lists(st.one_of(st.none(), texts), min_size=1, max_size=12),
    labels=st.lists(texts, min_size=1, max_size=12),
    keys=st.lists(texts.map(str.strip).filter(bool), max_size=4),
    milestone=st.one_of(st.none(), texts),
    start=st.integers(1, 500),
)
def test_mechanical_lens_always_passes_the_checks(
    kinds: list[str], apps: list[str | None], labels: list[str], keys: list[str], milestone: str | None, start: int
) -> None:
    steps = [
        step(start + i, action_type=kind, foreground_app=apps[i % len(apps)],
             target={"class_name": "x.Button", "text": labels[i % len(labels)], "resource_id": labels[-1], "label_source": "index"},
             action_args={"text": labels[0], "key": labels[0], "package": labels[0]},
             result_status="error" if i % 3 == 2 else "ok", result_detail=labels[0] or None)
        for i, kind in enumerate(kinds)
    ]
    end = start + len(kinds) - 1
    notes = [note(k, start + i % len(kinds)) for i, k in enumerate(keys)]
    j = ChunkJob(SID, start, end, milestone, steps, notes, {})
    bands = MechanicalChunkLens().summarize(j)
    assert check_chunk_bands(j, bands.band1, bands.band2) == (bands.band1, bands.band2)
    chunk = build_chunk(steps, milestone=milestone, band1=bands.band1, band2=bands.band2)
    assert sum(1 for line in chunk.band3 if line.startswith("- Step ")) == len(kinds)


# --- through the real SDK ---------------------------------------------------------------------


class ByModel:
    """Policy: a list of replies per model name (the last one repeats)."""

    def __init__(self, replies: dict[str, list[str]]) -> None:
        self.replies = replies

    def __call__(self, req: FakeRequest) -> FakeReply:
        texts = self.replies[req.model]
        return FakeReply.text(texts.pop(0) if len(texts) > 1 else texts[0])


def models(server: FakeGeminiServer) -> tuple[GeminiModel, GeminiModel]:
    primary = GeminiModel(["gemini-2.5-flash"], api_key="test-key", base_url=server.base_url,
                          timeout_s=5, max_retries=0, sleep=lambda s: None)
    return primary, primary.with_chain(["gemini-2.5-pro"])


def test_good_reply_is_ready_through_the_sdk() -> None:
    calls: list[str] = []
    with FakeGeminiServer(ByModel({"gemini-2.5-flash": [reply()]})) as server:
        primary, _ = models(server)
        lens = ChunkLens(primary, record_call=lambda req, resp, err: calls.append(req.role))
        bands = run_chunk_lens(job(), lens, retries=3)
        request = server.requests[0]
    assert bands.band1["effects"] == BAND1["effects"]
    assert bands.band2.splitlines() == GOOD_INTERVALS
    assert bands.source == "chunk_lens:gemini-2.5-flash"
    assert calls == ["chunk_lens"]
    assert "SEGMENT: steps 4–7" in json.dumps(request.contents, ensure_ascii=False)


@pytest.mark.parametrize(
    "bad",
    [
        reply(intervals=["Steps 4–5: a.", "Step 7: c."]),  # gap
        reply(intervals=["Steps 4–6: a.", "Steps 6–7: b."]),  # overlap
        reply(band1={**BAND1, "effects": "Nothing."}),  # note missing from ①
        reply(intervals=["Steps 4–5: scrolling done.", "Step 6: b.", "Step 7: c."]),  # verdict word
        "not json at all",
    ],
)
def test_bad_replies_fail_every_attempt_then_the_fallback_model_is_used(bad: str) -> None:
    with FakeGeminiServer(ByModel({"gemini-2.5-flash": [bad], "gemini-2.5-pro": ["```json\n" + reply() + "\n```"]})) as server:
        primary, fallback = models(server)
        attempts: list[ChunkAttempt] = []
        bands = run_chunk_lens(job(), ChunkLens(primary), retries=3, fallback=ChunkLens(fallback), on_attempt=attempts.append)
        hit = [r.model for r in server.requests]
    assert hit == ["gemini-2.5-flash"] * 3 + ["gemini-2.5-pro"]
    assert bands.model == "gemini-2.5-pro"
    assert [a.ok for a in attempts] == [False, False, False, True]


def test_giving_up_raises_with_every_attempt_and_model_errors_count() -> None:
    with FakeGeminiServer(ByModel({"gemini-2.5-flash": [reply(intervals=["Step 4: a."])], "gemini-2.5-pro": ["{}"]})) as server:
        primary, fallback = models(server)
        server.inject("500", count=1, model="gemini-2.5-flash")
        with pytest.raises(ChunkLensError) as info:
            run_chunk_lens(job(), ChunkLens(primary), retries=2, fallback=ChunkLens(fallback))
    err = info.value
    assert err.reason == "exhausted"
    assert len(err.attempts) == 4 and not any(a.ok for a in err.attempts)
    assert err.attempts[0].reason not in ("band2_gap", "band2_empty")  # the injected HTTP 500
    assert err.attempts[1].reason == "band2_gap"
    assert err.attempts[-1].reason == "band2_empty"


def test_mechanical_fallback_rescues_a_dead_model() -> None:
    with FakeGeminiServer(ByModel({"gemini-2.5-flash": ["nope"]})) as server:
        primary, _ = models(server)
        bands = run_chunk_lens(job(), ChunkLens(primary), retries=1, fallback=MechanicalChunkLens())
    assert bands.source == "mechanical"


def test_a_job_that_does_not_hold_its_range_is_refused() -> None:
    bad = ChunkJob(SID, 4, 8, None, job().steps)
    with pytest.raises(ChunkLensError) as info:
        run_chunk_lens(bad, MechanicalChunkLens())
    assert info.value.reason == "job"
