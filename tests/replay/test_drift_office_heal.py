"""The office order (60-odd steps, the Shop's promotion pop-up four times) recorded on the default
world and healed on ``sim:drift`` by the offline healer: the order placed holds every item.

Two ways a heal used to lose work, each a rule here:

- the pop-up came one action earlier than recorded, so a recorded "Add to cart" tapped the
  pop-up and added nothing; the replay passed over that step because the screen already was
  the next recorded one (the pop-up). Only a step that took something away (a dismissal) may be
  passed over without a model step (``verify.only_removed``);
- the cart button moved into a menu, so its recorded tap fell back to the recorded point and hit
  the app bar's "Shop" title. A labelled target is never tapped at its recorded point when
  another labelled element is there now (``match.contradicts``), and a fall-back tap is never
  the recorded step done (the heal's plan starts at it, not after it).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from artemis_cli.engine.db import DataEngine
from artemis_cli.perception.types import Target
from artemis_cli.replay import ReplayOptions, replay_session
from artemis_cli.replay.match import contradicts

TASK = "shop-office-order.yaml"


def test_office_order_heals_on_drift_with_every_item(tmp_path: Path, record_task: Callable[..., Any],
                                                     phone_for: Callable[..., Any],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARTEMIS_SECRET", "artemis123")
    engine = DataEngine.open(tmp_path / "data")
    source = record_task(engine, TASK).session_id
    result = replay_session(engine, phone_for(TASK, "drift"), source, ReplayOptions(heal=True))
    assert result.status == "succeeded", result.message
    # the task's checks read the order placed: its 48 items, one order, an empty cart, thank-you
    assert len(result.checks) == 4 and all(c.passed for c in result.checks), result.checks
    steps = engine.get_steps(result.session_id)
    # no tap landed on an element the recording never tapped: the app bar's title sat where the
    # recorded cart button was
    tapped = [s.target_text for s in steps if s.action_type == "tap"]
    assert "Shop" not in tapped, tapped
    assert steps[-1].action_type == "finish"
    offsets = [s.offset_ms for s in steps]
    assert offsets == sorted(offsets), offsets  # the heal's steps keep the replay session's clock
    assert result.model_calls <= 20, result.model_calls  # healed, not re-run: a fresh run takes ~70


def test_a_labelled_element_at_the_recorded_point_is_another_element() -> None:
    more = Target(content_desc="More options", class_name="android.widget.ImageButton", label_source="hit_test")
    log_out = Target(text="Log out", resource_id="com.artemis.shop:id/logout", label_source="hit_test")
    moved = Target(content_desc="More options", class_name="android.widget.ImageButton", label_source="hit_test",
                   bounds=(0, 0, 10, 10))
    assert contradicts(more, log_out)
    assert not contradicts(more, moved)  # the same element, found at the point
    assert not contradicts(more, Target())  # nothing labelled there: the point is all there is
    assert not contradicts(Target(), log_out)  # the recording tapped no labelled element
