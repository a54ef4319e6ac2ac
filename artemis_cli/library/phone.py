"""``Phone``: Artemis as a Python library. Every call is a recorded step (or a run of steps) of one
DataEngine session, with its observed outcome; a step whose effect was not observed raises.

    from artemis_cli import Phone

    with Phone.open("sim") as phone:
        phone.launch("Contacts")
        phone.tap("Create contact")
        phone.type("First name", "Sofia")
        phone.act("save the contact")            # the operator loop, with a model
        assert phone.sees("Sofia")

Steps without a model (``launch``, ``tap``, ``type``, ``press``, ``scroll``) find their target
with the selector rules of a task's ``reference`` steps (``models.offline.scripted.find_element`` on the
element list a model reads) and run through ``library.session.LibrarySession`` — the same
plan → perform → judge → record path as ``artemis mcp``. AI steps (``act``, ``tap(ai=)``) run the
Flash (or Pro) loop in the same session, or, with ``cache=``, replay a baseline's recorded
actions with no model call (``library.cache``). ``query`` and ``check`` ask the model about the
screen now (``library.ask``) and are never cached.
"""

from __future__ import annotations

import logging
import re
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from artemis_cli.device.protocol import Device
from artemis_cli.engine.db import DataEngine
from artemis_cli.errors import DeviceOffline, UsageError
from artemis_cli.library.errors import CheckFailed, StepFailed
from artemis_cli.library.results import ActResult, PhoneStats, Screen, StepResult
from artemis_cli.library.screen import screen_of, selector_of, selector_text
from artemis_cli.library.session import CALL_EVENT, NOT_SENT_EVENT, LibrarySession
from artemis_cli.mcp_server.session import ClientInfo, ToolRefused
from artemis_cli.operators.observe import Observation

log = logging.getLogger("artemis_cli.library")

#: An AI step's step budget when neither ``max_steps`` nor the profile's ``max_steps`` says.
DEFAULT_ACT_STEPS = 20
#: ``wait_for``'s default timeout and how often it looks.
WAIT_TIMEOUT_S, WAIT_EVERY_S = 10.0, 0.5
#: How many labels a "not on the screen" error names.
NAMED_LABELS = 12


class Phone:
    """One phone and one session. Open it with :meth:`open` (a context manager)."""

    def __init__(self, device: Device, engine: DataEngine, profile: Any, *, model: Any = None,
                 base_url: str | None = None, cache: str | None = None, update: bool = False,
                 name: str | None = None, real_time: bool = True, secrets: dict[str, str] | None = None,
                 own_engine: bool = False, fit: bool = True, slot: str | None = None) -> None:
        self.device = device
        self.engine = engine
        self.profile = profile
        self.cache = cache
        self.update = update
        self.name = name
        self._model_spec = model
        self._base_url = base_url
        self._model: Any = None
        self._heal_model: Any = None
        self._secrets = dict(secrets or {})
        self._own_engine = own_engine
        self._fit = fit
        self._real_time = real_time
        self._s = LibrarySession(engine, device, profile, goal=name or "", real_time=real_time,
                                 run_config={"device": slot or device.info().serial, "python": {"cache": cache}})
        self._ai_calls = 0  # AI calls so far (their ordinal matches the baseline's)
        self._baseline: str | None = None
        self._baseline_calls: list[Any] | None = None
        self._rerecorded = False  # an AI call ran with the model or healed: keep this run as the baseline
        self._budget_checked = False
        self._closed = False
        self._final: PhoneStats | None = None  # the stats at close (the engine may be closed)
        self.status: str = "open"

    # -- opening and closing -----------------------------------------------------------------

    @classmethod
    def open(cls, device: str | Device | None = None, *, model: Any = None, profile: str | None = None,
             data_dir: str | Path | None = None, cache: str | None = None, update: bool = False,
             name: str | None = None, real_time: bool = True, base_url: str | None = None,
             secrets: dict[str, str] | None = None, fit: bool = True) -> Phone:
        """A phone to drive: ``device`` is picked by ``artemis run``'s rule (None: $ANDROID_SERIAL,
        the one attached phone, else the simulated phone; "sim", "sim:<world>", a numbered sim
        slot "sim#2", a serial, or a ``Device``). ``model`` (a name as ``--model`` takes it, or a Model) decides AI steps; None
        uses Gemini when an API key is set, and an AI step without either raises a UsageError.
        ``cache`` keeps the first passing run as the baseline that later runs replay; ``update``
        re-records it. ``name`` is the session's goal text. ``secrets`` (name → value) are typed by
        AI steps as ``type_text(secret=NAME)`` and never stored. Below its context floor (a small
        local window) the profile is fitted to it at the first AI step, as ``artemis run`` fits a
        run; ``fit=False`` refuses instead (``--no-fit``)."""
        from artemis_cli.config.profile import load_profile
        from artemis_cli.paths import data_dir as resolve_data_dir

        prof = load_profile(profile or "flash")
        # a numbered sim slot (``sim#2``, as --devices 'sim*N' names them): its own simulated phone,
        # recorded under the slot's name
        slot = device if isinstance(device, str) and re.fullmatch(r"sim#\d+", device.strip()) else None
        if isinstance(device, str) or device is None:
            from artemis_cli.device.select import resolve_device

            dev = resolve_device("sim" if slot else device, notice=log.warning)
        else:
            dev = device
        engine = DataEngine.open(resolve_data_dir(data_dir))
        try:
            return cls(dev, engine, prof, model=model, base_url=base_url, cache=cache, update=update, name=name,
                       real_time=real_time, secrets=secrets, own_engine=True, fit=fit, slot=slot)
        except BaseException:
            engine.close()
            raise

    def __enter__(self) -> Phone:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is None:
            self.close("succeeded")
        elif issubclass(exc_type, KeyboardInterrupt):
            self.close("interrupted", "stopped by an interrupt")
        else:
            self.close("failed", f"{exc_type.__name__}: {exc}")

    def close(self, status: str = "succeeded", message: str = "") -> None:
        """End the session (``succeeded``, ``failed`` or ``interrupted``) and release the phone.
        A session that succeeded and whose AI steps ran with a model (or healed) becomes the
        cache key's baseline. Calling it twice does nothing."""
        if self._closed:
            return
        if status not in ("succeeded", "failed", "interrupted"):
            raise UsageError(f"unknown status {status!r}", hint="succeeded, failed or interrupted")
        self._closed = True
        session_id = self._s.session_id
        try:
            if session_id is not None:
                self._s.end(status, {"status": status, "success": status == "succeeded",
                                     "stop_reason": "finished" if status != "interrupted" else "interrupted",
                                     "message": message or f"the program ended: {status}",
                                     "model_calls": len(self.engine.llm_calls(session_id))})
                kept = self._s.last_session_id is not None  # a session where nothing was done is not kept
                self.status = status if kept else "none"
                if kept and status == "succeeded" and self.cache and self._ai_calls and (self._rerecorded or self.update):
                    from artemis_cli.library.cache import keep_baseline

                    keep_baseline(self.engine, self.cache, session_id)
            else:
                self.status = "none"
            self._final = self._stats()
        finally:
            if self._own_engine:
                self.engine.close()

    # -- the session -------------------------------------------------------------------------

    @property
    def session_id(self) -> str | None:
        """The session's id (None until the first step, and after a close that kept none)."""
        return self._s.session_id or (self._s.last_session_id if self._closed and self.status != "none" else None)

    def _ensure(self) -> str:
        if self._closed:
            raise UsageError("this Phone is closed", hint="open another: Phone.open(…)")
        return self._s.start(ClientInfo(self.name or "python", "", kind="Python API"))

    def _look(self) -> Observation:
        self._ensure()
        return self._s._look()

    def _event(self, payload: dict[str, Any]) -> None:
        self._s.event(CALL_EVENT, payload, step=self._s.last_step + 1)

    def _find(self, obs: Observation, sel: dict[str, Any], what: str) -> int:
        """The element list index ``sel`` picks on ``obs``; StepFailed (nothing sent) when none."""
        from artemis_cli.models.offline.scripted import find_element
        from artemis_cli.perception.elements import parse_element_lines

        el = find_element(parse_element_lines(obs.element_list), sel)
        if el is not None:
            return el.index
        labels = [e.label for e in obs.elements if e.label][:NAMED_LABELS]
        shown = ", ".join(f'"{x}"' for x in labels) or "no labelled element"
        dialog = f'; the dialog "{obs.modal.title}" is in front' if obs.modal is not None and obs.modal.title else ""
        message = f"{what}: {selector_text(sel)} is not on the screen ({obs.foreground or 'unknown app'}{dialog}: {shown})"
        self._s.event(NOT_SENT_EVENT, {"call": what, "selector": sel, "why": message}, step=self._s.last_step + 1)
        raise StepFailed(message, step=self._s.last_step + 1, session_id=self._s.session_id,
                         hint="check the label with phone.screen().labels(), or use tap(ai=…)")

    def _step(self, name: str, args: dict[str, Any], obs: Observation | None = None) -> StepResult:
        self._ensure()
        try:
            answer = self._s.act(name, args, pre=obs)
        except ToolRefused as exc:
            raise UsageError(f"{name}: {exc}") from None
        from artemis_cli.mcp_server.answers import StepAnswer

        if not isinstance(answer, StepAnswer):  # cannot happen with ``pre`` given: the target is on it
            raise StepFailed(f"{name}: not sent: {answer.refused}", session_id=self._s.session_id)
        out = answer.outcome
        t = answer.action.target
        target = (t.text or t.content_desc or t.resource_id) if t is not None else ""
        result = StepResult(answer.number, name, out.status, out.detail, target)
        if out.status != "ok":
            notes = "; ".join(out.notes)
            detail = out.detail or ("nothing on the screen changed" if out.screen_changed is False else out.status)
            raise StepFailed(f"step {answer.number} ({name}{f' {target}' if target else ''}) did not take effect: "
                             f"{detail}" + (f" ({notes})" if notes else ""),
                             step=answer.number, session_id=self._s.session_id, outcome=out)
        return result

    # -- steps without a model ---------------------------------------------------------------

    def launch(self, app: str) -> StepResult:
        """Open an app by its name ("Contacts") or package."""
        return self._step("launch_app", {"app": app})

    def tap(self, text: str | None = None, *, id: str | None = None, desc: str | None = None, nth: int = 0,
            ai: str | None = None) -> StepResult:
        """Tap the element with this text (or ``id``, or ``desc``; ``nth`` of several), or the one
        the model finds for the description ``ai``."""
        if ai is not None:
            return self._tap_ai(ai)
        sel = selector_of(text, id, desc, nth)
        obs = self._look()
        return self._step("tap", {"index": self._find(obs, sel, "tap")}, obs)

    def type(self, field: str | None, text: str, *, id: str | None = None, desc: str | None = None,
             clear: bool = True, submit: bool = False) -> StepResult:
        """Type ``text`` into the field named ``field`` (its label or hint; or ``id``/``desc``);
        ``field=None`` types into the focused field. ``clear`` replaces what it held."""
        args: dict[str, Any] = {"text": text, "clear": clear, "submit": submit}
        if field is None and id is None and desc is None:
            return self._step("type_text", args)
        sel = selector_of(field, id, desc, 0)
        obs = self._look()
        return self._step("type_text", {**args, "index": self._find(obs, sel, "type")}, obs)

    def press(self, key: str) -> StepResult:
        """Press a key: back, home, enter, …"""
        return self._step("press_key", {"key": key})

    def scroll(self, direction: str = "down") -> StepResult:
        """Scroll the screen's content (down shows what is below)."""
        return self._step("scroll", {"direction": direction})

    # -- looking -----------------------------------------------------------------------------

    def screen(self) -> Screen:
        """The screen now (no step is recorded: an event notes the look)."""
        obs = self._look()
        self._event({"call": "screen", "app": obs.foreground, "elements": len(obs.elements)})
        return screen_of(obs)

    def sees(self, text: str) -> bool:
        """Whether an element's label or description on the screen now contains ``text``."""
        obs = self._look()
        seen = screen_of(obs).find(text) is not None
        self._event({"call": "sees", "text": text, "seen": seen})
        return seen

    def wait_for(self, text: str, timeout: float = WAIT_TIMEOUT_S) -> Screen:
        """Wait until ``text`` is on the screen; StepFailed after ``timeout`` seconds."""
        deadline = time.monotonic() + max(0.0, timeout)
        looks = 0
        while True:
            obs = self._look()
            looks += 1
            screen = screen_of(obs)
            if screen.find(text) is not None:
                self._event({"call": "wait_for", "text": text, "seen": True, "looks": looks})
                return screen
            if time.monotonic() >= deadline:
                self._event({"call": "wait_for", "text": text, "seen": False, "looks": looks})
                shown = ", ".join(f'"{x}"' for x in screen.labels()[:NAMED_LABELS]) or "no labelled element"
                raise StepFailed(f'"{text}" did not appear within {timeout:g} s ({obs.foreground or "unknown app"}: '
                                 f"{shown})", step=self._s.last_step + 1, session_id=self._s.session_id)
            time.sleep(min(WAIT_EVERY_S, max(0.0, deadline - time.monotonic())))

    # -- models ------------------------------------------------------------------------------

    def _model_for(self, what: str) -> Any:
        """The model of AI steps, built on first use (UsageError with a hint when there is none)."""
        if self._model is not None:
            return self._model
        spec = self._model_spec
        if spec is not None and not isinstance(spec, str):
            self._model = spec
        else:
            from artemis_cli.models.registry import build_model, has_api_key, profile_provider

            if spec is None and not has_api_key() and profile_provider(self.profile) != "openai":
                raise UsageError(f"{what} needs a model: none was given and no API key is set",
                                 hint="set GEMINI_API_KEY, or pass model= to Phone.open (--artemis-model for the "
                                      "pytest plugin); model='heuristic' runs the offline baseline on purpose")
            if spec == "scripted":
                raise UsageError("the scripted model plays a task file's reference; a Phone has none",
                                 hint="pass a model object (models.offline.scripted.ScriptedModel(script)) or another model")
            self._model = build_model(spec, task=None, profile=self.profile, base_url=self._base_url)
        sid = self._ensure()
        rec = self.engine.get_session(sid)
        self.engine.update_session(sid, models={**(rec.models or {}), "ai": self._model.name},
                                   model_label=f"{rec.model_label}; AI steps: {self._model.label}")
        return self._model

    def _healer(self) -> Any:
        """The model that heals a cached AI step, by ``replay --heal``'s rule (``heal.healing_choice``:
        the profile's default model when it has one or an API key is set): the Phone's model when
        that is an LLM, else the offline healer."""
        if self._heal_model is None:
            spec = self._model_spec
            if spec is None or isinstance(spec, str):
                from artemis_cli.replay.heal import healing_choice

                llm = healing_choice(spec, self.profile)[0] not in ("heuristic", "scripted", "healer")
            else:
                llm = not getattr(spec, "offline", True)
            if llm:
                self._heal_model = self._model_for("healing a cached step")
            else:
                from artemis_cli.models.offline.healer import HealerModel

                self._heal_model = HealerModel()
        return self._heal_model

    def _cached(self, ordinal: int, call: str, goal: str) -> Any:
        """The baseline's AI call ``ordinal`` when it is this one (same kind and goal), else None."""
        if not self.cache or self.update:
            return None
        from artemis_cli.library.cache import baseline_calls, baseline_for

        if self._baseline_calls is None:
            self._baseline = baseline_for(self.engine, self.cache)
            self._baseline_calls = baseline_calls(self.engine, self._baseline) if self._baseline else []
        calls = self._baseline_calls
        if ordinal < len(calls) and calls[ordinal].call == call and calls[ordinal].goal == goal:
            return calls[ordinal]
        return None

    def _view(self) -> dict[str, Any]:
        """How the asks show the screenshot: as the operator's copy (the profile's size, marks and
        media resolution)."""
        shot = self.profile.screenshot
        return {"max_image_side": shot.max_side, "marks": shot.marks, "media_resolution": shot.media_resolution}

    def _calls(self) -> int:
        return len(self.engine.llm_calls(self._ensure()))

    # -- steps with a model ------------------------------------------------------------------

    def act(self, goal: str, *, max_steps: int | None = None) -> ActResult:
        """Reach ``goal`` with the operator loop (Flash, or Pro with a Pro profile) in this session;
        with ``cache``, replay the baseline's steps for it instead (healing drift). StepFailed when
        the goal was not reached."""
        sid = self._ensure()
        ordinal, self._ai_calls = self._ai_calls, self._ai_calls + 1
        first, calls0 = self._s.last_step + 1, self._calls()
        cached = self._cached(ordinal, "act", goal)
        budget = 0  # the loop's step budget (a replayed AI step had none)
        if cached is not None:
            from artemis_cli.library.cache import replay_call

            obs = self._look()
            out = replay_call(self._s, self._baseline or "", cached, goal, heal_model=self._healer(), profile=self.profile,
                              real_time=self._real_time, secrets=self._secrets, pre=obs)
            success, how, answer, message, final = out.success, out.how, out.answer, out.message, out.final
        else:
            success, answer, message, final = self._run_loop(sid, goal, first, max_steps)
            how = "model"
            budget = max_steps or self.profile.max_steps or DEFAULT_ACT_STEPS
        if how != "cache":
            self._rerecorded = True
        self._s.caught_up(final)
        last = self._s.last_step
        result = ActResult(goal, success, answer, first, last, how, self._calls() - calls0, message)
        self._event_ai("act", result, max_steps=budget)
        if not success:
            raise StepFailed(f'act "{goal}" failed after {result.steps} step(s): {message}', step=last,
                             session_id=sid, outcome=result)
        return result

    def _event_ai(self, call: str, r: ActResult, max_steps: int = 0) -> None:
        """The AI step's record: the cache reads its goal and steps, ``sessions prompt`` its
        budget (``memory.turn_check.ai_step_span``)."""
        self._s.event(CALL_EVENT, {"call": call, "goal": r.goal, "success": r.success, "how": r.how,
                                   "first_step": r.first_step, "last_step": r.last_step,
                                   "model_calls": r.model_calls, "answer": r.answer, "message": r.message,
                                   **({"max_steps": max_steps} if max_steps else {})})

    def _run_loop(self, sid: str, goal: str, first: int, max_steps: int | None) -> tuple[bool, str, str, Any]:
        from artemis_cli.operators.background import STOP_BOUND_S, stop_background
        from artemis_cli.replay.heal import HealTask
        from artemis_cli.runner import Callbacks, build_loop, guard_budget, new_ledger, priced

        model = self._model_for("phone.act")
        steps = max_steps or self.profile.max_steps or DEFAULT_ACT_STEPS
        task = HealTask(goal=goal, secrets={name: "given to Phone.open" for name in self._secrets})
        if not self._budget_checked:
            self._plan_budget(sid, model, task)
        prompt = self._prompt(sid, task)
        ledger = new_ledger(task, self.profile, self.engine, steps, prompt, started_after=first - 1)
        loop, service = build_loop(sid, task, self.profile, self.device, model, self.engine,
                                   max_steps=first + steps - 1, real_time=self._real_time, callbacks=Callbacks(),
                                   ledger=ledger, lease=self._s.lease, secrets=self._secrets)
        loop.t0, loop.offset_base_ms = time.monotonic(), self._s._offset_ms()  # the session's clock goes on
        try:
            with priced(self.engine, sid, model, self.profile) as pricer:
                guard_budget(loop, self.engine, sid, pricer, self.profile.max_cost)
                outcome = loop.run(start_step=first)
        except BaseException:
            stop_background(loop, service, STOP_BOUND_S)
            raise
        stop_background(loop, service, self.profile.memory.runtime.flush_timeout_s)
        if outcome.stop_reason == "device_offline":
            raise DeviceOffline(outcome.stop_message or "the device went away")
        if outcome.finished:
            ok = bool(outcome.model_success)
            why = "the model finished with success=" + str(ok).lower() + (f": {outcome.answer}" if outcome.answer else "")
            return ok, outcome.answer, why, outcome.final
        why = outcome.stop_message or (f"stopped at max_steps {steps} without finish"
                                       if outcome.stop_reason == "max_steps" else outcome.stop_reason)
        return False, "", why, outcome.final

    def _plan_budget(self, sid: str, model: Any, task: Any) -> None:
        """The context budget of the session's AI steps, planned at the first (as ``artemis run``
        plans a run's): below its floor the profile is fitted to the server's window (unless
        ``fit=False``), or a UsageError refuses. The budget and the profile the loops run with
        are stored in the session's config (the compressor binds to the budget)."""
        from artemis_cli.runner import fitted_context

        info = self.device.info()
        self.profile, budget = fitted_context(self.profile, model, (info.width, info.height), task.secrets,
                                              fit=self._fit)
        if budget.fitted:
            log.warning("fitted to the context budget: %s", ", ".join(budget.fitted))
        rec = self.engine.get_session(sid)
        self.engine.update_session(sid, config={**(rec.config or {}), "context_budget": budget.to_dict(),
                                                "profile": self.profile.model_dump(mode="json")})
        self._budget_checked = True

    def _prompt(self, sid: str, task: Any) -> dict[str, Any]:
        """The S zone (system text and tools) every AI step of the session is sent, stored in the
        session's config the first time (``runner.session_prompt``: resume and ``sessions
        prompt`` rebuild requests from it)."""
        from artemis_cli.runner import session_prompt

        rec = self.engine.get_session(sid)
        config = dict(rec.config or {})
        if not config.get("prompt"):
            config["prompt"] = session_prompt(self.profile, task)
            self.engine.update_session(sid, config=config)
        return dict(config["prompt"])

    def _tap_ai(self, description: str) -> StepResult:
        from artemis_cli.library.ask import ask_locate, require_llm
        from artemis_cli.operators.roles import call_recorder
        from artemis_cli.runner import priced

        sid = self._ensure()
        ordinal, self._ai_calls = self._ai_calls, self._ai_calls + 1
        first, calls0 = self._s.last_step + 1, self._calls()
        cached = self._cached(ordinal, "tap_ai", description)
        if cached is not None:
            from artemis_cli.library.cache import replay_call

            out = replay_call(self._s, self._baseline or "", cached, description, heal_model=None,
                              profile=self.profile, real_time=self._real_time, secrets=self._secrets, pre=self._look())
            self._s.caught_up(out.final)
            if out.success:
                rec = self.engine.get_step(sid, self._s.last_step)
                self._event_ai("tap_ai", ActResult(description, True, "", first, self._s.last_step, "cache", 0, out.message))
                return StepResult(rec.number, "tap", rec.result_status, rec.result_detail or "",
                                  str((rec.target or {}).get("text") or ""))
            first = self._s.last_step + 1  # diverged: the model finds it on the screen now
        model = self._model_for("tap(ai=…)")
        require_llm(model, "tap(ai=…)")
        self._rerecorded = True
        obs = self._look()
        with priced(self.engine, sid, model, self.profile):
            found = ask_locate(model, obs, description, record_call=call_recorder(self.engine, sid),
                               **self._view())
        try:
            step = self._step("tap", {"index": found.index}, obs)
        except StepFailed as exc:
            self._event_ai("tap_ai", ActResult(description, False, "", first, self._s.last_step, "model",
                                               self._calls() - calls0, str(exc)))
            raise
        self._event_ai("tap_ai", ActResult(description, True, "", first, step.step, "model", self._calls() - calls0,
                                           found.reason))
        return step

    def query(self, question: str, kind: Any = str) -> Any:
        """Answer ``question`` from the screen now as ``kind`` (int, bool, str, a pydantic model, any
        type pydantic validates). Never cached: the model is asked every time."""
        from artemis_cli.library.ask import ask_query, require_llm
        from artemis_cli.operators.roles import call_recorder
        from artemis_cli.runner import priced

        sid = self._ensure()
        model = self._model_for("phone.query")
        require_llm(model, "phone.query")
        obs = self._look()
        with priced(self.engine, sid, model, self.profile):
            answer = ask_query(model, obs, question, kind, record_call=call_recorder(self.engine, sid),
                               **self._view())
        value = answer.value
        shown = value.model_dump(mode="json") if hasattr(value, "model_dump") else value
        self._event({"call": "query", "question": question, "answer": shown, "reason": answer.reason,
                     "model": answer.model})
        return value

    def check(self, statement: str) -> str:
        """Assert ``statement`` about the screen now; CheckFailed (an AssertionError) with the
        model's reason when it does not hold. Returns the reason. Never cached."""
        from artemis_cli.library.ask import ask_check, require_llm
        from artemis_cli.operators.roles import call_recorder
        from artemis_cli.runner import priced

        sid = self._ensure()
        model = self._model_for("phone.check")
        require_llm(model, "phone.check")
        obs = self._look()
        with priced(self.engine, sid, model, self.profile):
            verdict = ask_check(model, obs, statement, record_call=call_recorder(self.engine, sid),
                                **self._view())
        self._event({"call": "check", "statement": statement, "passed": verdict.passed, "reason": verdict.reason,
                     "model": verdict.model})
        if not verdict.passed:
            raise CheckFailed(f'check failed: "{statement}" — {verdict.model} says: {verdict.reason}',
                              step=self._s.last_step, session_id=sid, outcome=verdict)
        return verdict.reason

    # -- what happened -----------------------------------------------------------------------

    def stats(self) -> PhoneStats:
        """The session so far (after close: at its end): steps, model calls, cost, healed and
        replayed steps."""
        if self._final is not None:
            return self._final
        return self._stats()

    def _stats(self) -> PhoneStats:
        sid = self._s.session_id or (self._s.last_session_id if self.status not in ("open", "none") else None)
        if sid is None:
            return PhoneStats(None, self.status if self._closed else "open", 0, 0, 0.0, 0, 0, str(self.engine.data_dir))
        from artemis_cli.engine.token_usage import session_costs
        from artemis_cli.replay.lineage import marks as replay_marks

        marks = list(replay_marks(self.engine, sid).values())
        return PhoneStats(
            session_id=sid, status=self.status, steps=self.engine.last_step_number(sid),
            model_calls=len(self.engine.llm_calls(sid)), cost_usd=session_costs(self.engine, sid).total_usd,
            healed_steps=sum(1 for m in marks if m == "healed"),
            replayed_steps=sum(1 for m in marks if m in ("replayed", "retargeted")),
            data_dir=str(self.engine.data_dir))

    def report(self, path: str | Path | None = None) -> Path:
        """Write the session's HTML report (default: ``reports/`` in the data dir); its path."""
        from artemis_cli.report.html import default_name, write_report

        sid = self.session_id
        if sid is None:
            raise UsageError("no session to report: nothing was done on the phone yet")
        engine = self.engine if not self._closed or not self._own_engine else DataEngine.open(self.engine.data_dir)
        try:
            out = Path(path) if path is not None else Path(engine.data_dir) / "reports" / default_name(engine, sid)
            return write_report(engine, sid, out)
        finally:
            if engine is not self.engine:
                engine.close()
