"""The tools, instructions and prompt ``artemis mcp`` gives a client's model. Pinned by golden
tests (tests/mcp/golden/).

The action tools are Artemis's operator's own (``operators.tools``: the same names, arguments and
descriptions, coordinates in screen pixels), with ``intent`` optional; ``observe``, ``recall`` and
``note`` stand in for the observation the operator is handed each turn and its memory tools.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from artemis_cli.mcp_server.bounds import bounded_schema
from artemis_cli.memory.recall_args import RECALL_HISTORY_DESCRIPTION, RECALL_HISTORY_PARAMETERS
from artemis_cli.operators.prompts import android_knowhow, untrusted_content
from artemis_cli.operators.tools import tool_declarations

#: The operator's action tools an MCP client gets, in this order.
ACTION_TOOLS = ("tap", "double_tap", "long_press", "type_text", "scroll", "swipe", "drag", "press_key", "launch_app",
                "open_url", "stop_app", "wait", "finish")
#: What a ``--read-only`` server offers.
READ_ONLY_TOOLS = ("observe", "recall")


@dataclass(frozen=True)
class McpTool:
    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool = False


_OBSERVE = McpTool(
    "observe",
    "Look at the phone's screen now: the foreground app, whether the keyboard is shown, your saved notes, "
    "the numbered list of on-screen elements (the indices the action tools take) and a screenshot. Call it "
    "first; after that every action answers with the new screen, so call it again only to look without "
    "acting (a screen that was loading, say).",
    {"type": "object", "properties": {
        "marks": {"type": "boolean", "description": "Draw each listed element's index on the screenshot "
                                                    "(set-of-marks). Default true."},
        "screenshot": {"type": "boolean", "description": "Include the screenshot. Default true."},
    }},
    read_only=True,
)

_RECALL_PARAMETERS = copy.deepcopy(RECALL_HISTORY_PARAMETERS)
_RECALL_PARAMETERS["properties"]["note"] = {
    "type": "string", "description": "Read the note saved under this key instead (see `note`)."}

_RECALL = McpTool(
    "recall",
    RECALL_HISTORY_DESCRIPTION.replace(" (does not end the turn)", "")
    + " With `note`, read back a note saved with `note` instead.",
    _RECALL_PARAMETERS,
    read_only=True,
)

_NOTE = McpTool(
    "note",
    "Save a note under a key, kept with the session: exact values you will need later (names, numbers, "
    "addresses, codes) as soon as you see them. Every observation recites your notes; `recall` with "
    "`note` reads one back in full. Saving under a key again replaces it.",
    {"type": "object", "properties": {
        "key": {"type": "string", "description": "A short name for the note."},
        "content": {"type": "string", "description": "What to remember."}},
     "required": ["key", "content"]},
)

MCP_TYPE_TEXT = ("Type text into a text field. With `index` the field is tapped first, else the focused field "
                 "takes it; `clear` empties it first; `submit` presses enter afterwards.")

_ACTION_SUFFIX = {
    "finish": " Ends and closes the session (recorded as its last step); a further call starts a new one.",
}


def _action_tools() -> list[McpTool]:
    declared = {d.name: d for d in tool_declarations("pixels")}
    tools = []
    for name in ACTION_TOOLS:
        decl = declared[name]
        schema = copy.deepcopy(decl.parameters)
        required = [r for r in schema.get("required", []) if r != "intent"]  # optional for a client
        description = decl.description
        if name == "type_text":
            # an MCP session has no task secrets: the client types its own text (a `secret` it
            # sends anyway is refused, naming that there are none)
            schema["properties"].pop("secret", None)
            required = ["text"]
            description = MCP_TYPE_TEXT
        if required:
            schema["required"] = required
        else:
            schema.pop("required", None)
        tools.append(McpTool(name, description + _ACTION_SUFFIX.get(name, ""), schema))
    return tools


def mcp_tools(read_only: bool = False) -> list[McpTool]:
    """The tool list, in a fixed order; ``read_only``: observe and recall only."""
    every = [_OBSERVE, *_action_tools(), _RECALL, _NOTE]
    every = [McpTool(t.name, t.description, bounded_schema(t.name, copy.deepcopy(t.input_schema)), t.read_only)
             for t in every]
    return [t for t in every if t.name in READ_ONLY_TOOLS] if read_only else every


INSTRUCTIONS_HEAD = """\
Artemis drives one Android phone and records every action as a step of a session (screenshots \
and UI before and after, the element it hit, what it came to), so the session can be inspected, \
replayed and turned into a test afterwards.

- Call observe first. Act by element index from the latest element list; coordinates are \
screen pixels (never the screenshot's own pixels: it may be scaled).
- Every action answers with what was observed after it: status ok (its effect was seen), \
no_change (nothing visible changed), failed (it did not take effect, e.g. typed text that did \
not land; the detail says why) or app_crashed / app_not_responding, then the new element list. \
Read it before the next action; do not repeat an action that did not work.
- An action aimed at an element or a point is not sent when the screen changed since you saw \
it: the answer is the new screen; pick the target again.
- Call finish(success, answer) when the task is done or cannot be done.
"""


def instructions(read_only: bool = False, allow_apps: tuple[str, ...] = ()) -> str:
    """The server's instructions (sent once, at initialisation)."""
    lines = [INSTRUCTIONS_HEAD]
    if read_only:
        lines.append("This server is read-only: observe and recall only; nothing is sent to the phone.\n")
    if allow_apps:
        lines.append(f"Only these apps may be operated: {', '.join(allow_apps)}; in any other, only "
                     "press_key back or home is sent.\n")
    lines.append(untrusted_content())
    return "\n".join(lines)


PROMPT_NAME = "android_task"
PROMPT_DESCRIPTION = ("Carry out a task on the Android phone with Artemis's tools, with the guidance Artemis's own "
                      "operator gets.")


def android_task_prompt(goal: str) -> str:
    """The ``android_task`` prompt: the goal, how to work through Artemis, the operator's Android
    know-how and the rule on device text."""
    return "\n".join([
        f"Carry out this task on the Android phone: {goal.strip()}",
        "",
        INSTRUCTIONS_HEAD,
        android_knowhow("note"),
        untrusted_content(),
    ])
