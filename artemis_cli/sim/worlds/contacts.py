"""Contacts (com.android.contacts): alphabetical list, search, create, details, edit, delete."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import partial

from artemis_cli.sim import widgets as W
from artemis_cli.sim.layout import Ui
from artemis_cli.sim.widgets import Widget, Window
from artemis_cli.sim.worlds.base import App, AppContext, Row

SEED_CONTACTS: list[tuple[str, str, str, str]] = [
    ("Alice", "Anderson", "+1 555-0101", "alice@example.com"),
    ("Ben", "Brooks", "+1 555-0102", "ben.brooks@example.com"),
    ("Carla", "Diaz", "+1 555-0103", "carla@example.com"),
    ("David", "Evans", "+1 555-0104", ""),
    ("Emma", "Fischer", "+1 555-0105", "emma.f@example.com"),
    ("Farid", "Haddad", "+1 555-0106", ""),
    ("Grace", "Ito", "+1 555-0107", "grace@example.com"),
    ("Hannah", "Jones", "+1 555-0108", ""),
    ("Ivan", "Kowalski", "+1 555-0109", "ivan.k@example.com"),
    ("Julia", "Lopez", "+1 555-0110", ""),
    ("Kenji", "Mori", "+1 555-0111", "kenji@example.com"),
    ("Laura", "Nguyen", "+1 555-0112", ""),
    ("Mohammed", "Okafor", "+1 555-0113", "m.okafor@example.com"),
    ("Nina", "Petrova", "+1 555-0114", ""),
    ("Oscar", "Quinn", "+1 555-0115", "oscar@example.com"),
]


@dataclass
class Contact:
    id: int
    first_name: str
    last_name: str
    phone: str = ""
    email: str = ""

    @property
    def display_name(self) -> str:
        return f"{self.first_name} {self.last_name}".strip()


class ContactsApp(App):
    package = "com.android.contacts"
    label = "Contacts"

    def __init__(self, ctx: AppContext) -> None:
        self.contacts = [Contact(i + 1, *c) for i, c in enumerate(SEED_CONTACTS)]
        self.next_id = len(self.contacts) + 1
        super().__init__(ctx)

    def reset_ui(self) -> None:
        super().reset_ui()
        self.screen = "list"  # list | details | edit
        self.current: int | None = None  # contact id for details/edit (None in edit = create)
        self.confirm_delete = False

    def back(self) -> bool:
        if self.confirm_delete:
            self.confirm_delete = False
            return True
        if self.screen == "edit" and self.current is not None:
            self.screen = "details"
        elif self.screen in ("details", "edit"):
            self.screen = "list"
        elif self.field("search"):
            self.ui_state.fields["search"] = ""
        else:
            return False
        self.clear_focus()
        self.error = ""
        return True

    def find(self, cid: int | None) -> Contact | None:
        return next((c for c in self.contacts if c.id == cid), None)

    def visible(self) -> list[Contact]:
        q = self.field("search").strip().lower()
        cs = sorted(self.contacts, key=lambda c: (c.display_name.lower(), c.id))
        if q:
            cs = [c for c in cs if q in c.display_name.lower() or q in c.phone.replace(" ", "").replace("-", "")]
        return cs

    # -- actions ------------------------------------------------------------------------------
    def open_details(self, cid: int) -> None:
        self.screen, self.current = "details", cid
        self.clear_focus()

    def open_editor(self, cid: int | None) -> None:
        c = self.find(cid)
        self.screen, self.current, self.error = "edit", cid, ""
        self.set_fields(first_name=c.first_name if c else "", last_name=c.last_name if c else "",
                        phone=c.phone if c else "", email=c.email if c else "")

    def save(self) -> None:
        f = self.ui_state.fields
        first, last = f.get("first_name", "").strip(), f.get("last_name", "").strip()
        if not first and not last:
            self.error = "Enter a name"
            return
        phone, email = f.get("phone", "").strip(), f.get("email", "").strip()
        c = self.find(self.current)
        if c is None:
            c = Contact(self.next_id, first, last, phone, email)
            self.next_id += 1
            self.contacts.append(c)
        else:
            c.first_name, c.last_name, c.phone, c.email = first, last, phone, email
        self.error = ""
        self.open_details(c.id)

    def delete(self) -> None:
        self.contacts = [c for c in self.contacts if c.id != self.current]
        self.confirm_delete = False
        self.screen, self.current = "list", None

    # -- screens ------------------------------------------------------------------------------
    def build(self, ui: Ui) -> list[Window]:
        if self.screen == "details" and self.find(self.current) is None:
            self.screen = "list"
        kids = {"list": self.list_screen, "details": self.details_screen, "edit": self.edit_screen}[self.screen](ui)
        wins = [self.window(ui, kids)]
        if self.confirm_delete:
            r = ui.dialog_rect(420)
            body = [ui.text((r[0] + ui.px(60), r[1] + ui.px(40), r[2] - ui.px(60), r[1] + ui.px(200)),
                            "Delete this contact?", size=50, rid="android:id/message")]
            wins.append(self.dialog_window(ui.dialog(r, "", body, [
                ("Cancel", "android:id/button2", self.go_back),
                ("Delete", "android:id/button1", self.delete)])))
        return wins

    def list_screen(self, ui: Ui) -> list[Widget]:
        bar = ui.app_bar("Contacts")
        t = ui.content_top
        search = ui.edit((ui.px(36), t + ui.px(12), ui.w - ui.px(36), t + ui.px(148)), "search", "Search contacts",
                         rid="search_field")
        rh = ui.px(self.ctx.opts.row)
        rows: list[tuple[int, Callable[[int], Widget]]] = []
        for c in self.visible():
            rows.append((rh, partial(self.contact_row, ui, h=rh, c=c)))
        kids = [bar, search]
        lt = t + ui.px(170)
        if not rows:
            kids.append(ui.text((0, lt + ui.px(60), ui.w, lt + ui.px(180)), "No contacts", align="center",
                                color="muted", rid="empty_view"))
        kids.append(ui.vlist((0, lt, ui.w, ui.h), "contacts", rows, rid="contact_list",
                             bottom_pad=ui.fab_clearance))
        kids.append(ui.fab("Create contact", lambda: self.open_editor(None), rid="floating_action_button"))
        return kids

    def contact_row(self, ui: Ui, y: int, h: int, c: Contact) -> Widget:
        pad = ui.px(48)
        avatar = Widget(W.IMAGE_VIEW, (pad, y + ui.px(24), pad + h - ui.px(48), y + h - ui.px(24)),
                        rid=ui.rid("photo"), kind="avatar", text="", display=c.display_name[:1].upper())
        name = ui.text((pad + h, y, ui.w - pad, y + h), c.display_name, size=46, rid="cliv_name_textview")
        return Widget(W.VIEW_GROUP, (0, y, ui.w, y + h), rid=ui.rid("contact_row"), desc=c.display_name,
                      children=[avatar, name], clickable=True, focusable=True, kind="row",
                      on_tap=lambda: self.open_details(c.id))

    def details_screen(self, ui: Ui) -> list[Widget]:
        c = self.find(self.current)
        assert c is not None
        acts = ui.bar_actions([("Delete", "menu_delete", "Delete", self._ask_delete),
                               ("Edit", "menu_edit", "Edit contact", lambda: self.open_editor(c.id))])
        bar = ui.app_bar("", up=self.go_back, actions=acts)
        t = ui.content_top
        kids = [bar,
                Widget(W.IMAGE_VIEW, (ui.w // 2 - ui.px(130), t + ui.px(40), ui.w // 2 + ui.px(130), t + ui.px(300)),
                       rid=ui.rid("photo"), kind="avatar", display=c.display_name[:1].upper()),
                ui.text((ui.px(48), t + ui.px(330), ui.w - ui.px(48), t + ui.px(450)), c.display_name, size=66,
                        align="center", rid="large_title")]
        y = t + ui.px(500)
        h2 = ui.px(self.ctx.opts.row_two_line)
        for label, value, rid in [("Phone", c.phone, "phone_row"), ("Email", c.email, "email_row")]:
            if value:
                kids.append(ui.row(y, h2, value, summary=label, rid=rid))
                y += h2
        return kids

    def _ask_delete(self) -> None:
        self.confirm_delete = True
        self.clear_focus()

    def edit_screen(self, ui: Ui) -> list[Widget]:
        title = "Create contact" if self.current is None else "Edit contact"
        acts = ui.bar_actions([("Save", "editor_menu_save_button", "Save", self.save)])
        bar = ui.app_bar(title, up=self.go_back, actions=acts)
        y = ui.content_top + ui.px(40)
        kids = [bar]
        for key, hint in [("first_name", "First name"), ("last_name", "Last name"), ("phone", "Phone"),
                          ("email", "Email")]:
            kids.append(ui.edit((ui.px(48), y, ui.w - ui.px(48), y + ui.px(150)), key, hint, rid=key))
            y += ui.px(190)
        if self.error:
            kids.append(ui.text((ui.px(48), y, ui.w - ui.px(48), y + ui.px(90)), self.error, color="error",
                                size=40, rid="error"))
        return kids

    def on_enter(self, key: str) -> None:
        order = ["first_name", "last_name", "phone", "email"]
        if key in order[:-1]:
            self.ui_state.focus = order[order.index(key) + 1]
        else:
            self.clear_focus()

    def query(self, table: str) -> list[Row] | None:
        if table not in ("contacts", "data", "raw_contacts"):
            return None
        return [{"_id": c.id, "display_name": c.display_name, "first_name": c.first_name,
                 "last_name": c.last_name, "phone": c.phone, "email": c.email}
                for c in sorted(self.contacts, key=lambda c: c.id)]

    def snapshot(self) -> dict[str, object]:
        return {"screen": self.screen, "current": self.current, "confirm_delete": self.confirm_delete,
                "search": self.field("search"), "contacts": [asdict(c) for c in self.contacts]}
