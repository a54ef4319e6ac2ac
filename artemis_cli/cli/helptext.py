"""Help text shown as written.

Typer renders ``--help`` with Rich markup (``rich_markup_mode="rich"``, its default when Rich is
installed), so a literal ``[redacted]`` or ``bounds [l,t,r,b]`` in a docstring or an option's
``help=`` would be taken for a markup tag and vanish. :func:`literal` escapes such brackets at the
source; markup that is meant as markup can still be written outside it. ``tests/cli/
test_help_brackets.py`` walks every command and fails on a bracket lost in the rendered help.
"""

from __future__ import annotations

import re
from typing import Any

#: ``<list[str]>``, ``<list[Path]>``: a Python annotation in Typer's help type column
_LIST_TYPE = re.compile(r"<list\[(\w+)\]>")


def literal(text: str) -> str:
    """``text`` with every ``[`` that Rich would read as a tag escaped — only when Typer renders
    help with Rich markup (with ``TYPER_USE_RICH=0`` help is plain Click text: no escapes)."""
    from typer.core import DEFAULT_MARKUP_MODE

    if DEFAULT_MARKUP_MODE != "rich":
        return text
    from rich.markup import escape

    return escape(text)


def unwrap(text: str) -> str:
    """``text`` with the hard line breaks of its paragraphs removed, so a docstring wrapped at the
    source's width is rewrapped at the terminal's (Rich help keeps single newlines verbatim and
    would break lines mid-sentence). A paragraph starting with ``\\b`` (Click's "keep as written")
    and lines starting a list item (``- ``, ``* ``) or indented keep their breaks."""
    paragraphs = []
    for paragraph in text.split("\n\n"):
        if paragraph.startswith("\b"):
            paragraphs.append(paragraph)
            continue
        lines: list[str] = []
        for line in paragraph.split("\n"):
            if lines and not line.startswith((" ", "- ", "* ")):
                lines[-1] = f"{lines[-1].rstrip()} {line.strip()}"
            else:
                lines.append(line)
        paragraphs.append("\n".join(lines))
    return "\n\n".join(paragraphs)


def prepare(app: Any) -> None:
    """Unwrap the help of every command and group registered on the Typer ``app`` (recursively),
    and show no type for flags (below). Called when the ``artemis`` app is assembled, and on each
    command as it is loaded (cli/app.py)."""
    import inspect

    for command in app.registered_commands:
        doc = command.help if command.help is not None else inspect.getdoc(command.callback)
        if doc:
            command.help = unwrap(inspect.cleandoc(doc))
    for group in app.registered_groups:
        instance = group.typer_instance
        if isinstance(instance.info.help, str):
            instance.info.help = unwrap(inspect.cleandoc(instance.info.help))
        prepare(instance)
    _flags_show_no_type()
    _lists_show_their_item_type()


def _lists_show_their_item_type() -> None:
    """Typer's Rich help shows a variadic argument's Python annotation (``sessions...
    <list[str]>``); the help shows ``<str>...`` instead, in the words of every other type
    (``<str>``, ``<path>``). ``tests/cli/test_help_types.py`` walks every command."""
    from typer.core import TyperArgument

    shown = getattr(TyperArgument, "display_type_rich", None)
    if shown is None or getattr(shown, "_artemis", False):  # older Typer: no type column
        return

    def display_type_rich(self: Any, ctx: Any) -> str | None:
        text = shown(self, ctx)
        return _LIST_TYPE.sub(lambda m: f"<{m.group(1).lower()}>...", text) if isinstance(text, str) else text

    display_type_rich._artemis = True  # type: ignore[attr-defined]
    TyperArgument.display_type_rich = display_type_rich  # type: ignore[method-assign]


def _flags_show_no_type() -> None:
    """Typer's Rich help shows every flag's Python type (``--json <bool>``), where Click's plain
    help (and every other CLI) shows nothing: a flag takes no value. Same rule as the plain help:
    no type column for flags and counters."""
    from typer.core import TyperOption

    if getattr(TyperOption.display_type_rich, "_artemis", False):
        return
    shown = TyperOption.display_type_rich

    def display_type_rich(self: Any, ctx: Any) -> str | None:
        if self.is_flag or self.count:
            return None
        return shown(self, ctx)

    display_type_rich._artemis = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]
