"""The sim's screenshot carries its decoded picture for the similarity hash only: the observation
keeps plain PNG bytes (queues and caches that hold them never hold pictures), and its hash is the
one a decode of those bytes gives (adb, or a replay of the stored PNG, hashes the same screen alike)."""

from __future__ import annotations

from artemis_cli.config.task import SimOptions
from artemis_cli.device.select import sim_for
from artemis_cli.operators.observe import observe
from artemis_cli.perception import dhash as dhash_module
from artemis_cli.perception.screenshot import carried_pixels


def test_the_observation_keeps_plain_bytes_and_the_hash_of_their_decode() -> None:
    phone = sim_for(SimOptions(popups=False))
    info = phone.info()
    dhash_module._CACHE.clear()
    obs = observe(phone, (info.width, info.height), "pixels")
    assert type(obs.png) is bytes and carried_pixels(obs.png) is None
    assert obs.dhash == dhash_module.dhash_image(dhash_module.load_png(obs.png))
