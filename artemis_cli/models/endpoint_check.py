"""Check the OpenAI-compatible endpoints a run would use, each problem with its fix: the rows of
``artemis doctor --model openai:NAME [--base-url URL] [--profile P]``, and (:func:`first_problem`)
the pre-flight check ``artemis run`` and ``artemis resume`` make before they touch a session.

:func:`plan` reads the options (and the profile) and says which endpoints to check; nothing
touches the network there, and a bad option raises ``UsageError`` before doctor prints a row.
:func:`check` then asks each endpoint, with the official ``openai`` SDK (no retries, short
timeouts):

1. ``GET /models`` (reachable? connection refused, timeout, 404 and 401 each name their fix);
2. whether each model is in that list (if not: what it serves, closest names first);
3. one tiny round trip shaped like a run's request (``render_body``: one ``report_ok`` tool,
   natively or in the role's ``tool_calls: text`` mode): does a tool call come back?
4. whether the answer reports ``usage.prompt_tokens_details.cached_tokens`` (a warning when not:
   the run's cache share would read 0%).

The rows are ``(check, ok, detail, hint, level)`` for doctor's ``add``; they name environment
variables, never a key's value (server text is scrubbed of the key too). Doctor's printer
escapes every detail and hint for Rich.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import time
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from artemis_cli.errors import UsageError
from artemis_cli.plural import counted

#: Seconds ``GET /models`` may take (a server that does not answer that quickly is not up).
LIST_TIMEOUT_S = 10.0
#: Seconds the round trip may take: Ollama loads a model on its first request.
CALL_TIMEOUT_S = 60.0
#: Served model names shown when the model asked for is not among them.
MAX_SERVED_SHOWN = 10

PING_TOOL = "report_ok"
PING_PROMPT = f"Call the {PING_TOOL} tool."
PING_SYSTEM = "You are checking that tool calls work. Do what the user asks."

TOOLS_HINT = ("this model/server does not return tool calls: set `tool_calls: text` for the role in the profile "
              "(vLLM: start with --enable-auto-tool-choice --tool-call-parser <parser>)")
CACHE_HINT = ("cache share will read 0%; vLLM: --enable-prefix-caching --enable-prompt-tokens-details "
              "(it reports cached tokens only with the latter); llama.cpp: older llama-server builds report "
              "no cached tokens")
NO_USAGE_HINT = "token counts and the cache share will read 0 for this server (it sends no `usage`)"

ENDPOINT, MODEL, TOOLS, CACHE = "OpenAI endpoint", "OpenAI model", "OpenAI tool calls", "OpenAI cached tokens"


class Row(NamedTuple):
    """One doctor row: ``add(*row)``."""

    check: str
    ok: bool
    detail: str
    hint: str = ""
    level: str = ""

    @classmethod
    def good(cls, check: str, detail: str) -> Row:
        return cls(check, True, detail, "", "ok")

    @classmethod
    def warn(cls, check: str, detail: str, hint: str) -> Row:
        return cls(check, True, detail, hint, "warning")

    @classmethod
    def bad(cls, check: str, detail: str, hint: str) -> Row:
        return cls(check, False, detail, hint, "error")


@dataclass
class Use:
    """A model on an endpoint and who uses it; ``mode`` native|text, None for a fallback only
    (checked against the model list, not called)."""

    model: str
    mode: str | None
    users: list[str] = field(default_factory=list)


@dataclass
class Endpoint:
    base_url: str | None  # None: the SDK's default (api.openai.com, or $OPENAI_BASE_URL)
    key_env: str
    key_env_named: bool  # a role names api_key_env: unset is an error, never the placeholder
    uses: list[Use] = field(default_factory=list)
    users: list[str] = field(default_factory=list)

    def use(self, model: str, mode: str | None, user: str) -> None:
        if mode is not None and user not in self.users:  # fallbacks share their role's endpoint
            self.users.append(user)
        for u in self.uses:
            if u.model == model and u.mode == mode:
                if user not in u.users:
                    u.users.append(user)
                return
        self.uses.append(Use(model, mode, [user]))


@dataclass
class Plan:
    endpoints: list[Endpoint]
    #: Rows known without the network (a profile with no OpenAI-compatible role).
    notes: list[Row]
    #: Whether a run so configured needs a Gemini key (None: doctor was not told).
    gemini_needed: bool | None
    #: Why no Gemini key is needed (for the API key row).
    gemini_reason: str = ""
    #: The API key row's fix when the profile's own operator needs Gemini roles beside it.
    gemini_hint: str = ""


def plan(model: str | None, base_url: str | None, profile_name: str | None) -> Plan | None:
    """What to check for ``--model`` / ``--base-url`` / ``--profile``; None when none is given
    (doctor then checks exactly what it always did, without the network)."""
    if model is None and base_url is None and profile_name is None:
        return None
    from artemis_cli.models.openai_provider import DEFAULT_KEY_ENV, check_base_url
    from artemis_cli.models.registry import OPENAI_PREFIX, openai_endpoint, roles_in_use

    name: str | None = None
    if model is not None:
        if not model.startswith(OPENAI_PREFIX):
            raise UsageError(f"doctor --model checks an OpenAI-compatible or a Gemini model; got {model!r}",
                             hint="use --model openai:NAME or a Gemini model name (offline models need no check)")
        name = model[len(OPENAI_PREFIX):].strip()
        if not name:
            raise UsageError("--model openai: needs the name the server serves", hint="e.g. --model openai:qwen2.5-vl-7b")
    url = check_base_url(base_url) if base_url is not None else None
    profile = None
    if profile_name is not None:
        from artemis_cli.config.profile import load_profile

        profile = load_profile(profile_name)
    endpoints: dict[tuple[str | None, str], Endpoint] = {}

    def endpoint(where: str | None, key_env: str | None) -> Endpoint:
        where = check_base_url(where) if where else None
        key = (where, key_env or DEFAULT_KEY_ENV)
        if key not in endpoints:
            endpoints[key] = Endpoint(where, key_env or DEFAULT_KEY_ENV, bool(key_env))
        elif key_env:
            endpoints[key].key_env_named = True
        return endpoints[key]

    operator: Any = getattr(getattr(profile, "models", None), "operator", None)
    own = operator is not None and operator.provider == "openai"
    if name is not None:  # as `artemis run --model openai:NAME` resolves it
        ep = endpoint(*openai_endpoint(operator, url))
        ep.use(name, operator.tool_calls if own else "native", "--model")
    elif url is not None:  # --base-url alone: is it up, and what does it serve?
        endpoint(url, None).users.append("--base-url")
    notes: list[Row] = []
    gemini_roles: list[str] = []
    if profile is not None:
        roles = ["operator", *roles_in_use(profile)]
        for role in roles:
            settings = getattr(profile.models, role)
            if settings.provider != "openai":
                gemini_roles.append(role)
                continue
            ep = endpoint(*openai_endpoint(settings))
            ep.use(settings.model, settings.tool_calls, role)
            for fallback in settings.fallback:
                ep.use(fallback, None, f"{role} fallback")
        if not any(r in roles for ep in endpoints.values() for r in ep.users):
            notes.append(Row.good(ENDPOINT, f"profile {profile.name}: no role runs on an OpenAI-compatible endpoint "
                                            f"({', '.join(roles)} run on Gemini)"))
    if name is not None:
        return Plan(list(endpoints.values()), notes, False,
                    "--model openai:NAME runs every role on the OpenAI-compatible endpoint")
    if profile is not None:
        reason = f"every role of profile {profile.name} runs on an OpenAI-compatible endpoint"
        which = f"{', '.join(gemini_roles)} " + ("role runs" if len(gemini_roles) == 1 else "roles run")
        hint = (f"export GEMINI_API_KEY=…: the profile's {which} on Gemini beside its OpenAI-compatible operator "
                "(or set provider: openai for them)") if gemini_roles and own else ""
        return Plan(list(endpoints.values()), notes, bool(gemini_roles), "" if gemini_roles else reason, hint)
    return Plan(list(endpoints.values()), notes, None)


# -- the checks ---------------------------------------------------------------------------------


def check(p: Plan, *, list_timeout_s: float = LIST_TIMEOUT_S, call_timeout_s: float = CALL_TIMEOUT_S) -> list[Row]:
    rows = list(p.notes)
    for ep in p.endpoints:
        rows.extend(_Checker(ep, list_timeout_s, call_timeout_s).run())
    return rows


def first_problem(ep: Endpoint, *, list_timeout_s: float, call_timeout_s: float) -> Row | None:
    """The pre-flight part of doctor's check for one endpoint: does ``GET /models`` answer, and
    does each called model (``mode`` not None) answer one tiny request (a model the list does not
    name must answer it, as llama.cpp's any-name server does; a 404 means it is not served)? The
    first failing row, or None. How the answer is shaped (tool call or text) is doctor's concern,
    not a reason to refuse a run. One attempt each, no retries."""
    return _Checker(ep, list_timeout_s, call_timeout_s).first_problem()


_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_NAME_RE = re.compile(r'"name"\s*:\s*"([A-Za-z0-9_.-]{1,64})"')


class _Checker:
    def __init__(self, ep: Endpoint, list_timeout_s: float, call_timeout_s: float) -> None:
        self.ep = ep
        self.key = os.environ.get(ep.key_env, "").strip()
        self.list_timeout_s = list_timeout_s
        self.call_timeout_s = call_timeout_s
        self.url = ep.base_url or "https://api.openai.com/v1"

    # -- text helpers --

    def _clean(self, text: object, limit: int = 300) -> str:
        """Server text for one row: the key scrubbed, control characters and runs of blanks gone."""
        s = str(text)
        if self.key:
            s = s.replace(self.key, "***")
        s = " ".join(_CONTROL_RE.sub(" ", s).split())
        return s if len(s) <= limit else s[: limit - 1] + "…"

    def _who(self, users: list[str]) -> str:
        return ", ".join(users)

    def _key_note(self) -> str:
        if self.key:
            return f"key from ${self.ep.key_env}"
        return f"no ${self.ep.key_env} (a local server needs none)"

    def _key_hint(self) -> str:
        if self.key:
            return f"the server rejected the key in ${self.ep.key_env}: set a valid one"
        other = " (or name another variable with api_key_env for the role in the profile)" \
            if not self.ep.key_env_named else ""
        return f"the server wants an API key: export {self.ep.key_env}=…{other}"

    # -- the steps --

    def run(self) -> list[Row]:
        ep = self.ep
        who = self._who(ep.users)
        if ep.key_env_named and not self.key:
            return [Row.bad(ENDPOINT, f"{self.url} (for {who}): the profile names api_key_env {ep.key_env}, "
                                      f"but ${ep.key_env} is not set",
                            f"export {ep.key_env}=… (keys never go in profile files)")]
        if ep.base_url is None and not self.key:
            return [Row.bad(ENDPOINT, f"no endpoint for {who}: no --base-url, no $ARTEMIS_OPENAI_BASE_URL and no "
                                      f"{ep.key_env} for api.openai.com",
                            "pass --base-url http://HOST:PORT/v1 (or set $ARTEMIS_OPENAI_BASE_URL) for a local "
                            "server, or export OPENAI_API_KEY")]
        client = self._client()
        try:
            served = [str(m.id) for m in client.models.list()]
        except Exception as exc:
            return [self._endpoint_failure(exc, who)]
        listing = f": {self._names(served, '')}" if not ep.uses and served else ""  # --base-url alone
        rows = [Row.good(ENDPOINT, f"{self.url} (for {who}) answers GET /models ({counted(len(served), 'model')} served"
                                   f"{listing}); {self._key_note()}")]
        caller = client.with_options(timeout=self.call_timeout_s)
        checked: set[str] = set()
        for use in ep.uses:
            rows.extend(self._model_rows(caller, use, served, checked))
        return rows

    def _client(self) -> Any:
        import openai

        from artemis_cli.models.openai_provider import NO_KEY

        client = openai.OpenAI(api_key=self.key or NO_KEY, base_url=self.ep.base_url, timeout=self.list_timeout_s,
                               max_retries=0)
        self.url = str(client.base_url).rstrip("/")
        return client

    def first_problem(self) -> Row | None:
        client = self._client()
        try:
            served = [str(m.id) for m in client.models.list()]
        except Exception as exc:
            return self._endpoint_failure(exc, self._who(self.ep.users))
        caller = client.with_options(timeout=self.call_timeout_s)
        for use in self.ep.uses:
            if use.mode is None:
                continue  # a fallback is called only when the model before it fails
            answer = self._round_trip(caller, use)
            label = f"{use.model} ({self._who(use.users)})"
            if isinstance(answer, Exception):
                if getattr(answer, "status_code", None) == 404 and use.model not in served:
                    return self._not_listed(label, use.model, served, answered=False)
                return self._call_failure(answer, use)
        return None

    def _endpoint_failure(self, exc: BaseException, who: str) -> Row:
        import openai

        at = f"{self.url} (for {who})"
        if isinstance(exc, openai.APITimeoutError):
            return Row.bad(ENDPOINT, f"{at}: no answer to GET /models within {self.list_timeout_s:g} s",
                           "check the URL is the server's OpenAI-compatible endpoint (it usually ends in /v1) and "
                           "the server is up, not still starting")
        if isinstance(exc, openai.APIConnectionError):
            if _refused(exc):
                return Row.bad(ENDPOINT, f"{at}: connection refused",
                               "start the server (README: Local and OpenAI-compatible models), or fix the host and "
                               "port in the URL")
            cause = exc.__cause__ or exc
            return Row.bad(ENDPOINT, f"{at}: cannot connect ({self._clean(f'{type(cause).__name__}: {cause}')})",
                           "check the host and port in the URL, and that the server is running")
        if isinstance(exc, openai.APIStatusError):
            code = int(exc.status_code)
            said = self._clean(getattr(exc, "message", "") or exc)
            if code in (401, 403):
                return Row.bad(ENDPOINT, f"{at}: GET /models answered HTTP {code}: {said}", self._key_hint())
            if code == 404:
                return Row.bad(ENDPOINT, f"{at}: GET /models answered HTTP 404 (no OpenAI-compatible API there)",
                               "check the URL ends in /v1 (e.g. http://127.0.0.1:8000/v1 for vLLM, "
                               "http://127.0.0.1:11434/v1 for Ollama)")
            return Row.bad(ENDPOINT, f"{at}: GET /models answered HTTP {code}: {said}",
                           "see the server's log; check the URL ends in /v1")
        return Row.bad(ENDPOINT, f"{at}: unexpected answer to GET /models ({self._clean(f'{type(exc).__name__}: {exc}')})",
                       "is this an OpenAI-compatible server? check the URL ends in /v1")

    def _names(self, served: list[str], wanted: str) -> str:
        """Up to MAX_SERVED_SHOWN served names, the closest to ``wanted`` first."""
        if not served:
            return "none"
        close = difflib.get_close_matches(wanted, served, n=3, cutoff=0.5) if wanted else []
        ordered = close + [s for s in served if s not in close]
        shown = ", ".join(self._clean(s, 120) for s in ordered[:MAX_SERVED_SHOWN])
        more = len(ordered) - MAX_SERVED_SHOWN
        return shown + (f" … and {more} more" if more > 0 else "")

    def _model_rows(self, client: Any, use: Use, served: list[str], checked: set[str]) -> list[Row]:
        listed = use.model in served
        first = use.model not in checked  # one model row per model, however many roles use it
        checked.add(use.model)
        label = f"{use.model} ({self._who(use.users)})"
        rows: list[Row] = []
        if first and listed:
            rows.append(Row.good(MODEL, f"{label} is served by {self.url}"))
        if use.mode is None:  # a fallback: listed or not, it is not called
            if first and not listed:
                rows.append(self._not_listed(label, use.model, served, answered=False))
            return rows
        answer = self._round_trip(client, use)
        if first and not listed:
            missing = isinstance(answer, Exception) and getattr(answer, "status_code", None) == 404
            rows.append(self._not_listed(label, use.model, served, answered=not isinstance(answer, Exception)))
            if missing:
                return rows
        if isinstance(answer, Exception):
            rows.append(self._call_failure(answer, use))
            return rows
        completion, seconds = answer
        rows.append(self._tool_row(completion, seconds, use))
        rows.append(self._usage_row(completion, use))
        return rows

    def _not_listed(self, label: str, model: str, served: list[str], *, answered: bool) -> Row:
        names = self._names(served, model)
        hint = "pass one of the served names: --model openai:NAME, or the role's model: in the profile"
        if answered:
            return Row.warn(MODEL, f"{label} is not in {self.url}'s model list (it serves: {names}), but it answered "
                                   "a request for it (llama.cpp's llama-server serves its one model under any name)",
                            hint)
        return Row.bad(MODEL, f"{label} is not served by {self.url} (it serves: {names})", hint)

    def _round_trip(self, client: Any, use: Use) -> tuple[Any, float] | Exception:
        from artemis_cli.models.base import Message, ModelRequest, Part, ToolDecl
        from artemis_cli.models.openai_wire import WireOptions, render_body

        request = ModelRequest(system=PING_SYSTEM, messages=[Message("user", [Part(text=PING_PROMPT)])],
                               tools=[ToolDecl(PING_TOOL, "Report that tool calls work. Takes no arguments.",
                                               {"type": "object", "properties": {}})])
        body = render_body(request, use.model, WireOptions(tool_calls=use.mode or "native"))
        started = time.monotonic()
        try:
            completion = client.chat.completions.create(**body)
        except Exception as exc:
            return exc
        return completion, time.monotonic() - started

    def _call_failure(self, exc: Exception, use: Use) -> Row:
        import openai

        at = f"{use.model} @ {self.url}"
        if isinstance(exc, openai.APITimeoutError):
            return Row.bad(TOOLS, f"{at}: no answer to the tool-call request within {self.call_timeout_s:g} s",
                           "the server may still be loading the model (Ollama loads it on first use): run doctor "
                           "again; runs wait $ARTEMIS_OPENAI_TIMEOUT_S (default 120 s) per request")
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc
            return Row.bad(TOOLS, f"{at}: the tool-call request failed ({self._clean(f'{type(cause).__name__}: {cause}')})",
                           "check the server is still running (its log says why it dropped the connection)")
        if isinstance(exc, openai.APIStatusError):
            code = int(exc.status_code)
            said = self._clean(getattr(exc, "message", "") or exc)
            detail = f"{at}: the tool-call request answered HTTP {code}: {said}"
            if code in (401, 403):
                return Row.bad(TOOLS, detail, self._key_hint())
            if code == 400 and "tool" in said.lower():
                return Row.bad(TOOLS, detail, TOOLS_HINT)
            return Row.bad(TOOLS, detail, "see the server's log")
        return Row.bad(TOOLS, f"{at}: unexpected answer to the tool-call request "
                              f"({self._clean(f'{type(exc).__name__}: {exc}')})",
                       "is this an OpenAI-compatible server? check the URL ends in /v1")

    def _tool_row(self, completion: Any, seconds: float, use: Use) -> Row:
        from artemis_cli.models.openai_wire import calls_in_text

        at = f"{use.model} @ {self.url}"
        text_mode = use.mode == "text"
        choices = getattr(completion, "choices", None) or []
        if not choices:
            return Row.bad(TOOLS, f"{at}: the answer has no choices", "see the server's log")
        choice = choices[0]
        message = getattr(choice, "message", None)
        finish = str(getattr(choice, "finish_reason", None) or "stop")
        text = str(getattr(message, "content", None) or "")
        calls = list(getattr(message, "tool_calls", None) or [])
        took = f"{seconds:.1f} s"
        if calls:
            fn = getattr(calls[0], "function", None)
            fname = self._clean(getattr(fn, "name", "") or "?", 60)
            raw = getattr(fn, "arguments", None)
            try:
                args = json.loads(raw) if isinstance(raw, str) and raw.strip() else (raw or {})
            except ValueError:
                args = None
            if not isinstance(args, dict):
                return Row.bad(TOOLS, f"{at}: returned a {fname} tool call whose arguments are not a JSON object "
                                      f"({self._clean(repr(raw), 80)})",
                               "the server's tool-call parser does not fit this model (vLLM: --tool-call-parser for "
                               "the model's family), or set `tool_calls: text` for the role in the profile")
            mode_note = " (the role uses tool_calls: text; native tool calls work too)" if text_mode else ""
            return Row.good(TOOLS, f"{at}: returned a {fname} tool call in {took}{mode_note}")
        # a call written in the text, to report_ok or to whatever tool the model named (a call to
        # another tool still shows the format works, as a native call to another tool does)
        named = set(_NAME_RE.findall(text)) | {PING_TOOL}
        _, written = calls_in_text(text, named)
        said = self._clean(text, 120)
        if text_mode:
            if written:
                wname = self._clean(written[0].name, 60)
                return Row.good(TOOLS, f"{at}: answered with a JSON action ({wname}) in its text in {took} "
                                       "(tool_calls: text)")
            return Row.bad(TOOLS, f"{at}: in tool_calls: text mode it did not answer with a JSON action; it said: "
                                  f"{said!r} (finish reason {finish})",
                           "this model does not follow the JSON-action instructions: try another (or a larger) model")
        if written:
            return Row.warn(TOOLS, f"{at}: wrote the call in its text instead of returning a tool call "
                                   "(Artemis reads such calls, but the server does not parse them)", TOOLS_HINT)
        if finish == "length":
            return Row.bad(TOOLS, f"{at}: the answer was cut off at the token limit before a tool call: {said!r}",
                           "raise the server's output limit or context length; " + TOOLS_HINT)
        if text:
            return Row.bad(TOOLS, f"{at}: answered in text, not with a tool call: {said!r}", TOOLS_HINT)
        return Row.bad(TOOLS, f"{at}: returned an empty message (finish reason {finish})", TOOLS_HINT)

    def _usage_row(self, completion: Any, use: Use) -> Row:
        at = f"{use.model} @ {self.url}"
        usage = getattr(completion, "usage", None)
        if usage is None:
            return Row.warn(CACHE, f"{at}: the answer has no usage (no token counts at all)", NO_USAGE_HINT)
        details = getattr(usage, "prompt_tokens_details", None)
        cached = getattr(details, "cached_tokens", None) if details is not None else None
        if cached is None:
            return Row.warn(CACHE, f"{at}: usage has no prompt_tokens_details.cached_tokens", CACHE_HINT)
        prompt = getattr(usage, "prompt_tokens", None)
        return Row.good(CACHE, f"{at}: reports cached tokens ({cached} of {prompt} prompt tokens on this request)")


def _refused(exc: BaseException) -> bool:
    """Whether a connection error is a refused connection (nothing listens on that port)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ConnectionRefusedError) or "refused" in str(current).lower():
            return True
        current = current.__cause__ or current.__context__
    return False
