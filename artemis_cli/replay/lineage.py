"""A replay's lineage: each replay step's mark and the promoted baseline of a source session.

Marks (``steps.replay_mark``, migration ``0010_replay_lineage``): each stored replay step's kind
in the one vocabulary of ``replay.kinds`` (replayed, retargeted, healed, diverged), set once the
step's kind is final (a heal relabels the diverged step it takes over).

A baseline (``replay_baselines``): ``artemis sessions promote HEALED`` makes a successful replay
the session that later replays of its source — the original recording at the root of its
``parent_session`` chain — and of the promoted session itself replay.
"""

from __future__ import annotations

from dataclasses import dataclass

from artemis_cli.engine.clock import now_iso
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import SessionRecord
from artemis_cli.engine.transaction import write_transaction
from artemis_cli.errors import UsageError
from artemis_cli.replay.kinds import KINDS

MARKS = tuple(KINDS)


def set_mark(engine: DataEngine, session_id: str, number: int, mark: str) -> None:
    if mark not in MARKS:
        raise ValueError(f"replay mark must be one of {MARKS}, got {mark!r}")
    with engine.lock, write_transaction(engine.db):
        engine.db.execute("UPDATE steps SET replay_mark = ? WHERE session_id = ? AND number = ?",
                          [mark, session_id, number])


def marks(engine: DataEngine, session_id: str) -> dict[int, str]:
    """Step number -> mark of a replay session (empty for a run)."""
    with engine.lock:  # sqlite-utils' query opens a savepoint: never beside a summary job's write
        rows = list(engine.db.query(
            "SELECT number, replay_mark FROM steps WHERE session_id = ? AND replay_mark IS NOT NULL", [session_id]))
    return {int(r["number"]): str(r["replay_mark"]) for r in rows}


def root_source(engine: DataEngine, session: SessionRecord) -> SessionRecord:
    """The recording at the root of a replay chain (a session that is not a replay is its own)."""
    seen = {session.id}
    while session.loop == "replay" and session.parent_session and session.parent_session not in seen:
        seen.add(session.parent_session)
        session = engine.get_session(session.parent_session)
    return session


def baseline_of(engine: DataEngine, source_id: str) -> str | None:
    with engine.lock:
        rows = list(engine.db.query("SELECT baseline_session FROM replay_baselines WHERE source_session = ?",
                                    [source_id]))
    return str(rows[0]["baseline_session"]) if rows else None


@dataclass(frozen=True)
class Baseline:
    requested: str  # the session asked for
    replayed: str  # the session whose steps are replayed
    source: str  # the root recording

    @property
    def substituted(self) -> bool:
        return self.requested != self.replayed


def resolve(engine: DataEngine, session: SessionRecord) -> Baseline:
    """What a replay of ``session`` replays: the promoted baseline of its root recording when
    ``session`` is that recording, else ``session`` itself (the promoted session replays itself)."""
    root = root_source(engine, session)
    base = baseline_of(engine, root.id)
    if base is not None and session.id == root.id:
        return Baseline(session.id, base, root.id)
    return Baseline(session.id, session.id, root.id)


def promote(engine: DataEngine, session: SessionRecord) -> str:
    """Make ``session`` (a succeeded replay) the baseline of its root recording; returns the root
    id. A UsageError names why a session cannot be promoted."""
    if session.loop != "replay" or not session.parent_session:
        raise UsageError(f"session {session.id} is not a replay: only a replay can be promoted",
                         hint="replay the recording with `artemis replay ID --heal`, then promote that replay")
    if session.status != "succeeded":
        raise UsageError(f"replay {session.id} {session.status}: only a successful replay can be promoted",
                         hint="promote a replay whose status is succeeded (see `artemis sessions list`)")
    root = root_source(engine, session)
    with engine.lock, write_transaction(engine.db):
        engine.db.execute(
            "INSERT INTO replay_baselines (source_session, baseline_session, promoted_at) VALUES (?, ?, ?) "
            "ON CONFLICT(source_session) DO UPDATE SET baseline_session = excluded.baseline_session, "
            "promoted_at = excluded.promoted_at",
            [root.id, session.id, now_iso()])
    return root.id
