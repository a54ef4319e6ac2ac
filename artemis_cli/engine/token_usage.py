"""Every token counted: a session's model usage by role, from ``llm_calls`` (SPEC §10.4, issue 13).

One query (``token_usage``) sums the recorded attempts of each role; the roles are grouped as the
run summary, ``artemis sessions show`` and ``artemis bench`` show them:

* ``operator`` — the operator's turns (Flash and Pro loops);
* ``lens`` — the visual lens (role ``lens``, one per step) and the chunk lens (``chunk_lens``);
* ``pro_roles`` — the Pro loop's planner, validator, failure analyzer and checker;
* ``asks`` — the Python API's questions about the screen: ``query``, ``check``, ``locate``
  (``artemis_cli.library.ask``);
* ``other`` — any role not named above, each under its own name (nothing is dropped).

What is counted
    Every row of ``llm_calls`` is one HTTP attempt (retries and fallbacks are attempts too), and
    every attempt counts, whatever its status. That is exactly what the service billed:

    * an attempt the service answered with a usable reply: ``status = 'ok'`` with its usage;
    * an attempt the service answered without a usable reply (garbled function call, empty
      candidate, refusal, blocked prompt): ``status = 'error'`` and the usage the service
      reported — the prompt was billed, so its tokens count;
    * an attempt that got no answer (429, 5xx, timeout, connection error, rejected key): recorded
      with zero usage, so it adds a call and no tokens.

    ``calls`` is the number of attempts, ``failed_calls`` those whose status is not ``ok``.

Token fields
    ``prompt`` is the service's ``prompt_token_count``, which already includes the cached
    tokens; ``cached`` is ``cached_content_token_count``; ``output`` = ``completion`` (candidate
    tokens) + ``thoughts`` (thinking tokens) — both are billed as output; ``cached_share`` =
    ``cached / prompt`` (None without prompt tokens).

Offline models (heuristic, scripted) record their operator turns with zero usage: ``billed`` is
False for such a session, and the CLI says there were no billed tokens instead of a table of zeros.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .rows import select_rows

#: (group key, group label, ((role, role label), ...)) in display order.
ROLE_GROUPS: tuple[tuple[str, str, tuple[tuple[str, str], ...]], ...] = (
    ("operator", "operator", (("operator", "operator"),)),
    ("lens", "lenses", (("lens", "visual lens"), ("chunk_lens", "chunk lens"))),
    ("pro_roles", "Pro roles", (("planner", "planner"), ("validator", "validator"),
                                ("failure_analyzer", "failure analyzer"), ("checker", "checker"))),
    ("asks", "screen asks", (("query", "query"), ("check", "check"), ("locate", "locate"))),
)
OTHER_GROUP = "other"
GROUP_KEYS: tuple[str, ...] = (*(g for g, _, _ in ROLE_GROUPS), OTHER_GROUP)
GROUP_LABELS: dict[str, str] = {**{g: label for g, label, _ in ROLE_GROUPS}, OTHER_GROUP: "other"}
ROLE_GROUP: dict[str, str] = {role: g for g, _, roles in ROLE_GROUPS for role, _ in roles}
ROLE_LABELS: dict[str, str] = {role: label for _, _, roles in ROLE_GROUPS for role, label in roles}
_ROLE_ORDER: dict[str, int] = {role: i for i, role in enumerate(ROLE_LABELS)}

OUTPUT_IS = "completion + thoughts"

TOKEN_USAGE_SQL = """
SELECT role,
       COUNT(*) AS calls,
       TOTAL(status != 'ok') AS failed_calls,
       TOTAL(prompt_tokens) AS prompt,
       TOTAL(cached_tokens) AS cached,
       TOTAL(completion_tokens) AS completion,
       TOTAL(thoughts_tokens) AS thoughts
FROM llm_calls
WHERE session_id = ?
GROUP BY role
"""


@dataclass(frozen=True)
class TokenCounts:
    """Summed usage of some attempts (see the module docstring for what each field means)."""

    calls: int = 0
    failed_calls: int = 0
    prompt: int = 0
    cached: int = 0
    completion: int = 0
    thoughts: int = 0

    @property
    def output(self) -> int:
        """Billed output tokens: completion + thoughts."""
        return self.completion + self.thoughts

    @property
    def cached_share(self) -> float | None:
        return self.cached / self.prompt if self.prompt else None

    @property
    def billed(self) -> bool:
        return bool(self.prompt or self.output)

    def __add__(self, other: TokenCounts) -> TokenCounts:
        return TokenCounts(
            calls=self.calls + other.calls,
            failed_calls=self.failed_calls + other.failed_calls,
            prompt=self.prompt + other.prompt,
            cached=self.cached + other.cached,
            completion=self.completion + other.completion,
            thoughts=self.thoughts + other.thoughts,
        )

    def to_dict(self) -> dict[str, Any]:
        share = self.cached_share
        return {
            "calls": self.calls,
            "failed_calls": self.failed_calls,
            "prompt": self.prompt,
            "cached": self.cached,
            "completion": self.completion,
            "thoughts": self.thoughts,
            "output": self.output,
            "cached_share": None if share is None else round(share, 4),
        }


def total_of(counts: list[TokenCounts] | tuple[TokenCounts, ...]) -> TokenCounts:
    out = TokenCounts()
    for c in counts:
        out = out + c
    return out


@dataclass(frozen=True)
class RoleUsage:
    role: str  # as recorded in llm_calls.role
    label: str  # as shown ("visual lens")
    group: str  # operator | lens | pro_roles | asks | other
    counts: TokenCounts


@dataclass(frozen=True)
class GroupUsage:
    group: str
    label: str
    roles: tuple[RoleUsage, ...]  # the group's roles that have calls, in display order

    @property
    def counts(self) -> TokenCounts:
        return total_of([r.counts for r in self.roles])


@dataclass(frozen=True)
class TokenUsage:
    """A session's usage: one row per role that has at least one recorded attempt."""

    session_id: str
    roles: tuple[RoleUsage, ...] = field(default_factory=tuple)

    def role(self, name: str) -> TokenCounts:
        return next((r.counts for r in self.roles if r.role == name), TokenCounts())

    def group(self, name: str) -> GroupUsage:
        return GroupUsage(name, GROUP_LABELS[name], tuple(r for r in self.roles if r.group == name))

    @property
    def groups(self) -> tuple[GroupUsage, ...]:
        """Every group (operator, lens, pro_roles, asks, other), empty ones included."""
        return tuple(self.group(g) for g in GROUP_KEYS)

    @property
    def total(self) -> TokenCounts:
        return total_of([r.counts for r in self.roles])

    @property
    def billed(self) -> bool:
        """Whether the service billed anything (False for offline models and for runs that
        never got an answer)."""
        return self.total.billed

    def to_dict(self) -> dict[str, Any]:
        """The ``tokens`` object of ``sessions show --json`` and ``run --json``."""
        return {
            "output_is": OUTPUT_IS,
            "calls_are": "HTTP attempts: retries and failed attempts included",
            "billed": self.billed,
            "roles": {r.role: {"group": r.group, "label": r.label, **r.counts.to_dict()} for r in self.roles},
            "groups": {g.group: {"label": g.label, "roles": [r.role for r in g.roles], **g.counts.to_dict()}
                       for g in self.groups},
            "total": self.total.to_dict(),
        }


def _sort_key(role: str) -> tuple[int, str]:
    return (_ROLE_ORDER.get(role, len(_ROLE_ORDER)), role)


def token_usage(engine: Any, session_id: str) -> TokenUsage:
    """Sum ``llm_calls`` of ``session_id`` by role, in one query (every billed attempt counts;
    see the module docstring). ``engine`` is a ``DataEngine``; ``session_id`` its full id."""
    with engine.lock:
        rows = select_rows(engine.conn, TOKEN_USAGE_SQL, [session_id])
    roles = [
        RoleUsage(
            role=str(row["role"]),
            label=ROLE_LABELS.get(str(row["role"]), str(row["role"])),
            group=ROLE_GROUP.get(str(row["role"]), OTHER_GROUP),
            counts=TokenCounts(
                calls=int(row["calls"]),
                failed_calls=int(row["failed_calls"]),
                prompt=int(row["prompt"]),
                cached=int(row["cached"]),
                completion=int(row["completion"]),
                thoughts=int(row["thoughts"]),
            ),
        )
        for row in rows
    ]
    roles.sort(key=lambda r: _sort_key(r.role))
    return TokenUsage(session_id=session_id, roles=tuple(roles))


# -- money (issue 24) -------------------------------------------------------------------------

COST_SQL = """
SELECT session_id, role,
       TOTAL(cost_usd) AS cost,
       TOTAL(cost_usd IS NULL AND (prompt_tokens + completion_tokens + thoughts_tokens) > 0) AS unknown
FROM llm_calls
WHERE session_id IN ({marks})
GROUP BY session_id, role
"""


@dataclass(frozen=True)
class CostSummary:
    """A session's cost in USD, priced call by call when each was recorded (``models.pricing``).

    ``by_role`` maps each role that called a model to its cost, None when any of its billed calls
    has no known price (a model genai-prices and the profile do not price, or a call recorded
    before migration 0009); ``total_usd`` is None when any role's is. A call that billed no
    tokens (offline models, attempts that got no answer) costs 0."""

    session_id: str
    total_usd: float | None = 0.0
    by_role: dict[str, float | None] = field(default_factory=dict)

    @property
    def by_group(self) -> dict[str, float | None]:
        """Cost per display group (operator, lens, pro_roles, asks, other), groups with calls only."""
        out: dict[str, float | None] = {}
        for role, usd in self.by_role.items():
            group = ROLE_GROUP.get(role, OTHER_GROUP)
            prev = out.get(group, 0.0)
            out[group] = None if prev is None or usd is None else prev + usd
        return out

    def text(self) -> str:
        """``$0.0042 total — operator $0.0031 · visual lens $0.0011``; "unknown" where a price is
        not known (never a fake 0)."""
        from artemis_cli.models.pricing import format_usd

        roles = " · ".join(f"{ROLE_LABELS.get(role, role)} {format_usd(usd)}" for role, usd in self.by_role.items())
        line = f"{format_usd(self.total_usd)} total"
        return f"{line} — {roles}" if roles else line

    @classmethod
    def from_dict(cls, session_id: str, data: dict[str, Any]) -> CostSummary:
        return cls(session_id=session_id, total_usd=data.get("total_usd"), by_role=dict(data.get("by_role") or {}))

    def to_dict(self) -> dict[str, Any]:
        """The ``cost`` object of ``run --json``, ``sessions show --json`` and bench rows."""
        return {
            "currency": "USD",
            "total_usd": _round_usd(self.total_usd),
            "by_role": {role: _round_usd(usd) for role, usd in self.by_role.items()},
            "unknown": self.total_usd is None,
        }


def _round_usd(usd: float | None) -> float | None:
    return None if usd is None else round(usd, 8)


def sum_cost_dicts(costs: list[dict[str, Any] | None]) -> float | None:
    """The USD total of several ``CostSummary.to_dict()`` objects (bench rows, suite cases); None
    when any is unknown or missing (a result kept from an older run): a partial sum would look like
    a real one."""
    totals = [(c or {}).get("total_usd") for c in costs]
    if any(v is None for v in totals):
        return None
    return _round_usd(sum(float(v) for v in totals if v is not None))


def sessions_costs(engine: Any, session_ids: list[str]) -> dict[str, CostSummary]:
    """:func:`session_costs` of several sessions in one query (``sessions list``)."""
    if not session_ids:
        return {}
    sql = COST_SQL.format(marks=",".join("?" * len(session_ids)))
    with engine.lock:
        rows = select_rows(engine.conn, sql, list(session_ids))
    roles: dict[str, dict[str, float | None]] = {sid: {} for sid in session_ids}
    for row in rows:
        usd = None if row["unknown"] else float(row["cost"])
        roles.setdefault(str(row["session_id"]), {})[str(row["role"])] = usd
    out: dict[str, CostSummary] = {}
    for sid, by_role in roles.items():
        ordered = dict(sorted(by_role.items(), key=lambda kv: _sort_key(kv[0])))
        values = list(ordered.values())
        total = None if any(v is None for v in values) else sum(v for v in values if v is not None)
        out[sid] = CostSummary(session_id=sid, total_usd=total, by_role=ordered)
    return out


def session_costs(engine: Any, session_id: str) -> CostSummary:
    """What ``session_id`` cost, in total and per role (the one read function for cost: the run
    summary, ``sessions show``/``list``, the report, bench rows and JUnit properties use it)."""
    return sessions_costs(engine, [session_id])[session_id]
