"""What the Python API's calls return: typed, plain data (no device or engine handles inside)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class StepResult:
    """One recorded step: its number in the session, what was done and its observed outcome."""

    step: int
    action: str
    status: str  # ok (its effect was observed) | failed | error
    detail: str = ""
    target: str = ""  # the element acted on, as the element list names it

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass(frozen=True)
class ActResult:
    """An AI step (``phone.act``, ``phone.tap(ai=…)``): the steps it recorded and how they came about."""

    goal: str
    success: bool
    answer: str
    first_step: int
    last_step: int
    #: model (the model decided every step) | cache (replayed from the baseline, no model call) |
    #: healed (replayed, and a model brought a diverged stretch back to the recording)
    how: str
    model_calls: int
    message: str = ""

    @property
    def steps(self) -> int:
        return max(0, self.last_step - self.first_step + 1)


@dataclass(frozen=True)
class ScreenElement:
    """One element of the element list a model reads (``index`` is its number there)."""

    index: int
    label: str
    class_name: str
    resource_id: str
    content_desc: str
    bounds: tuple[int, int, int, int]
    center: tuple[int, int]
    clickable: bool
    checked: bool | None
    enabled: bool
    focused: bool


@dataclass(frozen=True)
class Screen:
    """The screen now: the foreground app, the element list, the screenshot (PNG) and UI XML."""

    app: str | None
    elements: list[ScreenElement]
    element_list: str  # the text a model reads
    png: bytes = field(repr=False)
    xml: str = field(repr=False)
    dialog: str | None = None  # the title of a dialog in front, when one is

    def labels(self) -> list[str]:
        return [e.label for e in self.elements if e.label]

    def find(self, text: str) -> ScreenElement | None:
        """The first element whose label or description contains ``text`` (case-insensitive)."""
        want = " ".join(text.casefold().split())
        for e in self.elements:
            if want in " ".join(f"{e.label} {e.content_desc}".casefold().split()):
                return e
        return None


@dataclass(frozen=True)
class PhoneStats:
    """The session so far (what the pytest plugin attaches to a test's JUnit properties)."""

    session_id: str | None
    status: str  # open | succeeded | failed | interrupted | none (no step was ever recorded)
    steps: int
    model_calls: int
    cost_usd: float | None
    healed_steps: int
    replayed_steps: int
    data_dir: str
    extra: dict[str, Any] = field(default_factory=dict)
