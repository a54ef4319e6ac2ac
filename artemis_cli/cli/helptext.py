"""Help text shown as written.

Typer renders ``--help`` with Rich markup (``rich_markup_mode="rich"``, its default when Rich is
installed), so a literal ``[redacted]`` or ``bounds [l,t,r,b]`` in a docstring or an option's
``help=`` would be taken for a markup tag and vanish. :func:`literal` escapes such brackets at the
source; markup that is meant as markup can still be written outside it. ``tests/cli/
test_help_brackets.py`` walks every command and fails on a bracket lost in the rendered help.
"""

from __future__ import annotations


def literal(text: str) -> str:
    """``text`` with every ``[`` that Rich would read as a tag escaped — only when Typer renders
    help with Rich markup (with ``TYPER_USE_RICH=0`` help is plain Click text: no escapes)."""
    from typer.core import DEFAULT_MARKUP_MODE

    if DEFAULT_MARKUP_MODE != "rich":
        return text
    from rich.markup import escape

    return escape(text)
