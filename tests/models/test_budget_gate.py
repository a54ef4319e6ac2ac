"""``--max-cost`` covers every model call (issue 24): the operator's and the role models made from
it share one gate, so a lens call that would pass the limit is not made either. The invariant:
after a budget stop, what the session's recorded calls cost is within the limit."""

from __future__ import annotations

from pathlib import Path

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import load_task
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.token_usage import session_costs
from artemis_cli.models.fakes.gemini import FakeGeminiServer
from artemis_cli.models.gemini import GeminiModel
from artemis_cli.models.offline.scripted import script_policy
from artemis_cli.models.registry import reference_script
from artemis_cli.runner import run_task
from artemis_cli.sim.phone import SimPhone

REPO = Path(__file__).resolve().parents[2]


def _run(data: Path, limit: float | None) -> tuple[str, str, dict[str, float | None], float | None]:
    task = load_task(REPO / "tasks" / "demo.yaml")
    with FakeGeminiServer(script_policy(reference_script(task)), min_cacheable_tokens=256) as srv:
        model = GeminiModel(["gemini-2.5-flash"], api_key="k", base_url=srv.base_url, sleep=lambda s: None,
                            backoff_s=0.0)
        with DataEngine.open(data) as engine:
            result = run_task(task, load_profile("flash"), SimPhone(world=task.sim.world, seed=task.sim.seed),
                              model, engine, real_time=False, max_cost=limit)
            costs = session_costs(engine, result.session_id)
    return result.status, result.stop_reason, costs.by_role, costs.total_usd


def test_a_budget_stop_leaves_every_role_within_the_limit(tmp_path: Path) -> None:
    status, _, by_role, full = _run(tmp_path / "full", None)
    assert status == "succeeded" and full is not None and by_role.get("lens"), by_role  # the lens calls a model
    for share in (0.35, 0.6, 0.85):
        limit = full * share
        status, reason, by_role, spent = _run(tmp_path / f"at{share}", limit)
        assert (status, reason) == ("interrupted", "budget"), share
        assert spent is not None and spent <= limit, (share, spent, limit, by_role)


class _Refused(Exception):
    pass


def test_the_role_models_share_the_operators_gate_so_a_refused_call_sends_nothing() -> None:
    """A check set on the operator's model after the lens and Pro models were made from it (as the
    runner does) refuses their calls too, before any request reaches the server."""
    from artemis_cli.models.base import Message, ModelRequest, Part
    from artemis_cli.models.registry import role_model

    profile = load_profile("pro")
    task = load_task(REPO / "tasks" / "demo.yaml")
    with FakeGeminiServer(script_policy(reference_script(task))) as srv:
        operator = GeminiModel(["gemini-2.5-flash"], api_key="k", base_url=srv.base_url, sleep=lambda s: None)
        roles = {r: role_model(operator, profile, r) for r in ("visual_lens", "chunk_lens", "planner", "validator")}
        asked: list[tuple[str, str]] = []

        def refuse(request: ModelRequest, model: str) -> None:
            asked.append((request.role, model))
            raise _Refused(model)

        operator.gate.check = refuse
        for role, model in roles.items():
            assert model is not None, role
            request = ModelRequest(system="s", messages=[Message("user", [Part(text="hi")])], role=role)
            try:
                model.generate(request)
            except _Refused:
                pass
            else:
                raise AssertionError(f"the {role} model's call was not checked")
        assert [r for r, _ in asked] == list(roles)
        assert srv.requests == []


def test_the_suggested_limit_covers_the_refused_call_and_reads_as_a_round_number() -> None:
    from artemis_cli.operators.flash import LoopOutcome
    from artemis_cli.runner import _next_limit

    def suggest(spent: float, estimate: float, limit: float) -> str:
        return _next_limit(LoopOutcome(stop_reason="budget", budget_usd=(spent, estimate, limit)))

    assert suggest(0.0, 0.002383, 0.001) == "0.0048"  # not "1.001": the call needs ~$0.0024
    assert suggest(0.4, 0.01, 0.5) == "1"
    assert suggest(3.2, 0.3, 5) == "10"
    for spent, estimate, limit in ((0.0, 0.002383, 0.001), (0.91, 0.2, 1.0), (0.0012, 0.00031, 0.0015)):
        assert float(suggest(spent, estimate, limit)) >= spent + estimate
