"""The token table of the run summary and ``artemis sessions show`` (issue 13): operator, lens and
Pro-role tokens by role, with group subtotals and a total; fits 80 columns."""

from __future__ import annotations

from typing import TYPE_CHECKING

from artemis_cli.cli.console import escape
from artemis_cli.engine.token_usage import OUTPUT_IS, TokenCounts, TokenUsage
from artemis_cli.plural import counted

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

COLUMNS = ("role", "calls", "prompt", "cached", "cached %", "output")


def _share(counts: TokenCounts) -> str:
    share = counts.cached_share
    return "—" if share is None else f"{100 * share:.0f}%"


def _cells(label: str, counts: TokenCounts) -> list[str]:
    return [label, f"{counts.calls:,}", f"{counts.prompt:,}", f"{counts.cached:,}", _share(counts),
            f"{counts.output:,}"]


def token_table(usage: TokenUsage, title: str | None = "Tokens by role", width: int | None = None) -> Table:
    """Each group that has calls (operator; lenses; Pro roles; other) with its roles indented
    below it (the operator group is one role: one row), and the total as the footer row.

    Laid out for ``width`` (None: as wide as it needs): the role label is cut with an ellipsis,
    and on a narrow terminal the raw cached count goes first (the cached share stays), then the
    call count."""
    from rich import box

    from artemis_cli.cli.tables import Column, FitTable

    total = _cells("total", usage.total)
    drops = {"cached": 2, "calls": 1}
    table = FitTable([Column(col, "label" if col == "role" else "fixed", drop=drops.get(col, 0), footer=foot,
                             justify="left" if col == "role" else "right", min_width=12)
                      for col, foot in zip(COLUMNS, total, strict=True)],
                     title=title, box=box.SIMPLE, title_justify="left", show_edge=False, show_footer=True)
    for group in usage.groups:
        if not group.roles:
            continue
        if group.group == "operator":
            table.add_row(*_cells(group.roles[0].label, group.counts))
            continue
        table.add_row(*_cells(group.label, group.counts), style="bold")
        for role in group.roles:
            table.add_row(*_cells("  " + role.label, role.counts))
    return table.build(width)


def total_line(usage: TokenUsage) -> str:
    """One line: total prompt (cached share), output, calls."""
    t = usage.total
    cached = f" ({_share(t)} cached)" if t.prompt else ""
    return f"{t.prompt:,} prompt{cached}, {t.output:,} output, {t.calls:,} calls — all roles"


def no_billed_line(usage: TokenUsage, *, offline: bool) -> str:
    """What to say instead of a table of zeros."""
    calls = usage.total.calls
    if offline:
        return "none billed — offline model, no model service was called"
    if calls:
        return f"none billed — {counted(calls, 'model call', sep=',')}, none answered"
    return "none billed — no model calls"


def footnote(usage: TokenUsage) -> list[str]:
    """Short lines (the console does not wrap): what output and calls mean, failed attempts."""
    lines = [f"output = {OUTPUT_IS} · calls = HTTP attempts, retries included"]
    failed = usage.total.failed_calls
    if failed:
        lines.append(f"{counted(failed, 'failed attempt', sep=',')} included, "
                     "with the tokens the service billed")
    return lines


def print_table(console: Console, usage: TokenUsage) -> None:
    """The table and its footnote lines."""
    console.print(token_table(usage, width=console.width))
    for line in footnote(usage):
        console.print(f"[dim]{escape(line)}[/]", soft_wrap=False)


def print_tokens(console: Console, usage: TokenUsage, *, offline: bool) -> None:
    """The table, or the one line that says nothing was billed (never a table of zeros)."""
    if usage.billed:
        print_table(console, usage)
    else:
        console.print(f"tokens: {no_billed_line(usage, offline=offline)}", soft_wrap=False)
