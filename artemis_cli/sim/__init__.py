"""The built-in simulated Android phone (SPEC §7.1). See WORLD.md for the apps and shell."""

from artemis_cli.sim.phone import SimPhone

__all__ = ["SimPhone"]
