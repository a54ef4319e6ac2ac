"""Writing a step to the DataEngine: one transaction, then the search index and the lens job.

The step's ``meta`` keeps what the transcript needs to rebuild this turn exactly (the tail text
that opened it, the answers it opened with and closed with, the model's messages with their
thought signatures) — with any typed password redacted, never stored (``redact_turn``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from artemis_cli.engine.clock import now_iso
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import EventRecord, StepRecord
from artemis_cli.memory.lens import LensJob
from artemis_cli.memory.recall import Recall
from artemis_cli.memory.recall_text import screen_text_of
from artemis_cli.memory.service import StepMemoryService
from artemis_cli.memory.similarity import SCAN_STEPS
from artemis_cli.models.base import FunctionCall, FunctionResponse, Message, Part
from artemis_cli.operators.act import REDACTED, ActionResult, PlannedAction
from artemis_cli.operators.observe import Observation
from artemis_cli.operators.outcome import ActionOutcome, screen_fingerprint
from artemis_cli.operators.turn import TurnResult, model_text
from artemis_cli.perception.dhash import hamming
from artemis_cli.perception.marks import Mark, marks_to_json


def action_key(action_type: str, args: dict[str, Any] | None, target: dict[str, Any] | None) -> str:
    """Identity of an action for loop detection: type, arguments and the element it hit."""
    t = target or {}
    sem = (t.get("resource_id"), t.get("text"), t.get("content_desc"), t.get("class_name"))
    return json.dumps([action_type, args or {}, sem], sort_keys=True, ensure_ascii=False)


#: The tool whose arguments carry typed text (``args["text"]``).
TYPING_TOOL = "type_text"


def _scrub(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    return text


def _redact_part(part: Part, secrets: list[str]) -> Part:
    text = _scrub(part.text, secrets) if part.text is not None else None
    call = part.function_call
    if call is not None and call.name == TYPING_TOOL and isinstance(call.args.get("text"), str):
        typed = _scrub(call.args["text"], secrets)
        if typed != call.args["text"]:
            call = FunctionCall(call.name, {**call.args, "text": typed}, call.id)
    if text == part.text and call is part.function_call:
        return part
    return replace(part, text=text, function_call=call)  # thought flag and signature bytes kept


def redact_turn(messages: list[Message], secrets: Iterable[str]) -> list[Message]:
    """The turn with what it typed into password fields redacted — by structure, never by bytes.

    Only strings the model wrote as text are rewritten: the ``text`` argument of its
    ``type_text`` calls, and its own text parts (thoughts and prose, which may name what it is
    about to type). Everything else is kept exactly: thought signatures (opaque bytes, base64 only
    once serialised: a secret such as ``A`` occurs in most of them), every other argument (numbers,
    booleans, keys: a secret ``7`` or ``true`` must not turn ``{"index": 7}`` into invalid JSON),
    function responses and images. A blind replace over the serialised JSON corrupted exactly
    those, and the turn could no longer be read back (resume, ``sessions prompt``).

    Live and stored transcripts are one: the loop commits ``entry_from_step(stored)`` to its ledger,
    so from the next turn on the model sees its password call redacted, exactly as a rebuild from
    the DataEngine shows it, and every later request re-renders to its recorded hash. Editing the
    arguments of a call that carries a thought signature is safe there because the service checks
    signatures only on the *current* turn (the contents after the last user content with text,
    https://ai.google.dev/gemini-api/docs/thought-signatures; ``FakeGeminiServer`` checks the same),
    and a committed step is never in the current turn again: every later request opens a turn with
    the next observation. The signature itself is echoed unchanged. The current turn is never
    edited (its calls are validated; the action call ending the turn is in none of its requests).
    The one exception this cannot avoid: a secret an *earlier* call of the same turn already sent
    (a rejected password call, or the model naming the text before typing it) reached that turn's
    later requests unredacted; it is stored redacted all the same (SPEC §5 invariant 5 wins), so
    those in-turn requests no longer re-render to their recorded hashes.
    """
    ordered = sorted({s for s in secrets if s}, key=len, reverse=True)  # "ab" before "a"
    if not ordered:
        return list(messages)
    return [
        Message(m.role, [_redact_part(p, ordered) for p in m.parts]) if m.role == "model" else m
        for m in messages
    ]


def responses_to_dicts(responses: list[FunctionResponse]) -> list[dict[str, Any]]:
    return [{"name": r.name, "response": r.response, "id": r.id} for r in responses]


def responses_from_dicts(data: list[dict[str, Any]] | None) -> list[FunctionResponse]:
    return [FunctionResponse(d["name"], d.get("response") or {}, d.get("id")) for d in data or []]


#: Step traces kept in RAM: the similarity hint's scan window (loop detection needs only 3). Older
#: steps stay in the DataEngine; a long run must not grow a list per step (benchmarks/rss.py).
HISTORY_STEPS = SCAN_STEPS


class StepTrace(NamedTuple):
    """What similarity hints and loop detection look back on: a tuple in the layout
    :func:`~artemis_cli.memory.similarity.similar_step` reads, so the history is handed to it as it
    is (not copied into tuples every turn)."""

    step: int
    dhash: str
    offset_ms: int
    phrase: str
    key: str
    screen: str = ""  # outcome.screen_fingerprint of the screen it started on ("" unknown)
    #: it changed something that stays (typed text that landed, a switch or box it turned): a
    #: return to an earlier screen after such a step is routine work, not a loop
    progress: bool = False


@dataclass
class StepWriter:
    engine: DataEngine
    session_id: str
    recall: Recall
    service: StepMemoryService | None = None
    #: in step order (appended as steps are written; a resume restores it from the steps)
    history: list[StepTrace] = field(default_factory=list)
    last_pre_sha: str | None = None

    def write(
        self,
        *,
        number: int,
        started_at: str,
        offset_ms: int,
        pre: Observation,
        post: Observation | None,
        action: PlannedAction,
        result: ActionResult,
        turn: TurnResult,
        users: list[str],
        observation: str,
        replies_in: list[FunctionResponse],
        marks: Sequence[Mark] = (),
        replies_out: list[FunctionResponse],
        verdict: dict[str, Any] | None = None,
        outcome: ActionOutcome | None = None,
        subgoal_hash: str | None = None,
        milestone: str | None = None,
        events: list[EventRecord] | None = None,
    ) -> StepRecord:
        # text typed into a password field is never stored (SPEC §5 invariant 5)
        turn_messages = redact_turn(turn.messages, [*turn.secrets, action.secret or ""])
        messages = [m.to_dict() for m in turn_messages]
        thought = model_text(turn_messages)
        after = post if post is not None else pre
        blobs: dict[str, tuple[bytes, str]] = {
            "pre_screenshot": (pre.png, "screenshot"),
            "ui_xml": (pre.xml.encode("utf-8"), "ui_xml"),
            "post_screenshot": (after.png, "screenshot"),
            "post_ui_xml": (after.xml.encode("utf-8"), "ui_xml"),
        }
        record = StepRecord(
            session_id=self.session_id,
            number=number,
            started_at=started_at,
            ended_at=now_iso(),
            offset_ms=offset_ms,
            thought=thought,
            intent=stated_intent(turn, action),
            action_type=action.type,
            action_args=action.recorded_args,
            x=action.x,
            y=action.y,
            x2=action.x2,
            y2=action.y2,
            target=action.target.to_dict(),
            target_end=action.target_end.to_dict() if action.target_end else None,
            label_source=action.target.label_source,
            target_text=action.target.text or action.target.content_desc,
            target_resource_id=action.target.resource_id,
            target_class=action.target.class_name,
            result_status=result.status,
            result_detail=result.detail,
            outcome=outcome.to_dict() if outcome is not None else None,
            pre_dhash=pre.dhash,
            post_dhash=post.dhash if post is not None else None,
            foreground_app=pre.foreground,
            user_instruction="\n".join(users) if users else None,
            verdict=verdict,
            subgoal_hash=subgoal_hash,
            milestone=milestone,
            summary_status="pending",
            meta={
                "observation": observation,
                "replies_in": responses_to_dicts(replies_in),
                "replies_out": responses_to_dicts(replies_out),
                "messages": messages,
                # the set-of-marks drawn on the model's copy of the pre screenshot (absent: none)
                **({"marks": marks_to_json(marks)} if marks else {}),
                "problems": turn.problems,
                "model_calls": len(turn.responses),
                "post_foreground_app": post.foreground if post is not None else None,
                "post_observed": post is not None,
                "dhash_distance": hamming(pre.dhash, post.dhash) if post is not None else None,
                # device time: the pre-step observation's calls (ms), how the screenshot was taken,
                # and how long the screen took to settle after the action (watch | fixed)
                "observe_ms": pre.timings or None,
                "capture_path": pre.capture_path,
                "settle_ms": post.settle_ms if post is not None else None,
                "settle_mode": post.settle_mode if post is not None else None,
            },
        )
        stored = self.engine.record_step(record, blobs=blobs, events=events or [])
        self.last_pre_sha = stored.pre_screenshot
        self.recall.index_step(stored, screen=screen_text_of(pre.tree, pre.elements))
        self.history.append(
            StepTrace(number, pre.dhash, offset_ms, action.phrase(),
                      action_key(action.type, record.action_args, record.target), screen_fingerprint(pre),
                      progress=outcome is not None and outcome.status == "ok"
                      and (action.type == "type_text" or bool(outcome.states)))
        )
        if len(self.history) > HISTORY_STEPS:  # older traces are never looked at again (DB has them)
            del self.history[: len(self.history) - HISTORY_STEPS]
        if self.service is not None:
            self.service.submit(lens_job(self.session_id, number, action, pre.png, pre.xml,
                                         post.png if post is not None and post is not pre else None,
                                         post.xml if post is not None else None,
                                         outcome.to_dict() if outcome is not None else None))
        return stored


def lens_job(session_id: str, number: int, action: PlannedAction, pre_png: bytes, pre_xml: str,
             post_png: bytes | None, post_xml: str | None, observed: dict[str, Any] | None) -> LensJob:
    """The step summary job of a step (the one way a LensJob is made, live or on resume)."""
    return LensJob(
        session_id=session_id,
        step=number,
        pre_png=pre_png,
        post_png=post_png,
        action_kind=action.type,
        points=[p for p in ((action.x, action.y), (action.x2, action.y2)) if p[0] is not None],  # type: ignore[misc]
        action_phrase=action.phrase(),
        pre_xml=pre_xml,
        post_xml=post_xml,
        observed=observed,
    )


def pending_lens_jobs(engine: DataEngine, steps: Iterable[StepRecord]) -> list[LensJob]:
    """The summary jobs of ``steps`` whose summary is still ``pending`` (a stop cut their job off
    or cancelled it), rebuilt from what was recorded, for a resume to submit again. A step whose
    screenshot is not on disk any more is left pending."""
    from artemis_cli.engine.errors import BlobMissing
    from artemis_cli.perception.types import Target

    jobs: list[LensJob] = []
    for s in steps:
        if s.summary_status != "pending" or not s.pre_screenshot or not s.ui_xml:
            continue
        action = PlannedAction(s.action_type or "none", dict(s.action_args or {}), s.x, s.y, s.x2, s.y2,
                               target=Target.from_dict(s.target),
                               target_end=Target.from_dict(s.target_end) if s.target_end else None)
        post_png: bytes | None = None
        post_xml: str | None = None
        try:
            if (s.meta or {}).get("post_observed") and s.post_screenshot and s.post_ui_xml:
                post_png, post_xml = engine.blob(s.post_screenshot), engine.blob(s.post_ui_xml).decode("utf-8")
            jobs.append(lens_job(s.session_id, s.number, action, engine.blob(s.pre_screenshot),
                                 engine.blob(s.ui_xml).decode("utf-8"), post_png, post_xml, s.outcome))
        except (BlobMissing, OSError, UnicodeDecodeError):
            continue
    return jobs


def stated_intent(turn: TurnResult, action: PlannedAction) -> str | None:
    """What the turn's action was meant to do (its ``intent``), with any text meant for a
    password field redacted, as it is stored and replied (None when the model stated none)."""
    intent = turn.call.intent if turn.call is not None else None
    if intent is None:
        return None
    for secret in [*turn.secrets, action.secret or ""]:
        if secret:
            intent = intent.replace(secret, REDACTED)
    return intent
