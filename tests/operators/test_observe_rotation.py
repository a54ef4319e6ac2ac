"""A device rotated after its size was read: the observation follows the screenshot's frame."""

from __future__ import annotations

from artemis_cli.operators.observe import observe
from artemis_cli.perception.png import png_size
from artemis_cli.sim.phone import SimPhone


def test_a_landscape_screenshot_makes_a_landscape_observation() -> None:
    phone = SimPhone(width=2400, height=1080, popups=False)  # what a rotated 1080x2400 phone shows
    assert png_size(phone.screenshot()) == (2400, 1080)
    obs = observe(phone, (1080, 2400), "pixels", sleep=lambda s: None)
    assert (obs.space.width, obs.space.height) == (2400, 1080)
    assert obs.elements and all(e.node.bounds.top < 1080 and e.node.bounds.left < 2400 for e in obs.elements)


def test_an_unrelated_size_difference_is_not_taken_for_a_rotation() -> None:
    phone = SimPhone(width=720, height=1600, popups=False)  # e.g. a scaled screenshot
    obs = observe(phone, (1080, 2400), "pixels", sleep=lambda s: None)
    assert (obs.space.width, obs.space.height) == (1080, 2400)
