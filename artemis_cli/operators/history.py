"""The operator's conversation history (the prompt projection).

This is the minimal projection: the stable system prefix, the task, every committed turn (model
messages kept unchanged so thought signatures are echoed) and the current observation. An
observation loses its element list and screenshot once a newer observation exists (the XML and
image are in the DataEngine, by step number). The transcript ledger with zones, scrub depths and
compression replaces this in the memory runtime.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from artemis_cli.models.base import FunctionResponse, Message, ModelRequest, Part, ToolDecl


@dataclass
class TurnInput:
    """The user message that opens a step: last action's result, the observation, the image."""

    step: int
    responses: list[FunctionResponse]
    observation_text: str
    image_png: bytes | None
    task_text: str | None = None  # only on the first turn

    def message(self) -> Message:
        parts = [Part(function_response=r) for r in self.responses]
        if self.task_text:
            parts.append(Part(text=self.task_text))
        parts.append(Part(text=self.observation_text))
        if self.image_png is not None:
            parts.append(Part(image_png=self.image_png))
        return Message("user", parts)

    def scrubbed(self) -> Message:
        first_line = self.observation_text.splitlines()[0] if self.observation_text else ""
        parts = [Part(function_response=r) for r in self.responses]
        if self.task_text:
            parts.append(Part(text=self.task_text))
        parts.append(Part(text=f"{first_line} [step {self.step}: element list and screenshot omitted]"))
        return Message("user", parts)


@dataclass
class History:
    system: str
    tools: list[ToolDecl]
    committed: list[Message] = field(default_factory=list)

    def request(self, current: TurnInput, turn: list[Message]) -> ModelRequest:
        messages = [*self.committed, current.message(), *turn]
        return ModelRequest(system=self.system, messages=messages, tools=self.tools, role="operator")

    def commit(self, current: TurnInput, turn: list[Message]) -> None:
        self.committed.append(current.scrubbed())
        self.committed.extend(turn)
