"""The F zone model (SPEC §10.3): chunk / era / period / snapshot rendering pinned by golden files,
and the invariants: every step number and time readable at every level (periods: range and
times), user lines verbatim everywhere, deterministic rendering, exact JSON round trip.

Regenerate the golden files with ARTEMIS_UPDATE_GOLDEN=1 and review the diff.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from golden_files import assert_golden
from hypothesis import given, settings
from hypothesis import strategies as st

from artemis_cli.engine.clock import format_offset
from artemis_cli.engine.records import StepRecord
from artemis_cli.memory.chunk_lens import ChunkJob, MechanicalChunkLens
from artemis_cli.memory.frozen import (
    FrozenChunk,
    FrozenError,
    FrozenHistory,
    add_op,
    build_chunk,
    fold_op,
    interval_title,
    is_rewrite,
    snapshot_op,
)
from artemis_cli.memory.frozen_levels import (
    PERIOD_CHARS,
    SNAPSHOT_RANGES,
    SNAPSHOT_STEP_LINES,
    period_paragraph,
)
from artemis_cli.memory.ledger_lines import user_line

GOLDEN = Path(__file__).parent / "golden"
SID = "s-frozen"


def check_golden(name: str, text: str) -> None:
    assert_golden(GOLDEN / name, text)


APPS = ["com.android.settings", "com.android.deskclock"]


def make_step(n: int, *, user: str | None = None, app: str | None = None, kind: str = "tap") -> StepRecord:
    target = {"class_name": "android.widget.Switch", "text": f"Row {n}", "resource_id": f"id/row_{n}", "label_source": "index"}
    return StepRecord(
        session_id=SID, number=n, action_type=kind, offset_ms=n * 7_500 + 250, x=100 + n, y=200 + n,
        target=target if kind == "tap" else None, action_args={"key": "back"} if kind == "press_key" else {},
        foreground_app=app or APPS[(n // 4) % 2], user_instruction=user,
        result_status="error" if n % 9 == 0 else "ok", result_detail="DeviceError: tap failed" if n % 9 == 0 else None,
    )


def steps(a: int, b: int, users: dict[int, str] | None = None) -> list[StepRecord]:
    users = users or {}
    return [make_step(n, user=users.get(n), kind="press_key" if n % 5 == 0 else "tap") for n in range(a, b + 1)]


BAND1 = {
    "purpose": "Open the Wi-Fi settings page.",
    "done": "Opened Settings, scrolled, tapped the \"Network & internet\" row.",
    "effects": "Note \"wifi_name\" holds the network name.",
    "entry_state": "Home screen.",
    "exit_state": "Settings \"Internet\" page with the Wi-Fi switch.",
    "verified_facts": ["Wi-Fi switch is visible"],
    "unresolved": ["network password unknown"],
    "failed_paths": ["search field did not open"],
    "entities": ["com.android.settings", "HomeNet"],
}


def lens_chunk(a: int, b: int, users: dict[int, str] | None = None, milestone: str = "Open Wi-Fi settings") -> FrozenChunk:
    recs = steps(a, b, users)
    bands = MechanicalChunkLens().summarize(ChunkJob(SID, a, b, milestone, recs))
    return build_chunk(recs, milestone=milestone, band1=bands.band1, band2=bands.band2)


# --- golden formats ----------------------------------------------------------------------------


def test_chunk_render_golden() -> None:
    recs = steps(13, 17, {15: 'Also turn on "Bluetooth"\tplease'})
    band2 = "Steps 13–14: the \"Settings\" app list, scrolled once, then the \"Network\" row.\nStep 15: pressed back.\nSteps 16-17: tapped the switch row."
    chunk = build_chunk(recs, milestone="Open Wi-Fi settings", band1=BAND1, band2=band2,
                        recoveries={16: ["press back", "tap @(10,10)"]})
    history = FrozenHistory()
    added = history.add_chunk(chunk)
    assert added.index == 1
    check_golden("chunk_ready.txt", history.render())


def test_ledger_only_chunk_golden() -> None:
    history = FrozenHistory()
    history.add_chunk(build_chunk(steps(1, 4, {2: "wait for me"}), milestone=None))
    text = history.render()
    assert "[chunk lens pending: step ledger only]" in text
    assert 'Details: recall_history(step_range="1-4")' in text
    check_golden("chunk_ledger_only.txt", text)


def folded_history() -> FrozenHistory:
    history = FrozenHistory()
    users = {3: "first user line", 14: 'second "quoted" line', 27: "third line"}
    for a in range(1, 36, 5):
        history.add_chunk(lens_chunk(a, a + 4, users, milestone=f"Milestone {a // 10 + 1}"))
        history.fold(2, 1)
    return history


def test_era_and_period_golden() -> None:
    history = folded_history()
    assert history.periods and history.eras and history.chunks
    check_golden("chunk_folded.txt", history.render())


def test_snapshot_golden() -> None:
    history = folded_history()
    history.snapshot("Turn on Wi-Fi and note the network", "1. [x] Open settings 2. [ ] Join HomeNet", "Settings app, Internet page")
    history.add_chunk(lens_chunk(36, 38))
    check_golden("chunk_snapshot.txt", history.render())


def test_interval_title_keeps_quoted_text_whole() -> None:
    assert interval_title('Steps 3–5: tapped "Hello, world; x" then scrolled, twice') == 'Steps 3–5: tapped "Hello, world; x" then scrolled'
    assert interval_title("Step 7: opened com.android.settings. Then more.") == "Step 7: opened com.android.settings"


# --- invariants --------------------------------------------------------------------------------


def assert_readable(history: FrozenHistory, recs: list[StepRecord], users: dict[int, str]) -> None:
    """Every step covered by F is findable with its time: its own line, or the range (with start
    and end times) of the period paragraph or the snapshot's ranged index line holding it."""
    text = history.render()
    folded = [(p.start, p.end, "period") for p in history.periods]
    if history.snapshot_block is not None:
        for line in history.snapshot_block.index_lines:
            m = re.match(r"Steps (\d+)–(\d+) \(T\+", line)
            if m:
                folded.append((int(m.group(1)), int(m.group(2)), "ranged"))
    for rec in recs:
        if rec.number > history.covered_end():
            continue
        in_range = [(a, b, kind) for a, b, kind in folded if a <= rec.number <= b]
        if in_range:
            a, b, kind = in_range[0]
            start = next(r for r in recs if r.number == a)
            end = next(r for r in recs if r.number == b)
            times = f"{format_offset(start.offset_ms or 0)} → {format_offset(end.offset_ms or 0)}"
            if kind == "period":
                assert f"Steps {a}–{b} | {times}]" in text
            else:
                assert f"Steps {a}–{b} ({times}): " in text
                assert f'recall_history(step_range="{a}-{b}")' in text
        else:
            assert f"Step {rec.number} ({format_offset(rec.offset_ms or 0)})" in text, rec.number
    for n, line in users.items():
        if n <= history.covered_end():
            assert user_line(n, line) in text


def test_levels_keep_every_step_time_and_user_line() -> None:
    users = {3: "first user line", 14: 'second "quoted" line', 27: "third line"}
    recs = steps(1, 40, users)
    history = FrozenHistory()
    for a in range(1, 36, 5):
        history.add_chunk(lens_chunk(a, a + 4, users))
        assert_readable(history, recs, users)
        history.fold(2, 1)
        assert_readable(history, recs, users)
    history.snapshot("goal", "plan", "device")
    assert_readable(history, recs, users)


def test_round_trip_and_replay_render_identically() -> None:
    history = folded_history()
    again = FrozenHistory.from_dict(json.loads(json.dumps(history.to_dict())))
    assert again.to_dict() == history.to_dict()
    assert again.render() == history.render()
    replayed = FrozenHistory()
    ops = []
    for a in range(1, 36, 5):
        ops += [add_op(lens_chunk(a, a + 4, {3: "first user line", 14: 'second "quoted" line', 27: "third line"},
                                  milestone=f"Milestone {a // 10 + 1}")), fold_op(2, 1)]
    ops.append(snapshot_op("g", "p", "d"))
    for op in json.loads(json.dumps(ops)):
        replayed.apply(op)
    history.snapshot("g", "p", "d")
    assert replayed.render() == history.render()


def test_overlapping_chunk_and_bad_ops_are_refused() -> None:
    history = FrozenHistory()
    history.add_chunk(lens_chunk(1, 5))
    with pytest.raises(FrozenError):
        history.add_chunk(lens_chunk(5, 8))
    with pytest.raises(FrozenError):
        history.apply({"op": "nope"})
    with pytest.raises(FrozenError):
        FrozenHistory.from_dict({"chunks": [{"index": 1}]})
    with pytest.raises(FrozenError):
        FrozenHistory().snapshot("g", "p", "d")
    with pytest.raises(FrozenError):
        build_chunk([make_step(1), make_step(3)])


def test_fold_is_quiet_below_the_limits_and_merges_fields() -> None:
    history = FrozenHistory()
    for a in (1, 6, 11):
        history.add_chunk(lens_chunk(a, a + 4))
    before = history.render()
    assert history.fold(3) is False
    assert history.render() == before  # F bytes unchanged without a compression event
    history.add_chunk(lens_chunk(16, 20))
    assert history.fold(3) is True
    era = history.eras[0]
    assert (era.start, era.end) == (1, 10)
    assert era.band1["entry_state"] == history.eras[0].band1["entry_state"]
    assert era.band1["purpose"].startswith("Steps 1–5: ") and " | Steps 6–10: " in era.band1["purpose"]
    assert len(era.titles) >= 2 and all(t.startswith("Step") for t in era.titles)
    assert sum(1 for line in era.band3 if line.startswith("- Step ")) == 10


@settings(deadline=None)
@given(
    sizes=st.lists(st.integers(1, 6), min_size=1, max_size=9),
    users=st.dictionaries(st.integers(1, 54), st.text(min_size=1, max_size=30), max_size=5),
    max_chunks=st.integers(1, 4),
    max_eras=st.one_of(st.none(), st.integers(0, 3)),
    snap=st.booleans(),
)
def test_invariants_hold_for_any_fold_sequence(
    sizes: list[int], users: dict[int, str], max_chunks: int, max_eras: int | None, snap: bool
) -> None:
    history = FrozenHistory()
    a = 1
    total = sum(sizes)
    recs = steps(1, total, users)
    for size in sizes:
        history.add_chunk(lens_chunk(a, a + size - 1, users))
        history.fold(max_chunks, max_eras)
        assert_readable(history, recs, users)
        a += size
    if snap:
        history.snapshot("goal", "plan", "device")
        assert_readable(history, recs, users)
        assert history.render().count("\nStep ") >= 1
    assert history.render() == FrozenHistory.from_dict(json.loads(json.dumps(history.to_dict()))).render()


# --- bounded F (issue 13) -----------------------------------------------------------------------


def fact_chunk(a: int, b: int, users: dict[int, str] | None = None, milestone: str | None = None) -> FrozenChunk:
    """A ready chunk whose ① names two facts of its own (so merged levels have facts to cut)."""
    recs = steps(a, b, users)
    band1 = {**BAND1, "purpose": f"Set up row {a}; then check it.", "verified_facts": [f"row {a} is on", f"row {b} is off"]}
    return build_chunk(recs, milestone=milestone or f"Milestone {a // 40 + 1}", band1=band1,
                       band2=f"Steps {a}–{b}: the rows {a} to {b}, tapped in order.")


def test_a_swap_that_only_adds_a_chunk_appends_to_the_f_text() -> None:
    history = FrozenHistory()
    history.add_chunk(lens_chunk(1, 5))
    history.add_chunk(lens_chunk(6, 10))
    old = history.render()
    added = history.add_chunk(lens_chunk(11, 15))
    assert history.fold(8, budget=history.tokens() + 10) is False  # near its budget, but not over it
    assert history.render() == old + "\n\n" + added.render()
    assert not is_rewrite(old, history.render())
    before_fold = history.render()
    assert history.fold(2) is True  # folding is a rewrite: the oldest chunks' text changes
    assert is_rewrite(before_fold, history.render())


def test_period_paragraph_is_bounded_with_explicit_marks() -> None:
    clauses = [f"Steps {a}–{a + 4}: opened screen {a}; typed the value {a}" for a in range(1, 200, 5)]
    facts = [f"value {a} is stored" for a in range(60)]
    text = period_paragraph(["Open settings", "Join HomeNet"], clauses, facts)
    assert len(text) <= PERIOD_CHARS
    assert text.startswith("Milestones: Open settings; Join HomeNet. Steps 1–5: opened screen 1")
    assert re.search(r"…\(\d+ more intervals\)\.", text)
    assert re.search(r"Verified: value 0 is stored; .*…\(\d+ more facts; recall_history\)\.$", text)
    assert period_paragraph([], [], []) == "No synopsis (step ledger only)."
    # a short era fits whole: no marks
    assert "more" not in period_paragraph(["M"], clauses[:2], facts[:2])


@settings(deadline=None, max_examples=60)
@given(texts=st.lists(st.text(min_size=0, max_size=300), min_size=2, max_size=40),
       facts=st.lists(st.text(min_size=40, max_size=300), max_size=40),
       milestones=st.lists(st.text(min_size=1, max_size=200), max_size=20),
       long=st.text(min_size=300, max_size=700))
def test_period_paragraph_never_exceeds_its_cap(texts: list[str], facts: list[str], milestones: list[str],
                                                long: str) -> None:
    assert len(period_paragraph(milestones, texts, facts)) <= PERIOD_CHARS
    assert len(period_paragraph(milestones, [long, *texts], facts)) <= PERIOD_CHARS  # one clause alone too long
    assert len(period_paragraph([long], texts, [long, *facts])) <= PERIOD_CHARS


def test_budgeted_fold_keeps_f_under_its_budget_and_every_step_findable() -> None:
    """150 chunks (1,200 steps): F stays under its budget after every fold, the levels stay
    few, user lines stay verbatim, and a fold (a rewrite) happens at most every other chunk."""
    budget = 1500
    users = {3: "first user line", 414: 'second "quoted" line', 1_100: "third line"}
    history = FrozenHistory()
    folds = 0
    sizes = []
    for a in range(1, 1_200, 8):
        history.add_chunk(fact_chunk(a, a + 7, users))
        folds += history.fold(8, budget=budget)
        sizes.append(history.tokens())
        assert history.tokens() <= budget, a
    assert folds <= 150 // 2
    assert len(history.periods) <= 4 and len(history.chunks) <= 4
    assert max(sizes[75:]) <= budget and min(sizes[75:]) >= 200  # a plateau, not a collapse
    assert_readable(history, steps(1, 1_199, users), users)
    for period in history.periods:
        assert len(period.paragraph) <= PERIOD_CHARS
    # the same operations replayed give the same F (resume)
    replayed = FrozenHistory()
    for a in range(1, 1_200, 8):
        replayed.apply(add_op(fact_chunk(a, a + 7, users)))
        replayed.apply(json.loads(json.dumps(fold_op(8, None, budget))))
    assert replayed.render() == history.render()


def test_budgeted_fold_golden() -> None:
    """Periods merged under a small budget: range and times, the bounded paragraph with its marks,
    the recall line and the user lines verbatim; then the newest chunk in full."""
    users = {3: "first user line", 44: 'second "quoted" line'}
    history = FrozenHistory()
    for a in range(1, 96, 5):
        history.add_chunk(fact_chunk(a, a + 4, users, milestone=f"Milestone {a // 20 + 1}"))
        history.fold(8, budget=900)
    assert history.periods and history.periods[0].start == 1
    check_golden("chunk_budget.txt", history.render())


def test_snapshot_step_index_is_bounded() -> None:
    """A snapshot every third chunk over 600 steps: the index keeps per-step lines for the newest
    steps only and a bounded number of ranged lines, every user line, and every step findable."""
    users = {3: "first user line", 250: 'second "quoted" line', 590: "third line"}
    history = FrozenHistory()
    counts = []
    for k, a in enumerate(range(1, 600, 10)):
        history.add_chunk(fact_chunk(a, a + 9, users))
        if k % 3 == 2:
            history.snapshot("goal", "plan", "device")
            snap = history.snapshot_block
            assert snap is not None
            step_lines = [ln for ln in snap.index_lines if re.match(r"Step \d+ \(T\+", ln)]
            ranged = [ln for ln in snap.index_lines if re.match(r"Steps \d+–\d+ \(T\+", ln)]
            assert len(step_lines) <= SNAPSHOT_STEP_LINES and len(ranged) <= SNAPSHOT_RANGES
            counts.append(len(snap.index_lines))
            for name in ("verified_facts",):
                assert len(snap.band1[name]) <= 12
    assert max(counts) <= SNAPSHOT_STEP_LINES + SNAPSHOT_RANGES + len(users)
    assert_readable(history, steps(1, 600, users), users)
    assert "…(" in history.render() and "earlier; recall_history)" in history.render()
