"""Fixtures for the simulated-phone tests."""

from __future__ import annotations

from typing import cast

import pytest

from artemis_cli.config.task import SimOptions
from artemis_cli.device.select import sim_for
from artemis_cli.sim import SimPhone


@pytest.fixture
def phone() -> SimPhone:
    """A fresh default-world phone without pop-ups or permission prompts (the prompt has its own
    tests), built as a task's ``sim:`` block builds one."""
    return cast(SimPhone, sim_for(SimOptions(popups=False, permission_prompts=False)))
