"""Where a heal may rejoin the recording: a screen under a dialog is the recorded one only when the
screen behind the dialog is too. The Shop's promotion over the catalogue is not the same promotion
over the cart: a rejoin there would skip the recorded steps between them (the cart, the checkout)
and lose their work."""

from __future__ import annotations

from pathlib import Path

from artemis_cli import Phone
from artemis_cli.operators.act import PlannedAction
from artemis_cli.operators.observe import Observation, observe
from artemis_cli.perception.dhash import hamming
from artemis_cli.perception.hittest import hit_test
from artemis_cli.perception.types import Element, Target
from artemis_cli.replay.match import TargetMatch, screen_matches
from artemis_cli.sim.phone import SimPhone

SIZE = (1080, 2400)


def _promotion_over(tmp_path: Path, cart: bool) -> Observation:
    """The Shop's promotion shown over the catalogue, or over the cart."""
    device = SimPhone(seed=57)
    with Phone.open(device, data_dir=tmp_path, real_time=False) as phone:
        phone.launch("Shop")
        phone.type(None, "demo", id="username")
        phone.type(None, "artemis123", id="password", submit=True)
        device.popups.shop_count, device.popups.shop_gap = 0, 1  # the next action brings the promotion
        if cart:
            phone.tap(id="cart_button")
        else:
            phone.scroll("down")
        obs = observe(device, SIZE, "pixels", sleep=lambda s: None)
    assert obs.modal is not None and "Special offer!" in obs.element_list, obs.element_list
    return obs


def test_the_same_dialog_over_another_screen_is_not_the_recorded_screen(tmp_path: Path) -> None:
    over_catalogue = _promotion_over(tmp_path / "a", cart=False)
    over_cart = _promotion_over(tmp_path / "b", cart=True)

    def matches(recorded: Observation, now: Observation) -> bool:
        return screen_matches(Target(), recorded.elements, recorded.dhash, hamming(recorded.dhash, now.dhash),
                              now.elements, now.tree, recorded_size=SIZE, current_size=SIZE,
                              recorded_tree=recorded.tree, dhash_max=0)

    assert matches(over_catalogue, over_catalogue)  # the recorded screen itself
    assert not matches(over_catalogue, over_cart)  # the same promotion, another screen behind it


def _create_contact_tap() -> tuple[SimPhone, Observation, PlannedAction, Element]:
    """The Contacts list, and a tap planned on its "Create contact" button."""
    device = SimPhone(seed=0)
    device.launch("com.android.contacts")
    pre = observe(device, SIZE, "pixels", sleep=lambda s: None)
    el = next(e for e in pre.elements if e.label == "Create contact")
    x, y = el.center
    return device, pre, PlannedAction("tap", {}, x, y, target=hit_test(pre.tree, x, y), element=el), el


def test_a_tap_at_the_recorded_point_is_not_the_recorded_step_done() -> None:
    """A step replayed at its recorded coordinates (its element not found by semantics) hit whatever
    is there now: it is not the recorded step done, so a heal does not go on after it."""
    from artemis_cli.replay.verify import reached

    _, pre, action, el = _create_contact_tap()
    x, y = action.x or 0, action.y or 0
    found = TargetMatch(el, action.target, x, y, "semantics")
    assert reached(action, pre, found)  # the recorded element, found by its semantics, reached
    at_point = TargetMatch(el, action.target, x, y, "coordinates")
    assert not reached(action, pre, at_point)


def test_a_blind_tap_that_changed_the_screen_is_not_the_recorded_step_done() -> None:
    """A labelled target not found by semantics, tapped at its recorded point where something else
    answered (here the button itself, standing in for whatever is there now): the screen changed,
    but the recorded element was not found, so a heal plans from that step, not after it."""
    from artemis_cli.replay.verify import step_done

    device, pre, action, el = _create_contact_tap()
    x, y = action.x or 0, action.y or 0
    device.tap(x, y)
    post = observe(device, SIZE, "pixels", sleep=lambda s: None)
    assert post.dhash != pre.dhash  # the tap did something
    at_point = TargetMatch(el, action.target, x, y, "coordinates")
    assert step_done(action, pre, post, at_point, blind=False)  # a coordinates replay: what changed, did it
    assert not step_done(action, pre, post, at_point, blind=True)
    found = TargetMatch(el, action.target, x, y, "semantics")
    assert step_done(action, pre, post, found, blind=False)
