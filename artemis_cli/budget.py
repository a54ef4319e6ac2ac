"""``--max-cost``: stop a run cleanly BEFORE the model call that would pass its USD limit.

Before each model call — the operator's and every role model's made from it (the lenses, the Pro
agents: they share the operator model's :class:`artemis_cli.models.base.CallGate`) — the guard
estimates that call's cost — its input tokens from the
request (``memory.ledger.estimate_tokens``, images as Gemini counts them) plus
:data:`OUTPUT_ESTIMATE_TOKENS` of output, priced like a recorded call (``models.pricing``) — and
when what the session has spent so far (every role's recorded calls, across resumes:
``engine.token_usage.session_costs``) plus that estimate would pass the limit it raises
:class:`BudgetExceeded`. The runner turns that into ``interrupted`` with reason ``budget``. A lens or Pro agent that is
refused takes its documented fallback (a mechanical summary, an "unclear" verdict); the call is
not made, and the operator's next call stops the run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from artemis_cli.errors import UsageError

#: The output a call is assumed to produce when its cost is estimated (an operator turn is a
#: thought and one tool call: a few hundred tokens; thinking models may say more).
OUTPUT_ESTIMATE_TOKENS = 512


class BudgetExceeded(Exception):
    """The next model call would pass the run's ``--max-cost``."""

    def __init__(self, spent: float, estimate: float, limit: float) -> None:
        self.spent, self.estimate, self.limit = spent, estimate, limit
        super().__init__(f"stopped before a model call: ${spent:.6f} spent so far, the next call would cost about "
                         f"${estimate:.6f}, which would pass the limit of ${limit:g} (--max-cost)")


@dataclass
class BudgetGuard:
    engine: Any
    session_id: str
    pricer: Any  # models.pricing.Pricer
    limit: float

    def spent(self) -> float:
        from artemis_cli.engine.token_usage import session_costs

        costs = session_costs(self.engine, self.session_id)
        return sum(usd for usd in costs.by_role.values() if usd is not None)

    def check(self, request: Any, model: str) -> None:
        from artemis_cli.memory.ledger import estimate_tokens

        est = self.pricer.price(model, prompt=estimate_tokens(request), output=OUTPUT_ESTIMATE_TOKENS).usd or 0.0
        spent = self.spent()
        if spent + est > self.limit:
            raise BudgetExceeded(round(spent, 8), round(est, 8), self.limit)


def check_priced(model: Any, profile: Any, limit: float | None) -> None:
    """``--max-cost`` needs a price for the operator's model: a UsageError before any session."""
    if limit is None:
        return
    if limit <= 0:
        raise UsageError(f"--max-cost must be more than 0 USD, got {limit:g}")
    from artemis_cli.models.pricing import pricer_for

    pricer = pricer_for(model, profile)
    unknown = [name for name in getattr(model, "chain", [model.name]) if not pricer.known(name)]
    if unknown:
        raise UsageError(f"--max-cost needs a price for {', '.join(unknown)}, and genai-prices does not know it",
                         hint="price it in the profile's prices: table (input, cached_input, output USD per "
                              "million tokens)")
