"""A tap addressed by element index records what the tap really lands on (issue 12: a step
record tells the truth). Texts that no tap can reach stay in the element list for reading; a tap
at their point lands on whatever takes touches there (a sheet's dismiss area, a scrim), and that
is what the step's target must say."""

from __future__ import annotations

import pytest
from perception_dumps import dump

from artemis_cli.models.base import FunctionCall
from artemis_cli.operators.act import plan_action
from artemis_cli.operators.observe import Observation
from artemis_cli.operators.tools import ToolCall
from artemis_cli.perception.coords import CoordinateSpace
from artemis_cli.perception.elements import index_elements
from artemis_cli.perception.hierarchy import parse_hierarchy


def _observation(prefix: str) -> Observation:
    tree = parse_hierarchy(dump(prefix))
    return Observation(png=b"", xml="", tree=tree, elements=index_elements(tree), dhash="0" * 16, foreground=None,
                       space=CoordinateSpace(1080, 2400), captured_at=0.0)


def _tap(obs: Observation, label: str) -> tuple[str, str]:
    (el,) = [e for e in obs.elements if e.label.startswith(label)]
    call = ToolCall("tap", {"index": el.index}, FunctionCall("tap", {"index": el.index}))
    target = plan_action(call, obs).target
    return target.describe(), target.label_source


@pytest.mark.parametrize(("prefix", "label", "reached"), [
    ("024", "Pill Design", "View (id touch_outside)"),
    ("033", "This device is locked", "View (id scrim_behind)"),
])
def test_a_tap_on_a_text_no_tap_reaches_records_what_it_lands_on(prefix: str, label: str, reached: str) -> None:
    described, source = _tap(_observation(prefix), label)
    assert described == reached and source == "hit_test"


def test_a_tap_on_a_reachable_element_records_the_element() -> None:
    obs = _observation("008")
    el = next(e for e in obs.elements if e.node.clickable and e.label)
    call = ToolCall("tap", {"index": el.index}, FunctionCall("tap", {"index": el.index}))
    target = plan_action(call, obs).target
    assert target.label_source == "index" and target.element_index == el.index
