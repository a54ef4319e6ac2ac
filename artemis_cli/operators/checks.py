"""Success checks of a task (SPEC §3.1): evaluated after the run, never shown to the model."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

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


def _screen_texts(obs: Observation | None) -> list[str]:
    if obs is None:
        return []
    return [t for n in obs.tree.nodes for t in (n.text, n.content_desc) if t]


def evaluate_check(check: Any, device: Device, final: Observation | None) -> CheckResult:
    shell = getattr(check, "shell", None)
    if shell:
        try:
            out = device.shell(shell).strip()
        except DeviceError as exc:
            return CheckResult(f"shell: {shell}", False, f"{type(exc).__name__}: {exc}")
        if getattr(check, "equals", None) is not None:
            want = str(check.equals)
            return CheckResult(f"shell: {shell} == {want!r}", out == want, f"got {out!r}")
        if getattr(check, "contains", None) is not None:
            want = str(check.contains)
            return CheckResult(f"shell: {shell} contains {want!r}", want in out, f"got {out[:200]!r}")
        pattern = str(getattr(check, "matches", ""))
        ok = re.search(pattern, out) is not None
        return CheckResult(f"shell: {shell} matches /{pattern}/", ok, f"got {out[:200]!r}")
    texts = _screen_texts(final)
    if getattr(check, "visible", None):
        want = check.visible
        return CheckResult(f"visible: {want!r}", any(want in t for t in texts), "on the final screen")
    if getattr(check, "not_visible", None):
        want = check.not_visible
        return CheckResult(f"not visible: {want!r}", not any(want in t for t in texts), "on the final screen")
    if getattr(check, "app", None):
        fg = final.foreground if final else None
        return CheckResult(f"app: {check.app}", fg == check.app, f"foreground is {fg}")
    return CheckResult(repr(check), False, "unknown check")


def evaluate_checks(checks: list[Any], device: Device, final: Observation | None) -> list[CheckResult]:
    return [evaluate_check(c, device, final) for c in checks]
