"""The transcript ledger (SPEC §10.2): one append-only prompt per session, in four zones.

    S  stable prefix   system instruction + tool declarations: byte-identical all session
    F  frozen history  the task, then compressed history (chunks); changes only at compression
    A  active window   recent steps verbatim: the observation that opened each step and the
                       model's own messages (kept unchanged, so thought signatures are echoed)
    T  tail            this turn's observation, rebuilt every turn

Every mutation is a *decision* taken at the start of a turn (``begin_turn``), recorded as a
``LedgerDecision`` (persisted as an event by the caller) and never revisited:

- the scrub edge: at depth ``xml_scrub_depth`` an observation keeps only its head (time, step,
  app, user instructions); screenshots at depth ``image_scrub_depth`` or more are scrubbed in
  batches, on turns whose step is a multiple of ``image_scrub_batch``, so the calls between two
  batches share their whole prefix up to the new step. A scrubbed screenshot becomes the step's
  ready visual summary, or the unavailable placeholder when its summary failed; a pending one
  waits until depth ``image_scrub_depth + pending_grace_steps`` (then it is due on any turn) and
  becomes the pending placeholder if it is still pending there. A late summary is never
  back-filled.
- compression: the oldest steps of A fold into a chunk in F (``chunker``), never below
  ``min_active_steps``.

Rendering is a pure function of the entries, the decisions and the tail, so the same records
rebuild the same request byte for byte (resume, ``sessions prompt``). A cut never separates a
function call from its response: a step's opening function responses are shown only while the
step that made the calls is still in A.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from artemis_cli.models.base import FunctionResponse, Message, ModelRequest, Part, ToolDecl
from artemis_cli.perception.marks import Mark, draw_marks, marks_digest
from artemis_cli.perception.png import png_size
from artemis_cli.perception.screenshot import without_pixels

ImageState = Literal["image", "summary", "pending", "failed"]

#: The line that opens an observation's body (notices, plan, element list): the body is what the
#: scrub edge drops; everything before it is the head, which stays.
OBSERVATION_HEADING = "# CURRENT OBSERVATION"

HISTORY_HEADING = "# EARLIER STEPS (compressed; recall_history returns any step in full)"


def summary_text(step: int, text: str) -> str:
    return f"[visual summary of step {step}] {text}"


def pending_placeholder(step: int) -> str:
    return f"[visual summary pending; evidence at step {step}]"


def unavailable_placeholder(step: int) -> str:
    return f"[visual summary unavailable; evidence at step {step}]"


@dataclass(frozen=True)
class LedgerSettings:
    xml_scrub_depth: int = 1
    image_scrub_depth: int = 3
    pending_grace_steps: int = 3
    min_active_steps: int = 5
    image_scrub_batch: int = 1
    image_max_side: int | None = None  # longest side of the screenshots the model sees
    media_resolution: str | None = None  # sent to models that price images by it (Gemini 3)

    @classmethod
    def from_profile(cls, profile: Any) -> LedgerSettings:
        t = profile.memory.transcript
        return cls(
            xml_scrub_depth=t.xml_scrub_depth,
            image_scrub_depth=t.image_scrub_depth,
            pending_grace_steps=t.pending_grace_steps,
            min_active_steps=t.min_active_steps,
            image_scrub_batch=t.image_scrub_batch,
            image_max_side=profile.screenshot.max_side,
            media_resolution=profile.screenshot.media_resolution,
        )

    def image_batch_turn(self, step: int) -> bool:
        """Screenshots are scrubbed on these turns only (every ``image_scrub_batch`` steps)."""
        return self.image_scrub_batch <= 1 or step % self.image_scrub_batch == 0


@dataclass
class LedgerEntry:
    """One committed step as the transcript holds it."""

    step: int
    observation: str  # the full tail text that opened this step
    image_sha: str | None
    replies_in: list[FunctionResponse]  # answers to the previous step's calls
    turn: list[Message]  # the model's messages and in-turn tool answers
    image_state: ImageState = "image"
    image_text: str | None = None
    xml_scrubbed: bool = False
    #: the set-of-marks drawn on the model's copy of the screenshot (``perception.marks``), as
    #: the step's meta stored them; () for none (marks off, or a session recorded before them)
    marks: tuple[Mark, ...] = ()


@dataclass(frozen=True)
class LedgerDecision:
    """A mutation taken at the start of the turn of step ``at`` (persisted as an event)."""

    op: Literal["xml", "image", "frozen", "turn"]  # "turn": this turn's decisions are complete
    at: int
    step: int | None = None  # xml / image
    state: str | None = None  # image: summary | pending | failed
    text: str | None = None  # image replacement / the whole new F text
    start: int | None = None
    end: int | None = None  # frozen: steps up to here leave A
    ops: str | None = None  # frozen: the F operations (JSON), to rebuild F's structure on resume

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LedgerDecision:
        return cls(**{k: data.get(k) for k in ("op", "at", "step", "state", "text", "start", "end", "ops")})  # type: ignore[arg-type]


@dataclass
class Tail:
    """The T zone: this turn's opening answers, observation text and screenshot."""

    step: int
    replies_in: list[FunctionResponse]
    observation: str
    image_png: bytes | None
    marks: tuple[Mark, ...] = ()  # drawn on the model's copy of ``image_png``


#: (status, text) of a step's visual summary, as the DataEngine holds it now.
SummaryLookup = Callable[[int], tuple[str, str | None]]


@dataclass
class TranscriptLedger:
    system: str
    tools: list[ToolDecl]
    task_text: str
    settings: LedgerSettings = field(default_factory=LedgerSettings)
    load_image: Callable[[str], bytes] = lambda sha: b""
    entries: list[LedgerEntry] = field(default_factory=list)  # A zone, oldest first
    f_body: str = ""  # F zone after the task: compressed history
    decisions: list[LedgerDecision] = field(default_factory=list)  # bounded log, see _log
    _images: dict[tuple[str, str], bytes] = field(default_factory=dict)  # by (sha, marks digest)
    #: the last tail image's (png, marks, key): its key is not hashed again while the turn lasts
    _tail_key: tuple[bytes, tuple[Mark, ...], tuple[str, str]] | None = field(default=None, repr=False)
    #: decisions applied so far: a request rendered at the same version (and tail) is the same
    applied: int = 0

    # -- S zone ------------------------------------------------------------------------------

    def stable_prefix(self) -> str:
        tools = [{"name": t.name, "description": t.description, "parameters": t.parameters} for t in self.tools]
        return json.dumps({"system": self.system, "tools": tools}, sort_keys=True, ensure_ascii=False)

    def s_zone_hash(self) -> str:
        return hashlib.sha256(self.stable_prefix().encode("utf-8")).hexdigest()

    # -- decisions ---------------------------------------------------------------------------

    def begin_turn(
        self,
        step: int,
        summaries: SummaryLookup,
        *,
        compress: Callable[[], list[LedgerDecision]] | None = None,
    ) -> list[LedgerDecision]:
        """Take this turn's decisions (scrub edge, then compression) and return the new ones."""
        new: list[LedgerDecision] = []
        s = self.settings
        batch = s.image_batch_turn(step)
        grace_end = s.image_scrub_depth + s.pending_grace_steps
        for entry in self.entries:
            depth = step - entry.step
            if not entry.xml_scrubbed and depth >= s.xml_scrub_depth:
                new.append(LedgerDecision("xml", at=step, step=entry.step))
            if entry.image_state != "image" or not entry.image_sha:
                continue
            # due on a batch turn from image_scrub_depth on; on any turn once the grace is used up
            if (batch and depth >= s.image_scrub_depth) or depth >= grace_end:
                status, text = summaries(entry.step)
                if status == "ready" and text:
                    new.append(LedgerDecision("image", at=step, step=entry.step, state="summary",
                                              text=summary_text(entry.step, text)))
                elif status == "failed":
                    new.append(LedgerDecision("image", at=step, step=entry.step, state="failed",
                                              text=unavailable_placeholder(entry.step)))
                elif depth >= grace_end:
                    new.append(LedgerDecision("image", at=step, step=entry.step, state="pending",
                                              text=pending_placeholder(entry.step)))
        for d in new:
            self.apply(d)
        if compress is not None:
            new += compress()  # the compressor applies its own decisions as it takes them
        return new

    def apply(self, d: LedgerDecision) -> None:
        """Apply one decision (live, or replayed from the DataEngine when rebuilding)."""
        self.applied += 1
        self._log(d)
        if d.op == "turn":
            return
        if d.op == "frozen":
            assert d.end is not None
            self.f_body = d.text or ""
            self.entries = [e for e in self.entries if e.step > d.end]
            held = {_image_key(e.image_sha, e.marks) for e in self.entries if e.image_state == "image" and e.image_sha}
            self._images = {key: png for key, png in self._images.items() if key in held}
            return
        entry = self._entry(d.step)
        if entry is None:
            return
        if d.op == "xml":
            entry.xml_scrubbed = True
        elif d.op == "image":
            entry.image_state = d.state  # type: ignore[assignment]
            entry.image_text = d.text
            if entry.image_sha:
                self._images.pop(_image_key(entry.image_sha, entry.marks), None)

    def _log(self, d: LedgerDecision) -> None:
        """Keep in RAM what is read back: every ``frozen`` decision's ops (``Compressor.restore``
        rebuilds F's structure from them) and the latest turn's decisions (resume asks whether
        that turn was decided). Older scrub and turn decisions, and the F text of a superseded
        ``frozen`` decision, live only in the DataEngine's events — a long run holds no per-step
        list here (benchmarks/rss.py)."""
        log = self.decisions
        if log and d.at > log[-1].at:
            log[:] = [x for x in log if x.op == "frozen"]
        if d.op == "frozen":
            log[:] = [replace(x, text=None) if x.op == "frozen" and x.text is not None else x for x in log]
        log.append(d)

    def _entry(self, step: int | None) -> LedgerEntry | None:
        return next((e for e in self.entries if e.step == step), None)

    def commit(self, entry: LedgerEntry) -> None:
        self.entries.append(entry)

    # -- rendering ---------------------------------------------------------------------------

    def frozen_parts(self) -> list[str]:
        """F as parts: the task, then one part per block (chunk, era, period, snapshot), so a swap
        that appends a chunk leaves every earlier part, and the provider's cached prefix, as it
        was. Joined with blank lines they are exactly :meth:`frozen_text`."""
        if not self.f_body:
            return [self.task_text]
        blocks = self.f_body.split("\n\n[")
        blocks = [blocks[0], *("[" + b for b in blocks[1:])]
        return [self.task_text, HISTORY_HEADING, *blocks]

    def frozen_text(self) -> str:
        text = self.task_text
        if self.f_body:
            text += "\n\n" + HISTORY_HEADING + "\n\n" + self.f_body
        return text

    def _image(self, sha: str, marks: tuple[Mark, ...] = ()) -> bytes:
        """A step's screenshot as the model sees it (scaled, its marks drawn), loaded once while
        it is in A."""
        key = _image_key(sha, marks)
        if key not in self._images:
            self._images[key] = draw_marks(self.load_image(sha), self.settings.image_max_side, marks, sha=sha)
        return self._images[key]

    def _tail_image(self, png: bytes, marks: tuple[Mark, ...] = ()) -> bytes:
        """This turn's screenshot, scaled and marked once: the DataEngine stores it under its
        sha256 and the step's meta keeps its marks, so the committed entry finds the same bytes
        here next turn (one image, one price)."""
        if not self.settings.image_max_side and not marks:
            return without_pixels(png)  # sent as recorded: nothing to hash or keep
        last = self._tail_key
        if last is not None and last[0] is png and last[1] is marks:
            key = last[2]  # the turn's request rendered again (budget probes, retries): same tail
        else:
            key = _image_key(hashlib.sha256(png).hexdigest(), marks)
            self._tail_key = (png, marks, key)
        if key not in self._images:
            self._images[key] = draw_marks(png, self.settings.image_max_side, marks, sha=key[0])
        return self._images[key]

    @staticmethod
    def split_observation(observation: str) -> tuple[str, str]:
        """(head, body) of an observation: the body starts at the ``# CURRENT OBSERVATION`` line.
        An observation recorded before heads existed (it starts with that line) is all body."""
        at = observation.find("\n" + OBSERVATION_HEADING)
        if at < 0:
            return "", observation
        return observation[:at], observation[at + 1 :]

    @staticmethod
    def scrubbed_observation(step: int, observation: str) -> str:
        """The head only: time, step, app; user instructions stay verbatim at every level."""
        head, body = TranscriptLedger.split_observation(observation)
        if head:
            return head
        lines = body.splitlines()  # the older single-block format
        first = lines[0].replace(OBSERVATION_HEADING, f"# OBSERVATION (step {step})", 1) if lines else ""
        keep = [first, *lines[1:2]]
        keep += [ln for ln in lines[2:] if ln.startswith("User instruction")]
        return "\n".join(keep)

    def _observation_parts(self, step: int, observation: str, scrubbed: bool, image: Part | None) -> list[Part]:
        """Head, screenshot (or what replaced it), then the body unless scrubbed."""
        head, body = self.split_observation(observation)
        if not head:  # older format: one text block, then the image
            text = self.scrubbed_observation(step, observation) if scrubbed else observation
            return [Part(text=text), *([image] if image is not None else [])]
        parts = [Part(text=head)]
        if image is not None:
            parts.append(image)
        if not scrubbed:
            parts.append(Part(text=body))
        return parts

    def _entry_parts(self, entry: LedgerEntry, with_replies: bool) -> list[Part]:
        parts = [Part(function_response=r) for r in entry.replies_in] if with_replies else []
        image: Part | None = None
        if entry.image_state == "image" and entry.image_sha:
            image = Part(image_png=self._image(entry.image_sha, entry.marks))
        elif entry.image_text:
            image = Part(text=entry.image_text)
        return parts + self._observation_parts(entry.step, entry.observation, entry.xml_scrubbed, image)

    def messages(self, tail: Tail, turn: list[Message]) -> list[Message]:
        out: list[Message] = [Message("user", [Part(text=t) for t in self.frozen_parts()])]
        prev_step: int | None = None
        for entry in self.entries:
            with_replies = prev_step is not None and prev_step == entry.step - 1
            _append(out, Message("user", self._entry_parts(entry, with_replies)))
            for m in entry.turn:
                _append(out, m)
            prev_step = entry.step
        tail_parts = [Part(function_response=r) for r in tail.replies_in] if prev_step == tail.step - 1 else []
        image = Part(image_png=self._tail_image(tail.image_png, tail.marks)) if tail.image_png is not None else None
        tail_parts += self._observation_parts(tail.step, tail.observation, False, image)
        _append(out, Message("user", tail_parts))
        for m in turn:
            _append(out, m)
        return out

    def request(self, tail: Tail, turn: list[Message]) -> ModelRequest:
        return ModelRequest(system=self.system, messages=self.messages(tail, turn), tools=self.tools,
                            role="operator", media_resolution=self.settings.media_resolution)


def _image_key(sha: str, marks: tuple[Mark, ...]) -> tuple[str, str]:
    return sha, marks_digest(marks) if marks else ""


def _append(out: list[Message], message: Message) -> None:
    """Append, merging consecutive same-role messages (the API wants turns to alternate)."""
    if out and out[-1].role == message.role:
        out[-1] = Message(message.role, [*out[-1].parts, *message.parts])
    else:
        out.append(message)


# -- token estimates (SPEC §10.4) ------------------------------------------------------------


def image_tokens(png: bytes) -> int:
    """Gemini's image accounting: 258 tokens when both sides ≤ 384 px, else 258 per 768×768 tile."""
    size = png_size(png)
    if size is None:
        return 258
    w, h = size
    if w <= 384 and h <= 384:
        return 258
    return 258 * math.ceil(w / 768) * math.ceil(h / 768)


def estimate_tokens(request: ModelRequest, image_cost: Callable[[bytes], int] | None = None) -> int:
    """Characters/4 for text and calls; images as Gemini counts them, or by ``image_cost``."""
    count = image_cost or image_tokens
    total = math.ceil(len(request.system) / 4)
    # len(json.dumps(tools)): the list's brackets, its items and ", " between them
    tools = request.tools
    total += math.ceil((2 + sum(t.json_chars for t in tools) + 2 * max(0, len(tools) - 1)) / 4)
    for m in request.messages:
        for p in m.parts:
            if p.image_png is not None:
                total += count(p.image_png)
            elif p.text is not None:
                total += math.ceil(len(p.text) / 4)
            else:
                total += math.ceil(len(json.dumps(p.to_dict(), ensure_ascii=False)) / 4)
    return total


@dataclass
class TokenMeter:
    """Context size for decisions: the last operator call's measured prompt tokens plus an estimate
    of what changed since. Lens and other auxiliary calls never touch it."""

    measured: int | None = None
    measured_estimate: int = 0
    #: images as the operator's provider counts them (None: Gemini's ``image_tokens``)
    image_cost: Callable[[bytes], int] | None = None

    def observe(self, request: ModelRequest, prompt_tokens: int) -> None:
        if request.role != "operator" or prompt_tokens <= 0:
            return
        self.measured = prompt_tokens
        self.measured_estimate = estimate_tokens(request, self.image_cost)

    def context_tokens(self, request: ModelRequest) -> int:
        est = estimate_tokens(request, self.image_cost)
        if self.measured is None:
            return est
        return max(0, self.measured + est - self.measured_estimate)
