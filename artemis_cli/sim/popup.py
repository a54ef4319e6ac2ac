"""The promotion pop-up and its seeded schedule."""

from __future__ import annotations

import random
from dataclasses import dataclass

from artemis_cli.sim.layout import LayoutOptions, Ui, UiState
from artemis_cli.sim.widgets import Action, Window

PROMO_PACKAGE = "com.artemis.promo"
SHOP_GAP = (8, 14)  # actions inside the Shop between pop-ups (inclusive range)
OTHER_GAP = (30, 50)  # actions in other apps (not the launcher) between pop-ups
STORM_GAP = 3  # popup_storm: every 3 actions, anywhere


@dataclass
class PopupSchedule:
    """Counts actions per area; when a count reaches its seeded gap the pop-up shows."""

    seed: int
    enabled: bool = True
    storm: bool = False

    def __post_init__(self) -> None:
        self.rng = random.Random(f"artemis-sim-popup|{self.seed}")
        self.shop_count = 0
        self.other_count = 0
        self.shop_gap = self.rng.randint(*SHOP_GAP)
        self.other_gap = self.rng.randint(*OTHER_GAP)
        self.shown = 0

    def after_action(self, foreground: str, *, visible: bool) -> bool:
        """Record one action; True when the pop-up must appear now."""
        if not self.enabled or visible:
            return False
        if self.storm:
            self.other_count += 1
            if self.other_count >= STORM_GAP:
                self.other_count = 0
                self.shown += 1
                return True
            return False
        if foreground == "com.artemis.shop":
            self.shop_count += 1
            if self.shop_count >= self.shop_gap:
                self.shop_count, self.shop_gap = 0, self.rng.randint(*SHOP_GAP)
                self.shown += 1
                return True
        elif foreground != "com.android.launcher3":
            self.other_count += 1
            if self.other_count >= self.other_gap:
                self.other_count, self.other_gap = 0, self.rng.randint(*OTHER_GAP)
                self.shown += 1
                return True
        return False


def popup_window(width: int, height: int, opts: LayoutOptions, dismiss: Action, view: Action) -> Window:
    ui = Ui(PROMO_PACKAGE, width, height, opts, UiState())
    r = ui.dialog_rect(560, y_center=0.45)
    body = [ui.text((r[0] + ui.px(60), r[1] + ui.px(150), r[2] - ui.px(60), r[1] + ui.px(350)),
                    "Get 20% off your next order in the Shop.\nOffer ends today.", size=42, color="muted",
                    rid="promo_message")]
    root = ui.dialog(r, "Special offer!", body, [("No thanks", "promo_dismiss", dismiss),
                                                 ("View offer", "promo_view", view)])
    title = next(w for w in root.walk() if w.rid == "android:id/alertTitle")
    title.rid = ui.rid("promo_title")
    return Window(PROMO_PACKAGE, root, modal=True)
