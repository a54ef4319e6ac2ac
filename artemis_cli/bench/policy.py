"""The fake server's policy for bench runs: the task's reference script, played in every mode.

The scripted player finds its place from the ``[script k/n]`` markers in its own earlier
messages. A ``legacy`` prompt has no earlier model messages — its history is one user text — so
the marker of the newest history line is handed to the player as if it were the model's last
message. The decision logic itself is the same in every mode.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from artemis_cli.memory.modes import LEGACY_HISTORY_HEADING
from artemis_cli.models.offline.scripted import MARKER_RE, script_policy


def _legacy_marker(contents: list[dict[str, Any]]) -> str | None:
    for content in contents:
        if content.get("role") == "model":
            continue
        for part in content.get("parts") or []:
            text = part.get("text") or ""
            if text.startswith(LEGACY_HISTORY_HEADING):
                found = list(MARKER_RE.finditer(text))
                return found[-1].group(0) if found else None
    return None


def bench_policy(script: list[dict[str, Any]]) -> Any:
    inner = script_policy(script)

    def policy(request: Any) -> Any:
        if request.tools:
            marker = _legacy_marker(request.contents)
            if marker is not None:
                prior = {"role": "model", "parts": [{"text": marker}]}
                request = replace(request, contents=[prior, *request.contents])
        return inner(request)

    return policy


class LegacyAwareScripted:
    """The offline scripted model with the same ``legacy`` marker hand-off as ``bench_policy``."""

    offline = True

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.label = inner.label

    def generate(self, request: Any) -> Any:
        from artemis_cli.models.base import Message, Part

        for m in request.messages:
            if m.role != "user":
                continue
            for p in m.parts:
                if p.text and p.text.startswith(LEGACY_HISTORY_HEADING):
                    found = list(MARKER_RE.finditer(p.text))
                    if found:
                        request = replace(request, messages=[Message("model", [Part(text=found[-1].group(0))]),
                                                             *request.messages])
                    return self.inner.generate(request)
        return self.inner.generate(request)
