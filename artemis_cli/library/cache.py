"""Cached AI steps: the first passing run of a cache key is its baseline; later runs replay each AI
step's recorded actions (no model call) and heal only what diverges.

A key (``Phone.open(cache="checkout")``, the pytest plugin's test node id) names the session last
kept as its baseline (``library_baselines``). Each AI call of that session (``act``, ``tap(ai=)``)
left a ``library_call`` event with its goal and the steps it recorded. In a later run the k-th AI
call looks up the baseline's k-th: with the same kind and goal, its steps are replayed through the
semantic replayer (``replay.replayer``, retargeting by element semantics) into the running session;
a stretch that diverges is handed to a model by ``replay --heal``'s mechanism (``replay.heal``,
bounded by the profile's ``heal.max_steps``), which rejoins the recording. A call that does not
match (another goal: the test changed) runs with the model. Queries and checks are never cached.

When the program ends with the session succeeded and something was not plain replay (a call ran
with the model, or a stretch was healed), the session becomes the key's new baseline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from artemis_cli.engine.clock import now_iso
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.transaction import write_transaction
from artemis_cli.library.session import CALL_EVENT, LibrarySession
from artemis_cli.operators.observe import Observation

#: The AI calls whose steps are cached (queries and checks never are).
CACHED_CALLS = ("act", "tap_ai")


@dataclass(frozen=True)
class CachedCall:
    """One AI call of a baseline: its kind, goal and the steps it recorded."""

    call: str
    goal: str
    first_step: int
    last_step: int


def baseline_for(engine: DataEngine, key: str) -> str | None:
    """The session kept as ``key``'s baseline, while it exists and succeeded."""
    with engine.lock:  # sqlite-utils' query opens a savepoint: never beside a summary job's write
        rows = list(engine.db.query("SELECT b.baseline_session AS id, s.status AS status FROM library_baselines b "
                                    "JOIN sessions s ON s.id = b.baseline_session WHERE b.cache_key = ?", [key]))
    return str(rows[0]["id"]) if rows and rows[0]["status"] == "succeeded" else None


def keep_baseline(engine: DataEngine, key: str, session_id: str) -> None:
    with engine.lock, write_transaction(engine.db):
        engine.db.execute(
            "INSERT INTO library_baselines (cache_key, baseline_session, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT(cache_key) DO UPDATE SET baseline_session = excluded.baseline_session, "
            "updated_at = excluded.updated_at", [key, session_id, now_iso()])


def baseline_calls(engine: DataEngine, session_id: str) -> list[CachedCall]:
    """The AI calls of ``session_id`` in order, each with its recorded steps (calls that passed)."""
    out: list[CachedCall] = []
    for ev in engine.events(session_id, CALL_EVENT):
        p = ev.payload or {}
        if p.get("call") in CACHED_CALLS and p.get("success") and p.get("first_step") is not None:
            out.append(CachedCall(str(p["call"]), str(p.get("goal", "")), int(p["first_step"]), int(p["last_step"])))
    return out


@dataclass
class CachedOutcome:
    success: bool
    how: str  # cache | healed
    message: str
    final: Observation
    answer: str = ""


def replay_call(session: LibrarySession, baseline: str, call: CachedCall, goal: str, *, heal_model: Any,
                profile: Any, real_time: bool, secrets: dict[str, str], pre: Observation) -> CachedOutcome:
    """Replay ``call``'s recorded steps of ``baseline`` into ``session`` from the screen ``pre``;
    a diverged stretch is healed by ``heal_model`` towards ``goal`` (None: not healed).

    It passed when every recorded step was replayed, or healed and rejoined, and the replayed
    finish (when the call ended with one) said success. A heal whose model finished without
    rejoining is a claim no recorded screen confirms (the offline healer "completes" its plan on a
    confirmation it never answered): a failure, as in ``replay --heal``."""
    from artemis_cli.replay.replayer import Replayer
    from artemis_cli.replay.results import ReplayOptions

    assert session.session_id is not None
    recorded = session.engine.get_steps(baseline, start=call.first_step, end=call.last_step)
    opts = ReplayOptions(heal=heal_model is not None, model=heal_model, profile=profile, real_time=real_time,
                         use_baseline=False, secret=lambda rec: _secret_for(rec, secrets))
    replayer = Replayer(session.engine, session.device, baseline, opts)
    replayer.goal = goal
    result, final = replayer.replay_into(session.session_id, session.lease, session.clock_start, recorded,
                                         session.last_step + 1, pre)
    diverged = result.first_divergence is not None
    how = "healed" if diverged else "cache"
    if result.message or (diverged and not opts.heal):  # stopped at a divergence, or a heal did not rejoin
        why = result.message or (result.steps[-1].detail if result.steps else "no recorded step replayed")
        return CachedOutcome(False, how, why, final)
    finish = replayer.replayed_finish
    done = f"healed from recorded step {result.first_divergence}" if diverged else "replayed the recorded steps"
    return CachedOutcome(finish is None or bool(finish.model_success), how, done, final, result.answer)


def _secret_for(rec: Any, secrets: dict[str, str]) -> str:
    from artemis_cli.errors import UsageError
    from artemis_cli.operators.secrets import step_secret

    name = step_secret(rec)
    if name and name in secrets:
        return secrets[name]
    raise UsageError(f"recorded step {rec.number} typed a secret{f' ({name})' if name else ''} this run was not given",
                     hint="pass it with Phone.open(secrets={NAME: value})")
