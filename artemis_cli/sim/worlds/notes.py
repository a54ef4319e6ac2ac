"""Notes (com.artemis.notes): list, new note, view/edit, delete; a note is reordered by dragging it
(press, hold, move: a swipe scrolls the list instead)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass

from artemis_cli.sim.layout import Ui
from artemis_cli.sim.widgets import Widget, Window
from artemis_cli.sim.worlds.base import App, AppContext, Row

SEED_NOTES = [
    ("Groceries", "Milk, eggs, bread, coffee"),
    ("Meeting notes", "Discuss Q3 roadmap with the team"),
    ("Ideas", "Write a blog post about Android automation"),
]


@dataclass
class Note:
    id: int
    title: str
    body: str


class NotesApp(App):
    package = "com.artemis.notes"
    label = "Notes"

    def __init__(self, ctx: AppContext) -> None:
        self.notes = [Note(i + 1, t, b) for i, (t, b) in enumerate(SEED_NOTES)]
        self.next_id = len(self.notes) + 1
        super().__init__(ctx)

    def reset_ui(self) -> None:
        super().reset_ui()
        self.screen = "list"  # list | edit
        self.current: int | None = None
        self.confirm_delete = False

    def back(self) -> bool:
        if self.confirm_delete:
            self.confirm_delete = False
            return True
        if self.screen == "edit":
            self.screen, self.current = "list", None  # unsaved changes are discarded
            self.clear_focus()
            self.error = ""
            return True
        return False

    def find(self, nid: int | None) -> Note | None:
        return next((n for n in self.notes if n.id == nid), None)

    def open_editor(self, nid: int | None) -> None:
        n = self.find(nid)
        self.screen, self.current, self.error = "edit", nid, ""
        self.set_fields(title=n.title if n else "", body=n.body if n else "")

    def save(self) -> None:
        title, body = self.field("title").strip(), self.field("body").rstrip()
        if not title and not body:
            self.error = "Note is empty"
            return
        n = self.find(self.current)
        if n is None:
            self.notes.append(Note(self.next_id, title, body))
            self.next_id += 1
        else:
            n.title, n.body = title, body
        self.screen, self.current, self.error = "list", None, ""
        self.clear_focus()

    def delete(self) -> None:
        self.notes = [n for n in self.notes if n.id != self.current]
        self.confirm_delete = False
        self.screen, self.current = "list", None
        self.clear_focus()

    def build(self, ui: Ui) -> list[Window]:
        kids = self.list_screen(ui) if self.screen == "list" else self.edit_screen(ui)
        wins = [self.window(ui, kids)]
        if self.confirm_delete:
            r = ui.dialog_rect(420)
            body = [ui.text((r[0] + ui.px(60), r[1] + ui.px(40), r[2] - ui.px(60), r[1] + ui.px(200)),
                            "Delete this note?", size=50, rid="android:id/message")]
            wins.append(self.dialog_window(ui.dialog(r, "", body, [
                ("Cancel", "android:id/button2", self.go_back),
                ("Delete", "android:id/button1", self.delete)])))
        return wins

    def list_screen(self, ui: Ui) -> list[Widget]:
        bar = ui.app_bar("Notes")
        t = ui.content_top
        rh = ui.px(self.ctx.opts.row_two_line)
        rows: list[tuple[int, Callable[[int], Widget]]] = []
        for n in self.notes:
            def make(y: int, n: Note = n) -> Widget:
                preview = n.body.replace("\n", " ")
                row = ui.row(y, rh, n.title or "(untitled)", summary=preview or " ", rid="note_item",
                             on_tap=lambda: self.open_editor(n.id), desc=n.title)
                row.on_drag = lambda _x, y2, n=n: self.move_note(n.id, (y2 - t + self.ui_state.scroll.get("notes", 0)) // rh)
                return row
            rows.append((rh, make))
        kids = [bar]
        if not rows:
            kids.append(ui.text((0, t + ui.px(100), ui.w, t + ui.px(220)), "No notes yet", align="center",
                                color="muted", rid="empty_view"))
        kids.append(ui.vlist((0, t, ui.w, ui.h), "notes", rows, rid="notes_list", bottom_pad=ui.fab_clearance))
        kids.append(ui.fab("New note", lambda: self.open_editor(None), rid="new_note", label="New note"))
        return kids

    def move_note(self, nid: int, slot: int) -> None:
        """A note dropped on row ``slot`` of the list (clamped) takes that place."""
        n = self.find(nid)
        if n is None:
            return
        self.notes.remove(n)
        self.notes.insert(max(0, min(slot, len(self.notes))), n)

    def edit_screen(self, ui: Ui) -> list[Widget]:
        specs: list[tuple[str, str, str, Callable[[], None] | None]] = [("Save", "save", "Save note", self.save)]
        if self.current is not None:
            specs.append(("Delete", "delete", "Delete note", self._ask_delete))
        bar = ui.app_bar("Edit note" if self.current else "New note", up=self.go_back,
                         actions=ui.bar_actions(specs))
        t = ui.content_top
        kids = [bar,
                ui.edit((ui.px(48), t + ui.px(40), ui.w - ui.px(48), t + ui.px(190)), "title", "Title", rid="title",
                        size=52),
                ui.edit((ui.px(48), t + ui.px(230), ui.w - ui.px(48), t + ui.px(1000)), "body", "Note", rid="body",
                        multiline=True)]
        if self.error:
            kids.append(ui.text((ui.px(48), t + ui.px(1020), ui.w - ui.px(48), t + ui.px(1110)), self.error,
                                color="error", size=40, rid="error"))
        return kids

    def _ask_delete(self) -> None:
        self.confirm_delete = True
        self.clear_focus()

    def on_enter(self, key: str) -> None:
        if key == "title":
            self.ui_state.focus = "body"
        elif key == "body":
            self.ui_state.fields["body"] = self.field("body") + "\n"

    def query(self, table: str) -> list[Row] | None:
        if table != "notes":
            return None
        return [{"_id": n.id, "title": n.title, "body": n.body} for n in self.notes]

    def snapshot(self) -> dict[str, object]:
        return {"screen": self.screen, "current": self.current, "notes": [asdict(n) for n in self.notes]}
