"""Rich tables that fit the terminal, down to 80 columns and narrower.

Every table of the CLI is declared as :class:`Column` specs and rows, then laid out for the
console's width (:meth:`FitTable.build`):

* ``id`` columns (session ids, task ids, serials) are never wrapped, folded or cut: ``no_wrap``
  and ``min_width`` = the longest id.
* ``fixed`` columns (statuses, numbers, times) are short and shown whole, on one line.
* ``label`` columns (model labels, targets, apps, figures) are cut with an ellipsis to the room
  that is left, never wrapped; ``path`` columns are cut at the front (``…/bench-notes.yaml``),
  so the file name stays visible.
* Secondary columns (``drop`` > 0) are left out, highest ``drop`` first, while the table would
  not fit with every label at its ``min_width``.

Cells are plain text (never Rich markup: device and model text is shown as is) or
:class:`rich.text.Text` for styled cells. ``--json`` output never goes through here.

List commands print through :func:`print_table`: on a terminal the laid-out table, and when stdout
is not a terminal (a pipe, a file) or with ``--plain``, :func:`plain_rows`: one tab-separated
line per row, every column in declared order, no header, nothing cut — so
``artemis sessions list | head -1`` is a session and ``cut -f1`` its id. Listings use the borderless
:meth:`FitTable.listing` layout (two spaces between columns), which leaves the most room at 80
and 60 columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

if TYPE_CHECKING:
    from rich.box import Box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

Kind = Literal["id", "fixed", "label", "path"]
Justify = Literal["left", "center", "right"]

#: ``--plain`` of every list command.
PlainOpt = Annotated[bool, typer.Option(
    "--plain", help="Tab-separated rows, no header, every column (the default when stdout is not a terminal).")]

ELLIPSIS = "…"
#: The narrowest a label column is shown before secondary columns are dropped for it.
LABEL_MIN_WIDTH = 10


@dataclass(frozen=True)
class Column:
    """One column: its header, how its cells may be shown, and when it is left out.

    ``drop`` 0 means always shown; a higher number is dropped earlier when the table is too wide.
    ``min_width`` is, for a label or path column, the narrowest worth showing."""

    header: str
    kind: Kind = "fixed"
    drop: int = 0
    justify: Justify = "left"
    style: str | None = None
    min_width: int = LABEL_MIN_WIDTH
    footer: str = ""


def cell_width(text: str) -> int:
    """Terminal cells of the widest line of ``text``."""
    from rich.cells import cell_len

    return max((cell_len(line) for line in text.splitlines()), default=0)


def one_line(text: str) -> str:
    """Line breaks (and the blanks around them) become one space; indentation stays."""
    if "\n" not in text and "\r" not in text:
        return text
    first, *rest = text.splitlines()
    return " ".join([first.rstrip(), *(part.strip() for part in rest)]).rstrip()


def ellipsize(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` terminal cells with a trailing ellipsis."""
    from rich.cells import cell_len, set_cell_size

    text = one_line(text)
    if cell_len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    return set_cell_size(text, width - 1).rstrip() + ELLIPSIS


def ellipsize_front(text: str, width: int) -> str:
    """``text`` cut to ``width`` cells at the front: ``…/tasks/bench-notes.yaml``."""
    from rich.cells import cell_len

    text = one_line(text)
    if cell_len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    kept = ""
    for ch in reversed(text):
        if cell_len(kept) + cell_len(ch) > width - 1:
            break
        kept = ch + kept
    return ELLIPSIS + kept


def _fill(items: list[int], wants: dict[int, int], room: int) -> dict[int, int]:
    """Share ``room`` among ``items``, none getting more than it wants: the smallest wants are
    met first and what they leave flows to the rest (water-filling)."""
    given: dict[int, int] = {}
    order = sorted(items, key=lambda i: wants[i])
    for n, i in enumerate(order):
        share = max(room, 0) // (len(order) - n)
        given[i] = max(0, min(wants[i], share))
        room -= given[i]
    return given


def _plain(cell: str | Text) -> str:
    return cell if isinstance(cell, str) else cell.plain


class FitTable:
    """Columns and rows, laid out for a width by :meth:`build`."""

    def __init__(self, columns: Sequence[Column], *, title: str | None = None, caption: str | None = None,
                 box: Box | Literal["default"] | None = "default", show_edge: bool = True,
                 show_header: bool = True, show_footer: bool = False, pad_edge: bool = True,
                 **table_options: Any) -> None:
        self.columns = list(columns)
        self.pad_edge = pad_edge
        self.title = title
        self.caption = caption
        self.box = box
        self.show_edge = show_edge
        self.show_header = show_header
        self.show_footer = show_footer
        self.table_options = table_options
        self.rows: list[tuple[list[str | Text], str | None]] = []

    @classmethod
    def listing(cls, columns: Sequence[Column], **options: Any) -> FitTable:
        """A list command's table: no borders, two spaces between columns, a bold header."""
        return cls(columns, box=None, pad_edge=False, **options)

    def add_row(self, *cells: str | Text, style: str | None = None) -> None:
        if len(cells) != len(self.columns):
            raise ValueError(f"{len(cells)} cells for {len(self.columns)} columns")
        self.rows.append((list(cells), style))

    # -- layout ------------------------------------------------------------------------------------

    def _box(self) -> Box | None:
        if self.box == "default":
            from rich import box

            return box.HEAVY_HEAD
        return self.box

    def overhead(self, n: int) -> int:
        """Cells a table of ``n`` columns spends on borders, dividers and padding (one space each side)."""
        has_box = self._box() is not None
        padding = 2 * n - (2 if n and not self.pad_edge else 0)
        return (2 if has_box and self.show_edge else 0) + (max(n - 1, 0) if has_box else 0) + padding

    def natural_widths(self) -> list[int]:
        """Each column's width with nothing cut: its widest cell, header or footer."""
        widths = []
        for i, col in enumerate(self.columns):
            texts = [_plain(cells[i]) for cells, _ in self.rows]
            if col.kind in ("label", "path"):
                texts = [one_line(t) for t in texts]
            if self.show_header:
                texts.append(col.header)
            if self.show_footer:
                texts.append(col.footer)
            widths.append(max((cell_width(t) for t in texts), default=0))
        return widths

    def layout(self, width: int | None) -> tuple[list[int], dict[int, int]]:
        """The columns shown (indexes) and the width of each label/path column among them."""
        natural = self.natural_widths()
        kept = list(range(len(self.columns)))
        cuttable = {"label", "path"}

        def need(shown: list[int]) -> int:
            return self.overhead(len(shown)) + sum(
                min(natural[i], self.columns[i].min_width) if self.columns[i].kind in cuttable else natural[i]
                for i in shown)

        if width is None:
            return kept, {i: natural[i] for i in kept if self.columns[i].kind in cuttable}
        droppable = sorted((i for i in kept if self.columns[i].drop > 0),
                           key=lambda i: (-self.columns[i].drop, -i))
        while need(kept) > width and droppable:
            kept.remove(droppable.pop(0))
        labels = [i for i in kept if self.columns[i].kind in cuttable]
        room = width - self.overhead(len(kept)) - sum(
            natural[i] for i in kept if self.columns[i].kind not in cuttable)
        # Every label its minimum first (fair shares when even that does not fit). Then the labels
        # that need no more than a fair share of what is left are shown whole (smallest first),
        # and the rest goes to the remaining labels in order of importance (drop 0 first).
        floors = {i: min(natural[i], self.columns[i].min_width) for i in labels}
        widths = _fill(labels, floors, room)
        room -= sum(widths.values())
        wants = {i: natural[i] - widths[i] for i in labels}
        pending = sorted(labels, key=lambda i: wants[i])
        while pending and wants[pending[0]] <= max(room, 0) // len(pending):
            i = pending.pop(0)
            widths[i] += wants[i]
            room -= wants[i]
        for i in sorted(pending, key=lambda i: (self.columns[i].drop, i)):
            more = max(0, min(wants[i], room))
            widths[i] += more
            room -= more
        return kept, {i: max(1, w) for i, w in widths.items()}

    def build(self, width: int | None) -> Table:
        """A Rich table of the columns that fit ``width`` (None: every column, nothing cut)."""
        from rich.table import Table
        from rich.text import Text

        kept, label_widths = self.layout(width)
        natural = self.natural_widths()
        table = Table(title=self.title, caption=self.caption, box=self._box(), show_edge=self.show_edge,
                      show_header=self.show_header, show_footer=self.show_footer, pad_edge=self.pad_edge,
                      **self.table_options)
        for i in kept:
            col = self.columns[i]
            if col.kind in ("id", "fixed"):  # shown whole: an id is never cut, a status never "succeed…"
                table.add_column(col.header, footer=col.footer, justify=col.justify, style=col.style,
                                 no_wrap=True, min_width=natural[i])
            else:
                w = label_widths[i]
                table.add_column(ellipsize(col.header, w), footer=ellipsize(col.footer, w), justify=col.justify,
                                 style=col.style, no_wrap=True, overflow="ellipsis", max_width=w)
        for cells, style in self.rows:
            shown: list[str | Text] = []
            for i in kept:
                cell, kind = cells[i], self.columns[i].kind
                if kind == "path":
                    cell = ellipsize_front(_plain(cell), label_widths[i])
                elif kind == "label":
                    cell = Text(ellipsize(cell, label_widths[i])) if isinstance(cell, str) else cell
                shown.append(Text(cell) if isinstance(cell, str) else cell)
            table.add_row(*shown, style=style)
        return table



def _plain_cell(cell: str | Text) -> str:
    return " ".join(_plain(cell).replace("\t", " ").split("\n")).replace("\r", " ")


def plain_rows(table: FitTable) -> list[str]:
    """Every row as one line of tab-separated cells (all columns, nothing cut, no header)."""
    return ["\t".join(_plain_cell(c) for c in cells) for cells, _ in table.rows]


def wants_plain(plain: bool = False, console: Console | None = None) -> bool:
    """Plain rows: asked for with ``--plain``, or stdout is not a terminal."""
    from artemis_cli.cli.console import out

    return plain or not (console or out()).is_terminal


def print_table(table: FitTable, *, plain: bool = False, console: Console | None = None) -> None:
    """A list command's rows: the table laid out for the terminal, or :func:`plain_rows` for a
    script (see the module doc). A closed stdout ends the command quietly (cli/app)."""
    from artemis_cli.cli.console import out, write_out

    console = console or out()
    if wants_plain(plain, console):
        write_out("".join(row + "\n" for row in plain_rows(table)))
    else:
        console.print(table.build(console.width))


def note_console(plain: bool = False) -> Console:
    """Where a list command's notes go ("No sessions yet", hints): stdout beside a table, stderr
    beside plain rows (a script reads only rows from stdout)."""
    from artemis_cli.cli.console import err, out

    return err() if wants_plain(plain) else out()
