"""The one vocabulary for what happened to each step of a replay.

Every place that names a replay step's kind uses these words and nothing else: the replay's
summary line and progress stream, ``artemis replay --json``, ``artemis sessions show`` (its
``replay`` column and ``replay_mark``), the HTML report's badges and legend, ``replay --help``
and the README. Kept free of imports so the report and the CLI help can read it cheaply.
"""

from __future__ import annotations

from typing import Any, Literal

ReplayKind = Literal["replayed", "retargeted", "healed", "diverged"]

#: Each kind with its one-line meaning, in the order they are listed and counted.
KINDS: dict[str, str] = {
    "replayed": "the recorded action on the recorded element, and the screen afterwards looked as recorded",
    "retargeted": ("the recorded action did what it did when recorded, but its element was found elsewhere "
                   "or relabelled, or the screen afterwards looked different"),
    "healed": ("a step the healing model took (replay --heal), or a recorded step that had no effect "
               "in the stretch the heal took over"),
    "diverged": ("the screen did not change as recorded, or the recorded element was gone: the replay "
                 "stops there unless --heal or --continue-on-divergence"),
}
#: Terminal colours (Rich) of the progress stream; the report's badges use the same hues.
COLOURS: dict[str, str] = {"replayed": "green", "retargeted": "yellow", "healed": "cyan", "diverged": "red"}
#: Older words found in stored sessions: read as today's.
_OLDER = {"matched": "replayed"}


def normalise(word: object) -> str | None:
    """Today's kind for a stored word (``matched`` of older replays is ``replayed``); None when
    ``word`` is not a kind."""
    text = _OLDER.get(str(word), str(word)) if word is not None else None
    return text if text in KINDS else None


def step_kind(mark: str | None, meta: dict[str, Any] | None) -> str | None:
    """A stored replay step's kind: its ``replay_mark`` (the final word, set after a heal relabels
    a step), else the verdict its ``meta["replay"]`` recorded (replays older than marks); None
    for a step of a run."""
    return normalise(mark) or normalise(((meta or {}).get("replay") or {}).get("status"))


def listing(last: str = "or") -> str:
    """``replayed, retargeted, healed or diverged``."""
    words = list(KINDS)
    return ", ".join(words[:-1]) + f" {last} {words[-1]}"


def counts_phrase(counts: dict[str, int], kinds: tuple[str, ...] = tuple(KINDS)) -> str:
    """``38 replayed, 22 retargeted, 17 healed`` for ``kinds`` (every kind by default)."""
    return ", ".join(f"{counts.get(k, 0)} {k}" for k in kinds)
