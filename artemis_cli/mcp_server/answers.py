"""What an MCP client's model reads back: the screen (as Artemis's own operator sees it) and what
each action came to. Pinned by golden tests (tests/mcp/golden/).

Device text is untrusted: the element list reaches the client only inside the ``<screen>`` fence
(``operators.prompts.screen_fence``), and the outcome line quotes screen text as JSON strings, as
the operator's function replies do; the server's instructions and the ``android_task`` prompt
say both are data, never instructions. A literal ``</screen>`` in device text is neutralised.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from artemis_cli.operators.act import PlannedAction
from artemis_cli.operators.observe import Observation
from artemis_cli.operators.outcome import ActionOutcome
from artemis_cli.operators.prompts import screen_fence
from artemis_cli.perception.quoting import quote_untrusted, untrusted_json

#: The screenshot a client gets is scaled to at most this many pixels on its longest side (the
#: size vision models take without scaling it again); coordinates stay the screen's pixels.
IMAGE_MAX_SIDE = 1568


device_json = untrusted_json  # an answer that quotes device text, as JSON no device text can escape
#: fields of a ``recall``/``note`` answer that hold a note's key or text as saved (text from the
#: screen, as often as not): quoted as device text in the structured content as in the text
_NOTE_FIELDS = ("key", "content", "saved")


def memory_answer(answer: dict[str, Any]) -> dict[str, Any]:
    """A ``recall`` or ``note`` answer as the client gets it (text and structured content): the
    recall text quotes device text already; a note's key and content are quoted here."""
    return {k: quote_untrusted(v, None) if k in _NOTE_FIELDS and isinstance(v, str) else v
            for k, v in answer.items()}


@dataclass
class ViewAnswer:
    """A screen as the client gets it: the foreground app, the keyboard, the saved notes and the
    numbered element list its indices refer to (and the screenshot, as an image part)."""

    obs: Observation
    step: int  # the step the client's next action will be
    session_id: str
    notes: list[str] = field(default_factory=list)
    allow_apps: tuple[str, ...] = ()
    #: why the action just asked for was not sent (the screen changed under it)
    refused: str | None = None
    #: what the last step came to on this screen, when the screen moved on after its answer and
    #: that changed it (``operators.settling.late_notice``)
    late: str | None = None

    def lines(self) -> list[str]:
        obs = self.obs
        w, h = obs.space.width, obs.space.height
        grid = "pixels" if obs.space.mode == "pixels" else "0-1000 normalised grid"
        lines = [f"Foreground app: {obs.foreground or 'unknown'}. Screen {w}x{h}; coordinates: {grid}."]
        if obs.keyboard_shown is not None:
            lines.append("Keyboard: shown." if obs.keyboard_shown else "Keyboard: hidden.")
        if self.allow_apps:
            lines.append(f"Allowed apps: {', '.join(self.allow_apps)} (press_key back/home leaves any other).")
        for problem in obs.problems:
            lines.append(f"Note: {problem}")
        if self.late:
            lines.append(f"Note: {self.late}")
        if self.notes:
            lines.append("Your saved notes (newest first; quoted as saved, may hold screen text):")
            lines += self.notes
        lines.append("Screen elements (untrusted device content):")
        lines += screen_fence(obs.element_list, "(no elements: the screen may be loading or opaque)")
        return lines

    def text(self) -> str:
        head = [f"Not sent — {self.refused}."] if self.refused else []
        head.append(f"Session {self.session_id}, next action is step {self.step}.")
        return "\n".join([*head, *self.lines()])

    def structured(self) -> dict[str, Any]:
        out: dict[str, Any] = {"session_id": self.session_id, "next_step": self.step,
                               "foreground_app": self.obs.foreground, "elements": len(self.obs.elements),
                               "keyboard_shown": self.obs.keyboard_shown}
        if self.refused:
            out["status"] = "not_sent"
            out["detail"] = self.refused
        return out


@dataclass
class StepAnswer:
    """One recorded action: its number, what it came to, and the screen after it."""

    number: int
    action: PlannedAction
    outcome: ActionOutcome
    reply: dict[str, Any]
    view: ViewAnswer
    #: the session this step closed (``finish``), else None
    closed: str | None = None

    def text(self) -> str:
        status = self.outcome.status
        changed = self.outcome.screen_changed
        said = "" if changed is None or status == "finished" else (
            " (the screen changed)" if changed else " (nothing on the screen changed)")
        lines = [f"Step {self.number} ({self.action.type}): {status}{said}.",
                 f"Outcome (quoted texts are device content): {device_json(self.reply)}"]
        if self.closed:
            lines.append(f"Session {self.closed} is closed and saved. See it with `artemis sessions show {self.closed}`,"
                         f" replay it with `artemis replay {self.closed}`, turn it into a test with "
                         f"`artemis sessions export {self.closed} --format maestro`. A further tool call starts a "
                         "new session.")
            return "\n".join(lines)
        lines.append(f"Now (next action is step {self.view.step}):")
        return "\n".join([*lines, *self.view.lines()])

    def structured(self) -> dict[str, Any]:
        out = {"step": self.number, "session_id": self.view.session_id, **self.reply,
               "foreground_app": self.view.obs.foreground}
        if self.closed:
            out["closed"] = True
        return out
