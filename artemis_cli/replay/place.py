"""Where a replay of a recording runs, and which step of the user's recording a replayed step is.

One rule for ``artemis replay`` and ``artemis test`` (its session cases): a replay replays the
recording's promoted baseline when it has one (``lineage.resolve``), and runs where the session it
replays was recorded — the recording's own device and sim world, or the baseline's (a heal done
on ``sim:drift`` and promoted replays on ``sim:drift``). ``--device`` (``replay``) or a
``sim:<world>`` entry of ``--devices`` (``test``) overrides the world. Both say the place on stderr.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import SessionRecord, StepRecord


@dataclass(frozen=True)
class ReplayPlace:
    requested: str  # the session the user named
    replayed: str  # the session whose steps are replayed (the promoted baseline, or ``requested``)
    spec: str  # the device: ``sim``, ``sim:<world>`` or an adb serial
    seed: int
    sim_options: dict[str, Any] = field(default_factory=dict)
    world: str | None = None  # the sim world (None on a real device)
    baseline: str | None = None  # the recording's promoted baseline, replayed or not (``--original``)

    @property
    def substituted(self) -> bool:
        return self.requested != self.replayed

    def text(self, device: str | None = None) -> str:
        """``replaying B, the promoted baseline of A, on sim:drift (the baseline's world)``, and
        how to replay the other one of the two when the recording has a baseline."""
        what = (f"replaying {self.replayed}, the promoted baseline of {self.requested}," if self.substituted
                else f"replaying {self.requested}")
        whose = "the baseline's" if self.substituted else "the recording's own"
        if device is not None:
            where = f"{what} on {device} (as asked)"
        elif self.world is None:
            where = f"{what} on {self.spec} ({whose} device)"
        else:
            where = f"{what} on sim:{self.world} ({whose} world)"
        if self.substituted:
            return f"{where}; `artemis replay {self.requested} --original` replays the recording itself"
        if self.baseline:
            return f"{where}: replaying the recording itself (--original), not its promoted baseline {self.baseline}"
        return where


def replay_place(engine: DataEngine, session: SessionRecord, *, original: bool = False) -> ReplayPlace:
    """Where a replay of ``session`` runs (see the module doc); ``original``: the recording
    itself, not its promoted baseline (``replay --original``)."""
    from artemis_cli.replay.lineage import resolve
    from artemis_cli.replay.replayer import device_spec_for

    base = resolve(engine, session)
    replayed = engine.get_session(base.replayed) if base.substituted and not original else session
    spec, seed, options, world = device_spec_for(replayed)
    if spec.startswith("sim:"):  # a replay run with --device sim:<world> records that world in its serial
        world = spec[4:]
    elif spec.startswith("sim"):
        world = world or "default"
    else:
        world = None
    return ReplayPlace(session.id, replayed.id, spec if world is None else f"sim:{world}", seed, options, world,
                       base.replayed if base.substituted else None)


def recording_step(engine: DataEngine, step: StepRecord, root: str) -> int | None:
    """The number of the step of recording ``root`` that ``step`` (of a replay of it, or of a
    replay of such a replay) replayed; None for a step a heal added."""
    seen: set[str] = set()
    while True:
        meta = (step.meta or {}).get("replay") or {}
        source, number = meta.get("source_session"), meta.get("source_step")
        if not source or number is None or source in seen:
            return None
        if source == root:
            return int(number)
        seen.add(source)
        try:
            step = engine.get_step(str(source), int(number))
        except Exception:
            return None


def as_recorded(engine: DataEngine, step: StepRecord, root: str | None) -> StepRecord:
    """``step`` numbered as the user's recording ``root`` numbers it (errors and prompts name the
    step the user recorded, not the promoted baseline's); unchanged without a baseline."""
    import dataclasses

    if root is None:
        return step
    with contextlib.suppress(Exception):
        number = recording_step(engine, step, root)
        if number is not None:
            return dataclasses.replace(step, number=number)
    return step


def step_phrase(engine: DataEngine, replayed: str, number: int, root: str | None) -> str:
    """``step 5`` as the user's recording ``root`` numbers step ``number`` of the replayed session:
    ``step 5 (the promoted baseline's step 8)``, or ``the promoted baseline's step 9 (a healed
    step, not in the recording)``; plain ``step N`` without a baseline."""
    if root is None or root == replayed:
        return f"step {number}"
    try:
        recorded = recording_step(engine, engine.get_step(replayed, number), root)
    except Exception:
        recorded = None
    if recorded is None:
        return f"the promoted baseline's step {number} (a healed step, not in the recording)"
    return f"step {recorded} (the promoted baseline's step {number})"
