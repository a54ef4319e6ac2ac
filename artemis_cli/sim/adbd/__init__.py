"""The simulated phone as an adbd over TCP (SPEC §7.1): ``SimAdbd(phone, host, port)``."""

from artemis_cli.sim.adbd.server import FEATURES, SimAdbd, free_port

__all__ = ["FEATURES", "SimAdbd", "free_port"]
