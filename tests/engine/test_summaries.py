"""SPEC §5 invariant 3: versioned summary writes.

``reference_applies`` is written from the SPEC text (plus the engine's documented rule for
``stale``, which the SPEC leaves open) and checked against the single conditional UPDATE.
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from artemis_cli.engine import DataEngine, DataEngineError, SessionRecord, StepNotFound, StepRecord

STATUSES = ("pending", "ready", "failed", "stale")


@dataclass(frozen=True)
class Summary:
    status: str = "pending"
    version: int = 0
    text: str | None = None
    source: str | None = None


def reference_applies(current: Summary, status: str, version: int) -> bool:
    # "a lower version never overwrites a higher one"
    if version < current.version:
        return False
    # "pending never overwrites ready/failed"
    if status == "pending" and current.status in ("ready", "failed"):
        return False
    # "failed never overwrites ready"
    if status == "failed" and current.status == "ready":
        return False
    # engine rule for stale: retiring a ready/failed summary needs a new version
    return not (status == "stale" and current.status in ("ready", "failed") and version == current.version)


def reference_write(current: Summary, status: str, version: int, text: str | None, source: str) -> Summary:
    if not reference_applies(current, status, version):
        return current
    return Summary(status, version, text if text is not None else current.text, source)


def stored(engine: DataEngine, session_id: str, number: int = 1) -> Summary:
    step = engine.get_step(session_id, number)
    return Summary(step.summary_status, step.summary_version, step.summary, step.summary_source)


@pytest.fixture
def step_session(engine: DataEngine, session_id: str) -> str:
    engine.record_step(StepRecord(session_id=session_id, number=1, action_type="tap"))
    return session_id


# --- explicit cases ------------------------------------------------------------------------

CASES = [
    # (current status, current version, write status, write version, applied?)
    ("pending", 0, "ready", 1, True),
    ("pending", 0, "pending", 0, True),
    ("pending", 2, "ready", 1, False),  # lower version never overwrites
    ("ready", 1, "pending", 1, False),  # pending never overwrites ready...
    ("ready", 1, "pending", 5, False),  # ...at any version
    ("failed", 1, "pending", 2, False),  # pending never overwrites failed
    ("ready", 1, "failed", 1, False),  # failed never overwrites ready...
    ("ready", 1, "failed", 2, False),  # ...at any version
    ("failed", 1, "ready", 1, True),  # a late success replaces a failure
    ("failed", 1, "failed", 2, True),
    ("ready", 1, "ready", 2, True),  # a re-summarised step replaces the older ready
    ("ready", 2, "ready", 1, False),
    ("ready", 1, "stale", 1, False),  # retiring needs a new version
    ("ready", 1, "stale", 2, True),
    ("stale", 2, "pending", 2, True),
    ("stale", 2, "ready", 2, True),
    ("failed", 3, "stale", 4, True),
]


@pytest.mark.parametrize(("cur_status", "cur_version", "status", "version", "applied"), CASES)
def test_explicit_cases(
    engine: DataEngine,
    step_session: str,
    cur_status: str,
    cur_version: int,
    status: str,
    version: int,
    applied: bool,
) -> None:
    engine.db.execute(
        "UPDATE steps SET summary_status = ?, summary_version = ?, summary = 'old', summary_source = 'seed'",
        [cur_status, cur_version],
    )
    assert reference_applies(Summary(cur_status, cur_version), status, version) is applied  # model agrees
    result = engine.write_summary(step_session, 1, status=status, text="new", source="lens", version=version)
    assert result is applied
    after = stored(engine, step_session)
    expected = (
        Summary(status, version, "new", "lens")
        if applied
        else Summary(cur_status, cur_version, "old", "seed")
    )
    assert after == expected


def test_text_is_kept_when_a_write_has_none(engine: DataEngine, step_session: str) -> None:
    assert engine.write_summary(
        step_session, 1, status="ready", text="A list of toggles", source="lens", version=1
    )
    assert engine.write_summary(step_session, 1, status="stale", source="invalidate", version=2)
    step = engine.get_step(step_session, 1)
    assert (step.summary_status, step.summary, step.summary_model) == ("stale", "A list of toggles", None)
    assert engine.write_summary(
        step_session, 1, status="ready", text="new", source="lens", version=2, model="m"
    )
    step = engine.get_step(step_session, 1)
    assert (step.summary, step.summary_model) == ("new", "m")


def test_bad_summary_writes(engine: DataEngine, step_session: str) -> None:
    with pytest.raises(StepNotFound):
        engine.write_summary(step_session, 99, status="ready", text="x", source="lens", version=1)
    with pytest.raises(DataEngineError, match="summary status"):
        engine.write_summary(step_session, 1, status="done", source="lens", version=1)
    with pytest.raises(DataEngineError, match="non-negative"):
        engine.write_summary(step_session, 1, status="ready", source="lens", version=-1)


# --- property: random write sequences against the reference model --------------------------


def test_state_machine_matches_reference(engine: DataEngine) -> None:
    class SummaryMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.session_id = engine.create_session(SessionRecord(goal="summary property"))
            engine.record_step(StepRecord(session_id=self.session_id, number=1, action_type="tap"))
            self.model = Summary()
            self.writes = 0

        @rule(
            status=st.sampled_from(STATUSES),
            version=st.integers(min_value=0, max_value=4),
            with_text=st.booleans(),
        )
        def write(self, status: str, version: int, with_text: bool) -> None:
            self.writes += 1
            text = f"text {self.writes}" if with_text else None
            source = f"source {self.writes}"
            expected_applied = reference_applies(self.model, status, version)
            applied = engine.write_summary(
                self.session_id, 1, status=status, text=text, source=source, version=version
            )
            assert applied is expected_applied, (self.model, status, version)
            self.model = reference_write(self.model, status, version, text, source)

        @invariant()
        def matches_model(self) -> None:
            assert stored(engine, self.session_id) == self.model

    run_state_machine_as_test(
        SummaryMachine,
        settings=settings(
            stateful_step_count=25,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )


# --- concurrency -------------------------------------------------------------------------

RANK = {"pending": 0, "failed": 1, "ready": 2}


def _run_threads(engines: list[DataEngine], session_id: str, plan: list[list[tuple[str, int, str]]]) -> None:
    barrier = threading.Barrier(len(plan))
    errors: list[BaseException] = []

    def worker(eng: DataEngine, writes: list[tuple[str, int, str]]) -> None:
        try:
            barrier.wait()
            for status, version, text in writes:
                eng.write_summary(session_id, 1, status=status, text=text, source=text, version=version)
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [
        threading.Thread(target=worker, args=(engines[i % len(engines)], w)) for i, w in enumerate(plan)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def _engines(data_dir: Path, shared: DataEngine) -> list[DataEngine]:
    # half the threads share one engine (RLock), half have their own connection (SQLite locking)
    return [shared, *(DataEngine.open(data_dir) for _ in range(3))]


def test_concurrent_writers_end_at_the_greatest_write(
    engine: DataEngine, step_session: str, data_dir: Path
) -> None:
    engines = _engines(data_dir, engine)
    rng = random.Random(1234)
    writes = [
        (s, v, f"{s}@{v}#{i}") for i in range(3) for s in ("pending", "failed", "ready") for v in range(5)
    ]
    writes.append(("ready", 5, "THE ANSWER"))  # greater than every other write in (version, rank)
    writes += [("pending", 5, "p5"), ("failed", 5, "f5")]
    rng.shuffle(writes)
    plan = [writes[i::6] for i in range(6)]
    _run_threads(engines, step_session, plan)
    assert stored(engine, step_session) == Summary("ready", 5, "THE ANSWER", "THE ANSWER")
    for eng in engines[1:]:
        eng.close()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_concurrent_random_writers_end_in_a_maximal_write(
    engine: DataEngine, step_session: str, data_dir: Path, seed: int
) -> None:
    """Without ``stale`` the rule is the order (version, rank): the final state must be a write
    that no other write dominates, and must equal the reference model replayed in the order
    the writes could have landed (checked by replaying: final is stable under every write)."""
    engines = _engines(data_dir, engine)
    rng = random.Random(seed)
    writes = [(rng.choice(("pending", "failed", "ready")), rng.randint(0, 6), f"w{i}") for i in range(60)]
    plan = [writes[i::6] for i in range(6)]
    _run_threads(engines, step_session, plan)
    final = stored(engine, step_session)
    assert final.text is not None
    landed = next(w for w in writes if w[2] == final.text)
    assert (final.status, final.version) == landed[:2]
    for status, version, _ in writes:
        dominates = version >= final.version and RANK[status] >= RANK[final.status]
        if (status, version) != (final.status, final.version):
            assert not dominates, f"{status}@{version} should have replaced {final}"
        # the reference model agrees that no write could move the final state elsewhere
        moved = reference_write(final, status, version, "probe", "probe")
        assert moved == final or (moved.status, moved.version) == (final.status, final.version)
    for eng in engines[1:]:
        eng.close()
