"""Success checks of a task (SPEC §3.1): evaluated after the run, never shown to the model.

``artemis run`` (``runner.finish_run``) and ``artemis replay`` (``replay.replayer``) both judge a
session here. ``answer`` and ``finished`` checks look at how the run ended (``finish``: anything
with ``finished``, ``model_success`` and ``answer``, e.g. the loop's ``LoopOutcome``); without it
they fail as if the model never called finish.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from artemis_cli.device.protocol import Device
from artemis_cli.errors import DeviceError
from artemis_cli.operators.observe import Observation


@dataclass
class CheckResult:
    check: str
    passed: bool
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class FinishState(Protocol):
    """How a run ended: whether the model called finish, with which success and answer."""

    @property
    def finished(self) -> bool: ...

    @property
    def model_success(self) -> bool | None: ...

    @property
    def answer(self) -> str: ...


@dataclass(frozen=True)
class Finish:
    """A :class:`FinishState` of its own (a replay builds one from the replayed finish step)."""

    finished: bool = False
    model_success: bool | None = None
    answer: str = ""


def _compare(subject: str, check: Any, text: str) -> CheckResult:
    """``equals`` / ``contains`` (``text`` stripped) / ``matches`` (regex search), as for shell output."""
    if getattr(check, "equals", None) is not None:
        want = str(check.equals)
        return CheckResult(f"{subject} == {want!r}", text == want, f"got {text!r}")
    if getattr(check, "contains", None) is not None:
        want = str(check.contains)
        return CheckResult(f"{subject} contains {want!r}", want in text, f"got {text[:200]!r}")
    pattern = str(getattr(check, "matches", ""))
    ok = re.search(pattern, text) is not None
    return CheckResult(f"{subject} matches /{pattern}/", ok, f"got {text[:200]!r}")


def _screen_texts(obs: Observation | None) -> list[str]:
    if obs is None:
        return []
    return [t for n in obs.tree.nodes for t in (n.text, n.content_desc) if t]


def _where(seen: bool) -> str:
    """What a visible/not_visible check found, said so that a failed check never reads as found."""
    return "on the final screen" if seen else "not on the final screen"


def evaluate_check(check: Any, device: Device, final: Observation | None,
                   finish: FinishState | None = None) -> CheckResult:
    shell = getattr(check, "shell", None)
    if shell:
        try:
            out = device.shell(shell).strip()
        except DeviceError as exc:
            return CheckResult(f"shell: {shell}", False, f"{type(exc).__name__}: {exc}")
        return _compare(f"shell: {shell}", check, out)
    answer = getattr(check, "answer", None)
    if answer is not None:
        if finish is None or not finish.finished:
            return CheckResult(_compare("answer", answer, "").check, False, "the model never called finish")
        return _compare("answer", answer, (finish.answer or "").strip())
    finished = getattr(check, "finished", None)
    if finished is not None:
        want = bool(finished.success)
        name = f"finished: success={str(want).lower()}"
        if finish is None or not finish.finished:
            return CheckResult(name, False, "the model never called finish")
        got = bool(finish.model_success)
        return CheckResult(name, got == want, f"the model finished with success={str(got).lower()}")
    texts = _screen_texts(final)
    if getattr(check, "visible", None):
        want = check.visible
        seen = any(want in t for t in texts)
        return CheckResult(f"visible: {want!r}", seen, _where(seen))
    if getattr(check, "not_visible", None):
        want = check.not_visible
        seen = any(want in t for t in texts)
        return CheckResult(f"not visible: {want!r}", not seen, _where(seen))
    if getattr(check, "app", None):
        fg = final.foreground if final else None
        return CheckResult(f"app: {check.app}", fg == check.app, f"foreground is {fg}")
    return CheckResult(repr(check), False, "unknown check")


def evaluate_checks(checks: list[Any], device: Device, final: Observation | None,
                    finish: FinishState | None = None) -> list[CheckResult]:
    return [evaluate_check(c, device, final, finish) for c in checks]
