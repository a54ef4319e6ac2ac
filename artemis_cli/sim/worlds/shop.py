"""Shop (com.artemis.shop): login, a long catalogue, cart, checkout."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from artemis_cli.sim import widgets as W
from artemis_cli.sim.layout import Ui
from artemis_cli.sim.widgets import Widget, Window
from artemis_cli.sim.worlds.base import App, AppContext, Row

USERNAME = "demo"
PASSWORD = "artemis123"

PRODUCTS: list[tuple[str, int]] = [  # name, price in cents; product id = index + 1
    ("Wireless Mouse", 2499), ("Mechanical Keyboard", 8999), ("USB-C Cable", 999), ("Phone Case", 1499),
    ("Screen Protector", 799), ("Bluetooth Speaker", 4599), ("Noise Cancelling Headphones", 19999),
    ("Smart Watch", 14999), ("Fitness Band", 3999), ("Power Bank", 2999), ("Wall Charger", 1999),
    ("Car Mount", 1299), ("Laptop Stand", 3499), ("Webcam", 5999), ("Microphone", 7499),
    ("Desk Lamp", 2799), ("Coffee Mug", 1199), ("Water Bottle", 1599), ("Backpack", 4999),
    ("Notebook", 499), ("Gel Pens", 699), ("Sticky Notes", 399), ("Desk Organizer", 1899),
    ("Monitor Light", 3999), ("HDMI Adapter", 1799), ("SD Card 128GB", 2199), ("USB Flash Drive", 1299),
    ("External SSD", 10999), ("Tablet Sleeve", 2299), ("Stylus Pen", 2599), ("Earbuds", 5999),
    ("Gaming Controller", 5499), ("Mouse Pad", 899), ("Cable Organizer", 599), ("Tripod", 2499),
    ("Ring Light", 3299), ("Smart Plug", 1499), ("LED Strip", 2199), ("Alarm Clock", 1999),
    ("Travel Adapter", 2399), ("Sunglasses", 3499), ("Umbrella", 1699), ("Yoga Mat", 2999),
    ("Running Socks", 999), ("Lunch Box", 1399),
]


def money(cents: int) -> str:
    return f"${cents // 100}.{cents % 100:02d}"


def plain(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"


@dataclass
class Order:
    id: int
    number: str
    items: list[tuple[int, int]]  # (product id, quantity)

    def total(self) -> int:
        return sum(PRODUCTS[pid - 1][1] * q for pid, q in self.items)


class ShopApp(App):
    package = "com.artemis.shop"
    label = "Shop"

    def __init__(self, ctx: AppContext) -> None:
        self.user: str | None = None
        self.cart: dict[int, int] = {}  # product id -> quantity, insertion ordered
        self.orders: list[Order] = []
        self.liked: set[int] = set()  # double-tapping a product (not its button) likes it, again unlikes it
        super().__init__(ctx)

    def reset_ui(self) -> None:
        super().reset_ui()
        self.screen = "catalogue"  # login is shown whenever nobody is logged in
        self.last_order: int | None = None

    @property
    def current_screen(self) -> str:
        return "login" if self.user is None else self.screen

    def back(self) -> bool:
        if self.current_screen in ("cart", "confirmation"):
            self.screen = "catalogue"
            self.clear_focus()
            return True
        return False

    # -- actions ------------------------------------------------------------------------------
    def login(self) -> None:
        password = self.ctx.shop_password if self.ctx.shop_password is not None else PASSWORD
        if self.field("username").strip() == USERNAME and self.field("password") == password:
            self.user, self.error, self.screen = USERNAME, "", "catalogue"
            self.set_fields(username="", password="")
        else:
            self.error = "Wrong username or password"
            self.ui_state.fields["password"] = ""
            self.clear_focus()

    def logout(self) -> None:
        self.user = None
        self.screen = "catalogue"
        self.clear_focus()

    def add(self, pid: int, d: int = 1) -> None:
        q = self.cart.get(pid, 0) + d
        if q <= 0:
            self.cart.pop(pid, None)
        else:
            self.cart[pid] = q

    def count(self) -> int:
        return sum(self.cart.values())

    def total(self) -> int:
        return sum(PRODUCTS[pid - 1][1] * q for pid, q in self.cart.items())

    def checkout(self) -> None:
        if not self.cart:
            return
        oid = len(self.orders) + 1
        number = f"ART-{10000 + (self.ctx.seed % 5000) * 10 + oid}"
        self.orders.append(Order(oid, number, list(self.cart.items())))
        self.cart.clear()
        self.screen, self.last_order = "confirmation", oid

    # -- screens ------------------------------------------------------------------------------
    def build(self, ui: Ui) -> list[Window]:
        kids = {"login": self.login_screen, "catalogue": self.catalogue_screen, "cart": self.cart_screen,
                "confirmation": self.confirmation_screen}[self.current_screen](ui)
        return [self.window(ui, kids)]

    def login_screen(self, ui: Ui) -> list[Widget]:
        t = ui.content_top
        pad = ui.px(72)
        kids = [ui.app_bar("Shop"),
                ui.text((pad, t + ui.px(60), ui.w - pad, t + ui.px(200)), "Welcome back", size=72, rid="welcome"),
                ui.text((pad, t + ui.px(200), ui.w - pad, t + ui.px(280)), "Log in to continue shopping", size=40,
                        color="muted"),
                ui.edit((pad, t + ui.px(340), ui.w - pad, t + ui.px(490)), "username", "Username", rid="username"),
                ui.edit((pad, t + ui.px(530), ui.w - pad, t + ui.px(680)), "password", "Password", rid="password",
                        password=True),
                ui.button((pad, t + ui.px(740), ui.w - pad, t + ui.px(880)), "Log in", self.login, rid="login")]
        if self.error:
            kids.append(ui.text((pad, t + ui.px(900), ui.w - pad, t + ui.px(990)), self.error, size=40,
                                color="error", rid="error"))
        return kids

    def catalogue_screen(self, ui: Ui) -> list[Widget]:
        n = self.count()
        acts = ui.bar_actions([("Log out", "logout", "Log out", self.logout),
                               (f"Cart ({n})", "cart_button", f"Cart, {n} items", self._to_cart)])
        bar = ui.app_bar("Shop", actions=acts)
        rh = ui.px(220)
        rows: list[tuple[int, Callable[[int], Widget]]] = []
        for i, (name, price) in enumerate(PRODUCTS):
            rows.append((rh, partial(self.product_row, ui, h=rh, pid=i + 1, name=name, price=price)))
        return [bar, ui.vlist((0, ui.content_top, ui.w, ui.h), "catalogue", rows, rid="product_list")]

    def _to_cart(self) -> None:
        self.screen = "cart"
        self.ui_state.scroll.pop("cart", None)

    def product_row(self, ui: Ui, y: int, h: int, pid: int, name: str, price: int) -> Widget:
        pad = ui.px(48)
        bx = ui.w - pad - ui.px(330)
        liked = pid in self.liked
        name_right = bx - ui.px(200) if liked else bx - ui.px(20)
        kids = [ui.text((pad, y + ui.px(20), name_right, y + ui.px(110)), name, size=46, rid="product_name"),
                ui.text((pad, y + ui.px(110), ui.px(420), y + ui.px(190)), money(price), size=40, color="muted",
                        rid="product_price")]
        q = self.cart.get(pid, 0)
        if q:
            kids.append(ui.text((ui.px(420), y + ui.px(110), bx - ui.px(20), y + ui.px(190)), f"In cart: {q}",
                                size=36, color="accent", rid="product_in_cart"))
        if liked:
            kids.append(ui.text((name_right, y + ui.px(20), bx - ui.px(20), y + ui.px(110)), "Liked", size=36,
                                color="accent", rid="product_liked"))
        kids.append(ui.button((bx, y + ui.px(55), ui.w - pad, y + ui.px(165)), "Add to cart",
                              lambda: self.add(pid), rid="add_to_cart", desc=f"Add {name} to cart", size=38))
        return Widget(W.LINEAR, (0, y, ui.w, y + h), rid=ui.rid("product_item"), children=kids, kind="row",
                      on_double=lambda: self.liked.symmetric_difference_update({pid}))

    def cart_screen(self, ui: Ui) -> list[Widget]:
        bar = ui.app_bar("Cart", up=self.go_back)
        t = ui.content_top
        footer_h = ui.px(300)
        rh = ui.px(260)
        rows: list[tuple[int, Callable[[int], Widget]]] = []
        for pid, q in self.cart.items():
            rows.append((rh, partial(self.cart_row, ui, h=rh, pid=pid, q=q)))
        kids = [bar]
        if not rows:
            kids.append(ui.text((0, t + ui.px(100), ui.w, t + ui.px(220)), "Your cart is empty", align="center",
                                color="muted", rid="empty_view"))
        kids.append(ui.vlist((0, t, ui.w, ui.h - footer_h), "cart", rows, rid="cart_list"))
        fy = ui.h - footer_h
        pad = ui.px(48)
        kids.append(Widget(W.LINEAR, (0, fy, ui.w, ui.h), rid=ui.rid("cart_footer"), kind="footer", children=[
            ui.text((pad, fy + ui.px(20), ui.w - pad, fy + ui.px(110)), f"Total: {money(self.total())}", size=50,
                    rid="cart_total"),
            ui.button((pad, fy + ui.px(130), ui.w - pad, fy + ui.px(260)), "Checkout", self.checkout,
                      rid="checkout", enabled=bool(self.cart)),
        ]))
        return kids

    def cart_row(self, ui: Ui, y: int, h: int, pid: int, q: int) -> Widget:
        name, price = PRODUCTS[pid - 1]
        pad = ui.px(48)
        kids = [
            ui.text((pad, y + ui.px(20), ui.w - pad, y + ui.px(100)), name, size=46, rid="cart_item_name"),
            ui.text((pad, y + ui.px(100), ui.px(600), y + ui.px(160)), f"{money(price)} x {q} = {money(price * q)}",
                    size=36, color="muted", rid="cart_item_price"),
            ui.icon_button((pad, y + ui.px(160), pad + ui.px(110), y + ui.px(250)), f"Decrease quantity of {name}",
                           "minus", lambda: self.add(pid, -1), rid="decrease"),
            ui.text((pad + ui.px(120), y + ui.px(160), pad + ui.px(330), y + ui.px(250)), f"Qty: {q}", size=40,
                    align="center", rid="cart_item_quantity"),
            ui.icon_button((pad + ui.px(340), y + ui.px(160), pad + ui.px(450), y + ui.px(250)),
                           f"Increase quantity of {name}", "plus", lambda: self.add(pid, 1), rid="increase"),
            ui.button((ui.w - pad - ui.px(260), y + ui.px(160), ui.w - pad, y + ui.px(250)), "Remove",
                      lambda: self.add(pid, -q), rid="remove", desc=f"Remove {name}", flat=True, size=38),
        ]
        return Widget(W.LINEAR, (0, y, ui.w, y + h), rid=ui.rid("cart_item"), children=kids, kind="row")

    def confirmation_screen(self, ui: Ui) -> list[Widget]:
        o = next((o for o in self.orders if o.id == self.last_order), None)
        t = ui.content_top
        pad = ui.px(72)
        kids = [ui.app_bar("Order placed", up=self.go_back),
                ui.text((pad, t + ui.px(120), ui.w - pad, t + ui.px(260)), "Thank you for your order!", size=60,
                        align="center", rid="thanks")]
        if o is not None:
            kids += [ui.text((pad, t + ui.px(300), ui.w - pad, t + ui.px(400)), f"Order number: {o.number}",
                             size=48, align="center", rid="order_number"),
                     ui.text((pad, t + ui.px(400), ui.w - pad, t + ui.px(500)), f"Total: {money(o.total())}",
                             size=44, align="center", color="muted", rid="order_total")]
        kids.append(ui.button((pad, t + ui.px(600), ui.w - pad, t + ui.px(740)), "Continue shopping",
                              self._continue, rid="continue_shopping"))
        return kids

    def _continue(self) -> None:
        self.screen = "catalogue"

    def on_enter(self, key: str) -> None:
        if key == "username":
            self.ui_state.focus = "password"
        elif key == "password":
            self.clear_focus()
            self.login()

    def query(self, table: str) -> list[Row] | None:
        if table == "cart":
            return [{"_id": pid, "product": PRODUCTS[pid - 1][0], "price": plain(PRODUCTS[pid - 1][1]),
                     "quantity": q} for pid, q in self.cart.items()]
        if table == "orders":
            return [{"_id": o.id, "order_number": o.number, "items": sum(q for _, q in o.items),
                     "total": plain(o.total()),
                     "products": "; ".join(f"{PRODUCTS[p - 1][0]} x{q}" for p, q in o.items)} for o in self.orders]
        if table == "session":
            return [{"username": self.user, "logged_in": 1}] if self.user else []
        if table == "products":
            return [{"_id": i + 1, "name": n, "price": plain(p)} for i, (n, p) in enumerate(PRODUCTS)]
        return None

    def snapshot(self) -> dict[str, object]:
        return {"screen": self.current_screen, "user": self.user,
                "cart": {PRODUCTS[p - 1][0]: q for p, q in self.cart.items()},
                "orders": [o.number for o in self.orders], "error": self.error,
                **({"liked": [PRODUCTS[p - 1][0] for p in sorted(self.liked)]} if self.liked else {})}
