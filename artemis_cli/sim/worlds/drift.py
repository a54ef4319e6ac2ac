"""The ``drift`` world: the default world after an update of the Shop changed its flows.

A replay of a default-world recording of a Shop task (``tasks/shop-office-order.yaml``) diverges
here for real -- no retarget by resource-id or text finds the recorded element -- while a person
or a model can still tell what to do.  Every other app, the data, the seed behaviour and the
promotion pop-up are the default world's.  The Shop (:class:`DriftShopApp`) changed four things:

- **a first-run dialog**: the app's first launch after setup shows "What's new" in its own modal
  window over the login screen (the fields under it are not tappable) until **Got it**
  (``android:id/button1``) or back dismisses it; ``am force-stop`` does not bring it back;
- **the cart button moved into an overflow menu**: the catalogue's app bar has **Log out** and an
  icon button with content-desc ``More options`` (no id, as Android's own overflow); it opens a
  pop-up menu window whose item **Cart (N)** (``android:id/title``) opens the cart; a touch
  outside the menu, or back, closes it;
- **a renamed button**: the cart's **Checkout** (``checkout``) is **Proceed to checkout**
  (``proceed_to_checkout``);
- **a new confirmation screen**: "Confirm your order" (item count and ``review_total``) with
  **Place order** (``place_order``, which places the order) and **Back to cart**
  (``back_to_cart``) between the cart and "Thank you for your order!".
"""

from __future__ import annotations

from artemis_cli.sim import widgets as W
from artemis_cli.sim.layout import Ui
from artemis_cli.sim.widgets import Widget, Window
from artemis_cli.sim.worlds.base import AppContext
from artemis_cli.sim.worlds.shop import ShopApp, money

WHATS_NEW_TITLE = "What's new"
WHATS_NEW_TEXT = "Your cart now lives in the More options\nmenu, and you can review your order\nbefore you place it."
OVERFLOW_DESC = "More options"


class DriftShopApp(ShopApp):
    """The Shop after its update: first-run dialog, overflow menu, renamed button, review screen."""

    def __init__(self, ctx: AppContext) -> None:
        self.whats_new_seen = False  # app data: survives a force-stop, not a fresh phone
        super().__init__(ctx)

    def reset_ui(self) -> None:
        super().reset_ui()
        self.menu_open = False

    def back(self) -> bool:
        if not self.whats_new_seen:
            self.whats_new_seen = True
            return True
        if self.menu_open:
            self.menu_open = False
            return True
        if self.current_screen == "review":
            self.screen = "cart"
            return True
        return super().back()

    # -- actions ------------------------------------------------------------------------------
    def dismiss_whats_new(self) -> None:
        self.whats_new_seen = True

    def open_menu(self) -> None:
        self.menu_open = True

    def close_menu(self) -> None:
        self.menu_open = False

    def logout(self) -> None:
        super().logout()
        self.menu_open = False

    def _to_cart(self) -> None:
        self.menu_open = False
        super()._to_cart()

    def _to_review(self) -> None:
        if self.cart:
            self.screen = "review"

    # -- screens ------------------------------------------------------------------------------
    def build(self, ui: Ui) -> list[Window]:
        screens = {"login": self.login_screen, "catalogue": self.catalogue_screen, "cart": self.cart_screen,
                   "review": self.review_screen, "confirmation": self.confirmation_screen}
        wins = [self.window(ui, screens[self.current_screen](ui))]
        if self.menu_open and self.current_screen == "catalogue":
            wins.append(self.menu_window(ui))
        if not self.whats_new_seen:
            r = ui.dialog_rect(560)
            body = [ui.text((r[0] + ui.px(60), r[1] + ui.px(150), r[2] - ui.px(60), r[1] + ui.px(450)),
                            WHATS_NEW_TEXT, size=42, color="muted",
                            rid="android:id/message")]
            wins.append(self.dialog_window(ui.dialog(r, WHATS_NEW_TITLE, body, [
                ("Got it", "android:id/button1", self.dismiss_whats_new)])))
        return wins

    def catalogue_screen(self, ui: Ui) -> list[Widget]:
        kids = super().catalogue_screen(ui)
        t, h = ui.top, ui.px(ui.opts.app_bar)
        right = ui.w - ui.px(12)
        more = ui.icon_button((right - ui.px(132), t + ui.px(18), right, t + h - ui.px(18)), OVERFLOW_DESC,
                              "more", self.open_menu)
        logout = ui.bar_actions([("Log out", "logout", "Log out", self.logout)])[0]
        dx = more.bounds[0] - ui.px(16) - logout.bounds[2]
        lb = logout.bounds
        logout.bounds = (lb[0] + dx, lb[1], lb[2] + dx, lb[3])
        kids[0] = ui.app_bar("Shop", actions=[logout, more])
        return kids

    def menu_window(self, ui: Ui) -> Window:
        """Android's overflow pop-up menu: a card at the top right, one row per item."""
        n = self.count()
        item_h = ui.px(144)
        r = (ui.w - ui.px(24) - ui.px(560), ui.top + ui.px(24), ui.w - ui.px(24), ui.top + ui.px(24) + item_h)
        item = ui.container(r, [ui.text((r[0] + ui.px(48), r[1], r[2] - ui.px(24), r[3]), f"Cart ({n})", size=44,
                                        rid="android:id/title")], on_tap=self._to_cart)
        root = Widget(W.FRAME, r, children=[Widget(W.LIST_VIEW, r, children=[item])], kind="dialog")
        return Window(self.package, root, dismiss=self.close_menu)

    def cart_screen(self, ui: Ui) -> list[Widget]:
        kids = super().cart_screen(ui)
        for w in kids[-1].walk():  # the footer's Checkout button, renamed with a new id
            if w.rid == ui.rid("checkout"):
                w.text, w.rid, w.on_tap = "Proceed to checkout", ui.rid("proceed_to_checkout"), self._to_review
        return kids

    def review_screen(self, ui: Ui) -> list[Widget]:
        t = ui.content_top
        pad = ui.px(72)
        return [ui.app_bar("Confirm your order", up=self.go_back),
                ui.text((pad, t + ui.px(120), ui.w - pad, t + ui.px(240)), f"{self.count()} item" + ("" if self.count() == 1 else "s"), size=52,
                        align="center", rid="review_items"),
                ui.text((pad, t + ui.px(240), ui.w - pad, t + ui.px(340)), f"Total: {money(self.total())}", size=48,
                        align="center", rid="review_total"),
                ui.button((pad, t + ui.px(440), ui.w - pad, t + ui.px(580)), "Place order", self.checkout,
                          rid="place_order"),
                ui.button((pad, t + ui.px(620), ui.w - pad, t + ui.px(760)), "Back to cart", self.go_back,
                          rid="back_to_cart", flat=True)]

    def snapshot(self) -> dict[str, object]:
        return {**super().snapshot(), "whats_new_seen": self.whats_new_seen, "menu_open": self.menu_open}
