"""Issue 34 item 2 over `artemis sim serve`'s wire, with Debian's adb: the dump holds the dialog
alone, `dumpsys window` its DIM_BEHIND; a tap behind "Set alarm" is refused before anything is
sent and names the dialog, the switch behind it stays ON."""

from __future__ import annotations

import pytest
from adbd_support import SimDevice, needs_adb
from outcome_support import look, tap

from artemis_cli.device.adb import AdbDevice
from artemis_cli.models.base import FunctionCall
from artemis_cli.operators.act import plan_action
from artemis_cli.operators.tools import ToolCallError, validate_call

pytestmark = needs_adb


def test_a_tap_behind_set_alarm_is_not_sent_over_adb(sim_device: SimDevice) -> None:
    dev = AdbDevice(sim_device.serial, port=sim_device.adb.port, sleep=lambda s: None)
    phone = sim_device.phone
    phone.grant("com.android.deskclock", "android.permission.POST_NOTIFICATIONS")
    phone.launch("com.android.deskclock")
    tap(dev, desc="Add alarm")
    obs = look(dev)
    assert obs.modal is not None and obs.modal.name == 'the dialog "Set alarm"'
    assert "onoff" not in obs.element_list
    alarms = phone.apps["com.android.deskclock"].snapshot()
    with pytest.raises(ToolCallError, match='the dialog "Set alarm" is in front'):
        plan_action(validate_call(FunctionCall("tap", {"x": 1026, "y": 491})), obs)
    assert phone.apps["com.android.deskclock"].snapshot() == alarms
