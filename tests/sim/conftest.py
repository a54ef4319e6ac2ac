"""Fixtures for the simulated-phone tests."""

from __future__ import annotations

import pytest

from artemis_cli.sim import SimPhone


@pytest.fixture
def phone() -> SimPhone:
    return SimPhone(popups=False)
