"""A served simulated phone starts each bench pair as the task's sim settings say
(``artemis-sim reset``), so a frozen task plays the same on ``artemis sim serve`` as in-process."""

from __future__ import annotations

from artemis_cli.bench.worker import reset_served_sim
from artemis_cli.config.task import Task
from artemis_cli.sim.phone import SimPhone
from artemis_cli.sim.shell import Shell


def test_reset_starts_a_fresh_phone_of_the_world_and_seed() -> None:
    phone = SimPhone(seed=9, popups=False)
    phone.launch("com.artemis.notes")
    shell = Shell(phone)
    assert shell.run("artemis-sim reset --world variant --seed 12 --popups").output == b"reset to world variant seed 12\n"
    assert (phone.world, phone.seed, phone.foreground) == ("variant", 12, "com.android.launcher3")
    assert phone.popups.enabled


def test_bad_reset_arguments_are_shell_errors_and_change_nothing() -> None:
    phone = SimPhone(seed=9)
    shell = Shell(phone)
    assert shell.run("artemis-sim reset --world nowhere --seed 1").exit_code == 1
    assert shell.run("artemis-sim reset --seed x").exit_code == 2
    assert shell.run("artemis-sim").exit_code == 2
    assert (phone.world, phone.seed) == ("default", 9)


def test_the_bench_worker_resets_a_served_sim_to_the_task() -> None:
    phone = SimPhone(seed=9, popups=False)
    task = Task.model_validate({"id": "t", "goal": "g", "sim": {"world": "default", "seed": 41, "popups": False}})
    reset_served_sim(phone, task)
    assert phone.seed == 41
