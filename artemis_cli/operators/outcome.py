"""Action outcomes (SPEC §15): what observably happened after a step's action.

``assess`` compares the observation the model acted on with the one taken after the action and
says what changed: the screen or not (UI structure, and the screenshot's dHash for what a dump
cannot show), the state of switches and check boxes, the text a typed-into field now shows,
windows that opened or closed, the app in front. Its ``status`` is the step's result status:

* ``ok``: the intended effect was seen — the screen changed after a tap, double tap, swipe,
  scroll (the content moved), drag, key or wait;
  typed text shows in its field; the launched app is in front;
* ``no_change``: the action ran and nothing visible changed;
* ``failed``: the intended effect demonstrably did not happen (typed text that did not land, a
  field that did not take focus so nothing was typed, another app in front after a launch);
* ``error``: the device or the model call failed (``execute``'s verdict is kept), or no
  observation came after the action;
* ``finished``: the ``finish`` tool;
* ``app_crashed`` / ``app_not_responding``: the app in front when the action ran crashed or
  stopped responding, as the device's logcat says (``Observation.logs``); the detail quotes the
  exception line or the ANR's reason. It wins over every other status but ``finished`` and a
  missing observation. Crashes of other apps are kept (``logs``) but change nothing.

The outcome is stored on the step (``steps.outcome``, ``to_dict``) with its rendered ``summary``,
so ledgers, recall, reports and the model's function responses all read the same stored words.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from artemis_cli.engine.records import REDACTED, ResultStatus
from artemis_cli.memory.ledger_lines import outcome_phrase
from artemis_cli.operators.observe import Observation
from artemis_cli.perception.dhash import hamming
from artemis_cli.perception.hittest import HitIndex
from artemis_cli.perception.logcat import AppFault, LogEvents
from artemis_cli.perception.quoting import quote_untrusted
from artemis_cli.perception.structure import is_edit, short_class
from artemis_cli.perception.text_changes import TextChanges, phrase, text_changes
from artemis_cli.perception.types import Target, UINode, UITree
from artemis_cli.perception.windows import Layer, Window

__all__ = [
    "VISUAL_CHANGE_MIN",
    "ActionOutcome",
    "assess",
    "field_label",
    "field_text",
    "find_field",
    "landing_problem",
    "opened_windows",
    "window_phrase",
]

#: dHash bits that count as a visible change on their own: smaller differences are ripples, a
#: blinking caret, anti-aliasing. Anything the UI dump shows counts at once.
VISUAL_CHANGE_MIN = 3
#: Characters of device text quoted in an outcome.
QUOTE_CHARS = 60
#: Characters of a crash's exception line (or an ANR's reason) quoted in an outcome.
FAULT_QUOTE_CHARS = 160
#: State changes of switches and check boxes reported per step (the target's first).
MAX_STATES = 3
#: Screen text changes short enough for ledger lines and history phrases (the model's reply always
#: carries them): at most this many texts in all, each at most ``SHORT_TEXT_CHARS`` long.
SHORT_TEXTS = 2
SHORT_TEXT_CHARS = 40
#: Dots a password field shows for each character.
PASSWORD_DOTS = frozenset("•●*·")
_SYSTEMUI = "com.android.systemui"
_TICKING = ("clock", "battery")  # status-bar texts that change by themselves


# --- reading trees ------------------------------------------------------------------------------


def windows(tree: UITree) -> list[Window]:
    """The dump's windows as the screen draws them (bottom to top), on-screen keyboards left out
    (the keyboard appearing is not a pop-up)."""
    return [w for w in HitIndex.of(tree).windows if w.layer != Layer.IME]


def window_phrase(win: Window) -> str:
    title = f"{quote_untrusted(win.title, QUOTE_CHARS)} " if win.title else ""
    return f"{title}({win.package or 'unknown package'})"


def _extra(these: list[Window], than: list[Window]) -> list[Window]:
    """Windows of ``these`` (their dumped ones) that ``than`` has no counterpart for
    (:meth:`Window.same_as`, each counterpart used once; a window known only from the window
    manager counts: the app's screen under a dialog is still there)."""
    left = list(than)
    out = []
    for w in these:
        if w.synthetic:
            continue
        match = next((k for k, o in enumerate(left) if w.same_as(o)), None)
        if match is None:
            out.append(w)
        else:
            del left[match]
    return out


def _window_diff(pre: UITree, post: UITree) -> tuple[list[Window], list[Window]]:
    before, after = windows(pre), windows(post)
    return _extra(after, before), _extra(before, after)


def opened_windows(pre: UITree | None, now: UITree) -> list[Window]:
    """Windows in ``now`` that ``pre`` did not have (a pop-up, a dialog)."""
    return _window_diff(pre, now)[0] if pre is not None else []


def _ticking(node: UINode) -> bool:
    short = node.resource_id.rsplit("/", 1)[-1].casefold()
    return node.package == _SYSTEMUI and any(t in short for t in _TICKING)


def _in_drawing_order(tree: UITree) -> Iterator[UINode]:
    for w in HitIndex.of(tree).windows:
        yield from tree.nodes[w.root:w.end]


def ui_signature(tree: UITree) -> tuple[tuple[Any, ...], ...]:
    """What the dump says is on screen, minus the status bar's clock and battery; windows in
    drawing order, so the same screen dumped with its windows listed differently is equal.
    Built once per tree (kept on it): a step's screen is signed for its judgement, its loop
    check and its record, and is the next step's screen too."""
    return tree.cached("ui_signature", _signature)


def _signature(tree: UITree) -> tuple[tuple[Any, ...], ...]:
    return tuple(
        (n.depth, n.class_name, n.resource_id, n.package, "" if _ticking(n) else n.text,
         "" if _ticking(n) else n.content_desc, n.checked, n.focused, n.selected, n.enabled,
         tuple(n.bounds.as_list()))
        for n in _in_drawing_order(tree)
    )


def screen_fingerprint(obs: Observation) -> str:
    """A short digest of :func:`ui_signature` (what the dump says is on screen, the ticking clock
    aside): equal for the same screen in the same state, "" when the dump is not known."""
    if not _tree_known(obs):
        return ""
    return obs.tree.cached("screen_fingerprint", _fingerprint)


def _fingerprint(tree: UITree) -> str:
    return hashlib.blake2b(repr(ui_signature(tree)).encode("utf-8"), digest_size=8).hexdigest()


def _tree_known(obs: Observation) -> bool:
    return bool(obs.tree.nodes) and not any("UI hierarchy" in p for p in obs.problems)


# --- text fields --------------------------------------------------------------------------------


def field_text(node: UINode) -> str:
    """What the field holds as the dump shows it (a shown hint counts as empty when the dump
    names the hint)."""
    return "" if node.hint and node.text == node.hint else node.text


def find_field(tree: UITree, target: Target, *, focused: bool = True) -> UINode | None:
    """The node of ``target``'s field in ``tree``: same resource id and class (the nearest to
    its old bounds), else the same bounds and class, else (``focused``) the focused text field."""

    def distance(n: UINode) -> int:
        if not target.bounds:
            return 0
        left, top, right, bottom = target.bounds
        b = n.bounds
        return abs(b.left - left) + abs(b.top - top) + abs(b.right - right) + abs(b.bottom - bottom)

    same_class = [n for n in tree.nodes if not target.class_name or n.class_name == target.class_name]
    if target.resource_id:
        hits = [n for n in same_class if n.resource_id == target.resource_id]
        if hits:
            return min(hits, key=lambda n: (not n.focused, distance(n)))
    if target.bounds:
        hits = [n for n in same_class if tuple(n.bounds.as_list()) == tuple(target.bounds)]
        if hits:
            return hits[-1]
    if focused:
        return next((n for n in tree.nodes if n.focused and is_edit(n)), None)
    return None


def field_label(node: UINode | None) -> str:
    if node is None:
        return "the field"
    kind = "password field" if node.password else "field"
    rid = node.resource_id.rsplit("/", 1)[-1]
    return f"{kind} (id {rid})" if rid else f"the {kind}"


def _norm(text: str) -> str:
    return " ".join(text.split())


def _alnum(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def _dots(text: str) -> bool:
    return bool(text) and set(text) <= PASSWORD_DOTS


def landing_problem(before: str, typed: str, node: UINode | None, *, cleared: bool, secret: bool = False) -> str | None:
    """None when the field shows what typing ``typed`` meant, else what it shows instead.

    Meant: the typed text (after a clear, into an empty field or one showing its hint, or one
    that replaces its text on focus) or the old text followed by it. Whitespace runs count as
    one space and a field that formats its text (phone numbers) may add punctuation. A password
    field shows dots: only the length is compared, and its text is never quoted — nor is the
    text of any field a ``secret`` (password text) was typed into.
    """
    if node is None:
        return "the field is no longer on the screen; the text could not be checked"
    after = field_text(node)
    if secret and not node.password:
        if _norm(after) in ({_norm(typed)} if cleared else {_norm(typed), _norm(before + typed)}):
            return None
        return "text did not land in the password field"
    if node.password:
        held = len(after) if _dots(after) else 0  # not dots: the field shows its hint
        wanted = {len(typed)} | (set() if cleared or not _dots(before) else {len(before) + len(typed)})
        if held in wanted:
            return None
        return f"text did not land: the password field holds {held} characters, {len(typed)} were typed"
    if not typed:  # a clear with nothing to type
        if after == "" or after != before:
            return None
        return f"the field was not cleared: it shows {quote_untrusted(after, QUOTE_CHARS)}"
    wanted_texts = {_norm(typed)} if cleared else {_norm(typed), _norm(before + typed)}
    if _norm(after) in wanted_texts or (_alnum(typed) and _alnum(after) in {_alnum(w) for w in wanted_texts}):
        return None
    if not after:
        return "text did not land: the field is empty"
    return f"text did not land: the field shows {quote_untrusted(after, QUOTE_CHARS)}"


# --- the outcome --------------------------------------------------------------------------------


def _checkable_label(node: UINode) -> str:
    kind = short_class(node.class_name) or "element"
    text = node.text if node.text.strip().upper() not in ("ON", "OFF", "") else ""
    label = node.content_desc or text
    rid = node.resource_id.rsplit("/", 1)[-1]
    bits = [kind]
    if label:
        bits.append(quote_untrusted(label, QUOTE_CHARS))
    if rid:
        bits.append(f"(id {rid})")
    return " ".join(bits)


def _state_word(node: UINode) -> str:
    toggle = any(k in short_class(node.class_name) for k in ("Switch", "Toggle"))
    if toggle:
        return "ON" if node.checked else "OFF"
    return "checked" if node.checked else "unchecked"


def _state_changes(pre: UITree, post: UITree, target: Target) -> tuple[list[dict[str, Any]], UINode | None]:
    """Checkable nodes whose state flipped (the target's first); and the target's checkable
    node in ``post`` when the action was on one."""
    def key(n: UINode) -> tuple[str, str, str, str, tuple[int, ...]]:
        # the label too: a list row at the same place may now be another item's
        return (n.package, n.resource_id, n.class_name, _checkable_label(n), tuple(n.bounds.as_list()))

    after = {key(n): n for n in post.nodes if n.checkable}
    changes = []
    for n in pre.nodes:
        m = after.get(key(n)) if n.checkable else None
        if m is not None and m.checked != n.checked:
            changes.append({"element": _checkable_label(m), "before": _state_word(n), "now": _state_word(m),
                            "resource_id": m.resource_id, "bounds": m.bounds.as_list()})
    own = None
    if target.label_source != "none":
        node = find_field(post, target, focused=False)
        if node is not None and node.checkable:
            own = node

    def is_target(c: dict[str, Any]) -> bool:
        return own is not None and c["bounds"] == own.bounds.as_list()

    changes.sort(key=lambda c: not is_target(c))
    return changes[:MAX_STATES], own


@dataclass
class ActionOutcome:
    status: ResultStatus
    #: Why the status is not ``ok`` ("text did not land: …"); "" when it is.
    detail: str = ""
    #: What was seen, one phrase each ("Switch (id wifi_switch) now ON", "new window …").
    notes: list[str] = field(default_factory=list)
    screen_changed: bool | None = None
    ui_changed: bool | None = None
    dhash_distance: int | None = None
    states: list[dict[str, Any]] = field(default_factory=list)
    text_field: dict[str, Any] | None = None  # a typed-into field: what it shows, whether the text landed
    windows_opened: list[str] = field(default_factory=list)
    windows_closed: list[str] = field(default_factory=list)
    app_before: str | None = None
    app_after: str | None = None
    #: Screen text that appeared / disappeared (bounded; device text, quoted when rendered).
    text: TextChanges = field(default_factory=TextChanges)
    #: The Pro failure analyzer's recovery actions run inside the step, one line each
    #: (``press back -> ok``); this outcome is then measured after them, against the step's pre.
    recovery: list[str] = field(default_factory=list)
    #: What the step had come to before the recovery actions (status, detail, summary); None
    #: when none ran.
    before_recovery: dict[str, Any] | None = None
    #: What the device logged during the step (crashes and ANRs of any app, other error lines
    #: counted); None when the device cannot say.
    logs: LogEvents | None = None
    #: The crash or ANR of the app that was in front, which decided the status.
    fault: AppFault | None = None

    def after_recovery(self, before: ActionOutcome, recovery: list[str]) -> ActionOutcome:
        """This outcome (measured after ``recovery`` ran) with ``before``, the one measured
        before them, kept."""
        self.recovery = list(recovery)
        self.before_recovery = {"status": before.status, "detail": before.detail, "summary": before.summary}
        return self

    @property
    def text_notes(self) -> list[str]:
        """``text appeared "Wrong password"``, ``text gone "Loading…"``: what the reply says in full
        (``reply_fields``), as short notes, or [] when it is not short (a scroll, a new screen)."""
        t = self.text
        texts = [*t.appeared, *t.disappeared]
        if (not texts or len(texts) > SHORT_TEXTS or t.appeared_more or t.disappeared_more
                or any(len(x) > SHORT_TEXT_CHARS for x in texts)):
            return []
        notes = [f"text appeared {phrase(t.appeared)}"] if t.appeared else []
        return notes + ([f"text gone {phrase(t.disappeared)}"] if t.disappeared else [])

    @property
    def summary(self) -> str:
        """What was seen, as stored and as ledger lines show it (short text changes included)."""
        return "; ".join([*self.notes, *self.text_notes])

    def reply_fields(self) -> dict[str, Any]:
        """The model's function reply: ``observed`` (the stored summary, the same words the ledger
        shows) and, when they are too long for it, the texts that appeared and disappeared
        (bounded, quoted); after recovery actions, what they were and what the step had come to
        before them."""
        out: dict[str, Any] = {}
        if self.summary:
            out["observed"] = self.summary
        if not self.text_notes:
            if self.text.appeared:
                out["text_appeared"] = phrase(self.text.appeared, self.text.appeared_more)
            if self.text.disappeared:
                out["text_disappeared"] = phrase(self.text.disappeared, self.text.disappeared_more)
        if self.before_recovery is not None:
            out["measured"] = "after the recovery actions (status, screen_changed and observed compare the screen before your action with the screen after the recovery)"
            out["recovery_actions"] = list(self.recovery)
            out["before_recovery"] = outcome_phrase(self.before_recovery)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status, "detail": self.detail, "summary": self.summary,
            "screen_changed": self.screen_changed, "ui_changed": self.ui_changed,
            "dhash_distance": self.dhash_distance, "states": self.states, "field": self.text_field,
            "windows_opened": self.windows_opened, "windows_closed": self.windows_closed,
            "app_before": self.app_before, "app_after": self.app_after, "text": self.text.to_dict(),
            "recovery": self.recovery, "before_recovery": self.before_recovery,
            "logs": self.logs.to_dict() if self.logs else None,
            "fault": self.fault.to_dict() if self.fault is not None else None,
        }


def action_reply(outcome: ActionOutcome, intent: str | None = None) -> dict[str, Any]:
    """What an action came to, as its decider is answered (the operator's function reply, an MCP
    client's tool answer): its status, whether the screen changed, what was intended (beside what
    was seen, so the two can be compared), what was seen and, when it is not ``ok``, why."""
    reply: dict[str, Any] = {"status": outcome.status}
    if outcome.screen_changed is not None and outcome.status != "finished":
        reply["screen_changed"] = outcome.screen_changed
    if intent:
        reply["intended"] = intent
    reply.update(outcome.reply_fields())
    if outcome.detail:
        reply["detail"] = outcome.detail
    return reply


def assess(action: Any, result: Any, pre: Observation, post: Observation | None) -> ActionOutcome:
    """The outcome of ``action`` (a PlannedAction) that ``execute`` answered with ``result``."""
    if result.status == "finished":
        return ActionOutcome("finished", result.detail)
    if post is None:
        detail = result.detail if result.status == "error" else "no observation after the action; its effect is unknown"
        return ActionOutcome("error", detail)
    out = ActionOutcome("ok", app_before=pre.foreground, app_after=post.foreground)
    out.dhash_distance = hamming(pre.dhash, post.dhash)
    known = _tree_known(pre) and _tree_known(post)
    if known:
        out.ui_changed = ui_signature(pre.tree) != ui_signature(post.tree)
        out.screen_changed = out.ui_changed or out.dhash_distance >= VISUAL_CHANGE_MIN
        opened, closed = _window_diff(pre.tree, post.tree)
        if pre.foreground != post.foreground:  # "app now X" says it: not its windows one by one
            opened = [w for w in opened if w.package != post.foreground]
            closed = [w for w in closed if w.package != pre.foreground]
        out.windows_opened = [window_phrase(w) for w in opened]
        out.windows_closed = [window_phrase(w) for w in closed]
        out.states, own = _state_changes(pre.tree, post.tree, action.target)
        if out.ui_changed:
            app_changed = bool(pre.foreground and post.foreground and pre.foreground != post.foreground)
            out.text = _without_secret(text_changes(pre.tree, post.tree, app_changed=app_changed),
                                       getattr(action, "secret", None))
    else:
        out.screen_changed = out.dhash_distance > 0
        own = None
    notes = out.notes
    if action.type == "type_text":
        notes += _typing_notes(action, result, post, out)
    for change in out.states:
        notes.append(f"{change['element']} now {change['now']}")
    if own is not None and not any(c["bounds"] == own.bounds.as_list() for c in out.states):
        notes.append(f"{_checkable_label(own)} still {_state_word(own)}")
    notes += [f"new window {w}" for w in out.windows_opened]
    notes += [f"window {w} closed" for w in out.windows_closed]
    if out.app_after and out.app_before != out.app_after:
        notes.append(f"app now {out.app_after}")
    if action.type == "press_key" and action.args.get("key") == "back" and pre.keyboard_shown and \
            post.keyboard_shown is False:
        notes.append(_KEYBOARD_HIDDEN if _only_keyboard(out) else "back hid the keyboard")
    swipes = getattr(result, "swipes", None)
    if action.type == "scroll" and swipes is not None:  # to_end: how far it went (act._scroll_to_end)
        at_end = getattr(result, "at_end", None)
        moved = swipes - 1 if at_end else swipes
        end = ("the end was not seen" if at_end is None
               else "reached the end" if at_end else "the content was still moving")
        notes.append(f"scrolled {moved} time{'s' if moved != 1 else ''}, {end}")
    if result.status == "error":
        out.status, out.detail = "error", result.detail
    elif action.type == "type_text":
        pass  # decided by _typing_notes
    elif action.type == "launch_app":
        package = action.args.get("package")
        if post.foreground and package and post.foreground != package:
            out.status = "failed"
            out.detail = f"{package} is not in the foreground ({post.foreground} is)"
        elif out.app_before == out.app_after == package and not out.screen_changed:
            notes.append(f"{package} was already in the foreground")
    elif action.type == "stop_app" and result.status == "ok":  # seen gone: pidof found no process
        package = action.args.get("package")
        if post.foreground and package and post.foreground == package:
            out.status, out.detail = "failed", f"{package} is still in the foreground"
        else:
            notes.append(f"{package} stopped")
    elif result.status == "failed":
        out.status, out.detail = "failed", result.detail
    elif not out.screen_changed:
        out.status, out.detail = "no_change", "no visible change"
    _app_fault(out, action, pre, post)
    # said once: a note the reason already gives (the window a type_text stopped for)
    out.notes = [n for n in notes if n not in out.detail and n.removeprefix("new window ") not in out.detail]
    return out


#: A back press that closed the keyboard and did nothing else (Android's first back does only that).
_KEYBOARD_HIDDEN = "back hid the keyboard; nothing else changed"


def _only_keyboard(out: ActionOutcome) -> bool:
    """Nothing but the keyboard changed: no window, app, switch or text of the screen."""
    return not (out.windows_opened or out.windows_closed or out.states or out.text or out.text.replaced
                or out.app_before != out.app_after)


def fault_detail(fault: AppFault) -> str:
    """``com.foo crashed: "java.lang.IllegalStateException: boom"`` (the device's words quoted)."""
    what = "crashed" if fault.kind == "crash" else "is not responding"
    return f"{fault.package} {what}: {quote_untrusted(fault.detail, FAULT_QUOTE_CHARS)}"


def _app_fault(out: ActionOutcome, action: Any, pre: Observation, post: Observation) -> None:
    """A crash or ANR of the app that was in front when the action ran (or that a launch
    started) is the step's outcome."""
    out.logs = post.logs
    if post.logs is None:
        return
    fault = post.logs.fault_of(pre.foreground)
    launched = action.args.get("package") if action.type == "launch_app" else None
    if fault is None and isinstance(launched, str):  # the app it started crashed at once
        fault = post.logs.fault_of(launched)
    if fault is None:
        return
    out.fault = fault
    out.status = "app_crashed" if fault.kind == "crash" else "app_not_responding"
    out.detail = fault_detail(fault)


def _without_secret(changes: TextChanges, secret: str | None) -> TextChanges:
    """``changes`` with any text that shows a typed password redacted (an app that echoes it)."""
    if not secret:
        return changes

    def clean(texts: list[str]) -> list[str]:
        return [REDACTED if secret in t else t for t in texts]

    return replace(changes, appeared=clean(changes.appeared), disappeared=clean(changes.disappeared))


def _typing_notes(action: Any, result: Any, post: Observation, out: ActionOutcome) -> list[str]:
    """Decide a type_text step (sets ``out.status``/``detail``/``text_field``); its notes."""
    trace = getattr(result, "typing", None)
    if result.status != "ok" or trace is None:
        out.status, out.detail = result.status, result.detail
        return []
    if trace.verified:  # submitted: the field was checked before Enter was pressed
        problem, node = trace.problem, trace.node
    else:
        node = find_field(post.tree, trace.target) if _tree_known(post) else None
        problem = landing_problem(trace.before, trace.text, node, cleared=trace.cleared, secret=trace.secret)
    shows = field_text(node) if node is not None else None
    password = trace.secret or bool(node is not None and node.password)
    out.text_field = {
        "label": field_label(node), "password": password,
        "shows": None if node is None or password else shows,
        "length": len(shows) if shows is not None else None,
        "cleared": trace.cleared, "submitted": trace.submitted, "landed": problem is None,
    }
    if problem is not None:
        out.status, out.detail = "failed", problem
        return []
    if node is None:
        return []
    if password:
        return [f"{field_label(node)} holds {len(shows or '')} characters"]
    note = f"the field shows {quote_untrusted(shows or '', QUOTE_CHARS)}"
    return [note + ("; submitted" if trace.submitted else "")]
