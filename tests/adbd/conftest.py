"""Fixtures for the adbd tests (defined in adbd_support, a uniquely named module)."""

from adbd_support import adb_server, cli, sim_device

__all__ = ["adb_server", "cli", "sim_device"]
