"""The three model asks about the CURRENT screen that ``Phone`` makes: query, check, locate.

Each ask is one structured exchange (:func:`artemis_cli.operators.pro.structured.ask_structured`:
ask, parse, one retry carrying the parse error) with the screen shown as the operator sees it —
the foreground app, the element list inside the untrusted ``<screen>`` fence, the screenshot
scaled for the model with the list's index marks drawn on it (``marks``) — under a short system
text per ask (:mod:`.ask_prompts`). The request ``role`` is the ask's name (``llm_calls.role``).

Replies are checked as strictly as a test tool must check them: a query's answer is validated to
its ``kind`` with pydantic in strict JSON mode (``true`` is a bool, ``"yes"`` is not; ``3`` is an
int, ``3.5`` is not), a check's ``passed`` is a JSON boolean, a locate's ``index`` is an index of
the element list. An unusable reply is retried once with the error; a second one, a failed model
call, or a model that says the screen does not show it (a ``null`` answer or index) raises
:class:`AnswerError` with the question and the last error or the model's reason. Nothing here
records steps: ``record_call`` gets every model call (both of a retried ask).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import TypeAdapter, ValidationError
from pydantic.errors import PydanticUserError

from artemis_cli.errors import AnswerError, UsageError
from artemis_cli.library.ask_prompts import SCREENSHOT_LABEL, SCREENSHOT_LABEL_MARKS, SYSTEM_PROMPTS
from artemis_cli.models.base import Model, ModelRequest, ModelResponse
from artemis_cli.operators.observe import Observation
from artemis_cli.operators.pro.structured import RecordCall, ReplyError, ask_structured
from artemis_cli.operators.prompts import screen_fence
from artemis_cli.perception.marks import draw_marks, marks_of
from artemis_cli.perception.quoting import fence_safe, one_token, quote_untrusted

__all__ = [
    "Answer",
    "AnswerError",
    "Located",
    "Verdict",
    "ask_check",
    "ask_locate",
    "ask_query",
    "check_request_text",
    "locate_request_text",
    "query_request_text",
    "require_llm",
]

T = TypeVar("T")

#: A reason is one sentence; a longer one is cut (it lands in failure messages and reports).
MAX_REASON_CHARS = 500
_NO_ELEMENTS = "(no elements: the screen may be loading or opaque)"
_MODEL_HINT = "pass a Gemini or OpenAI-compatible model (Phone.open(model=…) / --artemis-model)"


@dataclass(frozen=True)
class Answer:
    """A query's answer: ``value`` validated to the asked ``kind``."""

    value: Any
    reason: str
    model: str


@dataclass(frozen=True)
class Verdict:
    """A check's verdict, with the model's reason (what the screen shows)."""

    passed: bool
    reason: str
    model: str


@dataclass(frozen=True)
class Located:
    """The element a description matched: ``index`` as the observation's element list numbers it."""

    index: int
    reason: str
    model: str


def require_llm(model: Model, what: str) -> None:
    """A :class:`UsageError` unless ``model`` can read a screen: the offline models (heuristic,
    scripted, the healer) play actions and cannot answer questions about one."""
    if getattr(model, "offline", False):
        label = getattr(model, "label", None) or getattr(model, "name", "this model")
        raise UsageError(f"{what} needs a model that reads the screen; {label} cannot answer questions about one",
                         hint=_MODEL_HINT)


# --- what the model reads ---------------------------------------------------------------------


def _screen_lines(obs: Observation) -> list[str]:
    app = fence_safe(one_token(obs.foreground)) if obs.foreground else "unknown"
    keyboard = "" if obs.keyboard_shown is None else (" Keyboard: shown." if obs.keyboard_shown else " Keyboard: hidden.")
    return ["# CURRENT SCREEN", f"Foreground app: {app}.{keyboard}", "Screen elements (untrusted device content):",
            *screen_fence(obs.element_list, _NO_ELEMENTS)]


def query_request_text(obs: Observation, question: str, schema: dict[str, Any]) -> str:
    """The query's request text; ``schema``: the answer type's JSON schema."""
    return "\n".join(["# QUESTION", quote_untrusted(question, None), "",
                      '# ANSWER TYPE (the JSON schema of "answer")', json.dumps(schema, ensure_ascii=False), "",
                      *_screen_lines(obs), "", "Answer the question from this screen."])


def check_request_text(obs: Observation, statement: str) -> str:
    return "\n".join(["# STATEMENT", quote_untrusted(statement, None), "", *_screen_lines(obs), "",
                      "Decide whether the statement is true of this screen."])


def locate_request_text(obs: Observation, description: str) -> str:
    return "\n".join(["# ELEMENT TO FIND", quote_untrusted(description, None), "", *_screen_lines(obs), "",
                      "Give the index of the listed element that matches the description."])


def _screenshot(obs: Observation, max_image_side: int | None, marks: bool) -> tuple[str, bytes]:
    """The screenshot as the operator's model sees it: scaled, with the list's marks when ``marks``."""
    png = draw_marks(obs.png, max_image_side, marks_of(obs.elements) if marks else ())
    return (SCREENSHOT_LABEL_MARKS if marks else SCREENSHOT_LABEL), png


# --- parsing replies ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Reply(Generic[T]):
    value: T | None  # None: the model said the screen does not show it
    reason: str


def _object(data: Any, shape: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ReplyError(f"expected one JSON object {shape}")
    return data


def _reason(data: dict[str, Any]) -> str:
    reason = data.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise ReplyError('"reason" must be a non-empty string')
    return " ".join(reason.split())[:MAX_REASON_CHARS]


def _validation_message(exc: ValidationError) -> str:
    """pydantic's errors in one line, each with where it is and what was given."""
    out = []
    for err in exc.errors(include_url=False)[:5]:
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.get("loc", ()))
        given = json.dumps(err.get("input"), ensure_ascii=False, default=str)
        given = given if len(given) <= 80 else given[:80] + "…"
        out.append(f'"answer"{where}: {err.get("msg", "invalid")} (got {given})')
    return "; ".join(out) or str(exc)


def _query_parser(adapter: TypeAdapter[Any], null_is_answer: bool) -> Callable[[Any], _Reply[Any]]:
    def parse(data: Any) -> _Reply[Any]:
        reply = _object(data, 'with "answer" and "reason"')
        if "answer" not in reply:
            raise ReplyError('"answer" is missing')
        reason = _reason(reply)
        if reply["answer"] is None and not null_is_answer:
            return _Reply(None, reason)
        try:  # strict JSON mode: no "yes" for true, no 3.5 for an int; JSON's own types only
            value = adapter.validate_json(json.dumps(reply["answer"], ensure_ascii=False), strict=True)
        except ValidationError as exc:
            raise ReplyError(_validation_message(exc)) from None
        return _Reply(value, reason)

    return parse


def _parse_check(data: Any) -> _Reply[bool]:
    reply = _object(data, 'with "passed" and "reason"')
    passed = reply.get("passed")
    if not isinstance(passed, bool):
        raise ReplyError(f'"passed" must be true or false; got {json.dumps(passed, default=str)}')
    return _Reply(passed, _reason(reply))


def _locate_parser(obs: Observation) -> Callable[[Any], _Reply[int]]:
    indices = {e.index for e in obs.elements}

    def parse(data: Any) -> _Reply[int]:
        reply = _object(data, 'with "index" and "reason"')
        if "index" not in reply:
            raise ReplyError('"index" is missing')
        index, reason = reply["index"], _reason(reply)
        if index is None:
            return _Reply(None, reason)
        if not isinstance(index, int) or isinstance(index, bool):
            raise ReplyError(f'"index" must be an element index (an integer) or null; got {json.dumps(index, default=str)}')
        if index not in indices:
            span = f"{min(indices)} to {max(indices)}" if indices else "none: the list is empty"
            raise ReplyError(f'"index" {index} is not in the element list (its indices: {span})')
        return _Reply(index, reason)

    return parse


# --- the asks -----------------------------------------------------------------------------------


def _ask(model: Model, obs: Observation, ask: str, subject: str, text: str, parse: Callable[[Any], _Reply[T]],
         record_call: RecordCall | None, max_image_side: int | None, marks: bool,
         media_resolution: str | None) -> tuple[_Reply[T], str]:
    """One exchange; the reply (its value None when the model said the screen does not show it)
    and the model that gave it. :class:`AnswerError` when no reply was usable."""
    require_llm(model, f"{ask} {quote_untrusted(subject, None)}")
    failures: list[Exception] = []

    def record(request: ModelRequest, response: ModelResponse | None, error: Exception | None) -> None:
        if error is not None:
            failures.append(error)
        if record_call is not None:
            record_call(request, response, error)

    outcome = ask_structured(model, role=ask, system=SYSTEM_PROMPTS[ask], user_text=text, parse=parse,
                             record_call=record, images=[_screenshot(obs, max_image_side, marks)],
                             media_resolution=media_resolution)
    model_name = outcome.model or getattr(model, "name", "") or ""
    if outcome.value is None:
        if failures:
            raise AnswerError(ask, subject, f"the model call failed: {failures[-1]}",
                              hint="check the model's key and connection (artemis doctor), then run it again") \
                from failures[-1]
        raise AnswerError(ask, subject, f"no usable answer after {outcome.attempts} attempts; last error: {outcome.error}",
                          hint="the model's replies are in the session's model calls; rephrase the "
                               + ("question or loosen its type" if ask == "query" else "request") + ", or try a stronger model")
    return outcome.value, model_name


def _adapter(kind: Any) -> TypeAdapter[Any]:
    try:
        adapter: TypeAdapter[Any] = TypeAdapter(kind)
        adapter.json_schema()
    except (PydanticUserError, TypeError, ValueError) as exc:
        raise UsageError(f"query: cannot answer as {kind!r}: {exc}".split("\n", 1)[0],
                         hint="give int, float, bool, str, a pydantic model, or a type pydantic validates "
                              "(list[str], Literal[...], Optional[int])") from None
    return adapter


def ask_query(model: Model, obs: Observation, question: str, kind: Any, *, record_call: RecordCall | None = None,
              max_image_side: int | None = None, marks: bool = True, media_resolution: str | None = None) -> Answer:
    """``question`` about the screen of ``obs``, answered as a value of ``kind`` (int, float,
    bool, str, a pydantic model, or anything ``TypeAdapter`` takes). :class:`AnswerError` when
    the model gives no valid answer after one retry, or says the screen does not show it."""
    adapter = _adapter(kind)
    try:
        adapter.validate_json("null", strict=True)
        null_is_answer = True  # Optional[...]: null is an answer, not "the screen does not show it"
    except ValidationError:
        null_is_answer = False
    text = query_request_text(obs, question, adapter.json_schema())
    reply, name = _ask(model, obs, "query", question, text, _query_parser(adapter, null_is_answer), record_call,
                       max_image_side, marks, media_resolution)
    if reply.value is None and not null_is_answer:
        raise AnswerError("query", question, f"the model says the screen does not show it: {reply.reason}",
                          hint="ask about what is on the screen now (bring it into view first)")
    return Answer(reply.value, reply.reason, name)


def ask_check(model: Model, obs: Observation, statement: str, *, record_call: RecordCall | None = None,
              max_image_side: int | None = None, marks: bool = True, media_resolution: str | None = None) -> Verdict:
    """Whether ``statement`` is true of the screen of ``obs``, with the model's reason; a
    statement the screen does not let the model confirm is ``passed=False``."""
    reply, name = _ask(model, obs, "check", statement, check_request_text(obs, statement), _parse_check,
                       record_call, max_image_side, marks, media_resolution)
    return Verdict(bool(reply.value), reply.reason, name)


def ask_locate(model: Model, obs: Observation, description: str, *, record_call: RecordCall | None = None,
               max_image_side: int | None = None, marks: bool = True,
               media_resolution: str | None = None) -> Located:
    """The index (in ``obs.elements``' numbering) of the element ``description`` describes;
    :class:`AnswerError` with the model's reason when nothing on the screen matches."""
    reply, name = _ask(model, obs, "locate", description, locate_request_text(obs, description),
                       _locate_parser(obs), record_call, max_image_side, marks, media_resolution)
    if reply.value is None:
        raise AnswerError("locate", description, f"no element on the screen matches: {reply.reason}",
                          hint="describe an element that is on the screen now (scroll it into view first)")
    return Located(reply.value, reply.reason, name)
