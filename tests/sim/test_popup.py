from __future__ import annotations

from sim_helpers import login, nodes, tap

from artemis_cli.sim import SimPhone


def _popup_steps(seed: int, popups: bool = True, actions: int = 40) -> list[int]:
    p = SimPhone(seed=seed, popups=popups)
    login(p)
    seen = []
    for i in range(actions):
        if p.snapshot_state()["popup_visible"]:
            seen.append(i)
            tap(p, text="No thanks")
        else:
            p.swipe(540, 1500, 540, 1300)
    return seen


def test_popup_schedule_is_deterministic_per_seed() -> None:
    a = _popup_steps(3)
    assert a and a == _popup_steps(3)
    assert len(a) >= 2


def test_popups_false_disables_it() -> None:
    assert _popup_steps(3, popups=False) == []


def test_popup_is_the_top_app_window_and_back_dismisses() -> None:
    p = SimPhone(seed=1)
    login(p)
    while not p.snapshot_state()["popup_visible"]:
        p.swipe(540, 1500, 540, 1300)
    packages = [w.package for w in p.windows()]  # drawing order: shop, pop-up, status bar, nav bar
    assert packages == ["com.artemis.shop", "com.artemis.promo", "com.android.systemui", "com.android.systemui"]
    assert 'package="com.artemis.promo"' in p.hierarchy()
    xml = p.dump_xml()  # `uiautomator dump` in the shell: the active window, the pop-up alone
    assert 'package="com.artemis.promo"' in xml and 'package="com.artemis.shop"' not in xml
    assert nodes(p, text="Special offer!") and nodes(p, text="View offer")
    p.key("back")
    assert not nodes(p, text="Special offer!")
    assert p.current_app() == "com.artemis.shop"


def test_view_offer_opens_shop_and_popup_storm() -> None:
    p = SimPhone(seed=2, faults="popup_storm")
    p.launch("com.android.settings")
    p.key("back")
    p.launch("com.android.settings")
    assert p.snapshot_state()["popup_visible"]
    tap(p, text="View offer")
    assert p.current_app() == "com.artemis.shop"
