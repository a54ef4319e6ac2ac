"""Every model call priced (issue 24): genai-prices' own numbers, the profile's prices: table,
local endpoints at 0, unknown prices as None (never 0), and migration 0009 on an old database."""

from __future__ import annotations

import sqlite3
from decimal import Decimal
from pathlib import Path

import pytest
from genai_prices import Usage, calc_price

from artemis_cli.config.profile import Profile, load_profile
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.migrations import MIGRATIONS, migrate
from artemis_cli.engine.records import LlmCallRecord, SessionRecord
from artemis_cli.engine.token_usage import session_costs
from artemis_cli.models.pricing import Pricer, Route, format_usd, pricer_for


@pytest.mark.parametrize(("model", "route", "provider"), [
    ("gemini-2.5-flash", Route("gemini"), "google"),
    ("gemini-2.5-pro", Route("gemini"), "google"),
    ("gpt-4o-mini", Route("openai"), "openai"),
])
def test_known_models_cost_what_genai_prices_says_cached_input_included(model: str, route: Route, provider: str) -> None:
    price = Pricer(routes={model: route}).price(model, prompt=120_000, cached=100_000, output=3_000)
    theirs = calc_price(Usage(input_tokens=120_000, cache_read_tokens=100_000, output_tokens=3_000), model,
                        provider_id=provider).total_price
    assert price.source == "genai-prices"
    assert Decimal(str(price.usd)) == pytest.approx(theirs)
    uncached = Pricer(routes={model: route}).price(model, prompt=120_000, output=3_000)
    assert price.usd is not None and uncached.usd is not None and price.usd < uncached.usd


def test_profile_prices_override_and_add() -> None:
    data = load_profile("flash").model_dump(mode="json")
    data["prices"] = {"gemini-2.5-flash": {"input": 1, "cached_input": 0.5, "output": 10},
                      "my-model": {"input": 2, "output": 4}}
    pricer = pricer_for(None, Profile.model_validate(data))
    # 0.5M uncached at $1 + 0.5M cached at $0.5 + 0.1M output at $10
    assert pricer.price("gemini-2.5-flash", prompt=1_000_000, cached=500_000, output=100_000).usd == pytest.approx(1.75)
    own = pricer.price("my-model", prompt=1_000_000, cached=1_000_000, output=0)
    assert own.source == "profile" and own.usd == pytest.approx(2.0)  # cached_input defaults to input


@pytest.mark.parametrize("url", ["http://localhost:8000/v1", "http://127.0.0.1:1234/v1", "http://[::1]:9/v1"])
def test_a_local_endpoint_costs_zero_unless_the_profile_prices_it(url: str) -> None:
    local = Pricer(routes={"gpt-4o": Route("openai", url)})
    assert local.price("gpt-4o", prompt=10_000, output=1_000).usd == 0.0
    priced = Pricer(routes={"gpt-4o": Route("openai", url)}, prices={"gpt-4o": {"input": 1.0, "output": 1.0}})
    assert priced.price("gpt-4o", prompt=1_000_000, output=0).usd == pytest.approx(1.0)


def test_unknown_price_is_none_shown_as_unknown_never_zero() -> None:
    price = Pricer().price("no-such-model-xyz", prompt=100, output=10)
    assert price.usd is None and price.source == "unknown"
    assert format_usd(price.usd) == "unknown"


def test_costs_are_stored_per_call_and_summed_by_role(tmp_path: Path) -> None:
    engine = DataEngine.open(tmp_path / "d")
    sid = engine.create_session(SessionRecord(goal="g"))
    engine.set_pricer(sid, Pricer(routes={"gemini-2.5-flash": Route("gemini")}))
    engine.record_llm_call(LlmCallRecord(session_id=sid, role="operator", model="gemini-2.5-flash",
                                         prompt_tokens=1_000_000, completion_tokens=0))
    engine.record_llm_call(LlmCallRecord(session_id=sid, role="lens", model="gemini-2.5-flash",
                                         prompt_tokens=0, completion_tokens=1_000_000))
    costs = session_costs(engine, sid)
    assert costs.by_role == {"operator": pytest.approx(0.3), "lens": pytest.approx(2.5)}
    assert costs.total_usd == pytest.approx(2.8)
    engine.record_llm_call(LlmCallRecord(session_id=sid, role="checker", model="no-such-model-xyz", prompt_tokens=5))
    costs = session_costs(engine, sid)
    assert costs.by_role["checker"] is None and costs.total_usd is None and costs.to_dict()["unknown"]


def test_migration_0009_on_an_old_database_leaves_old_calls_unknown(tmp_path: Path) -> None:
    path = tmp_path / "old" / "artemis.db"
    path.parent.mkdir()
    import sqlite_utils

    old = sqlite_utils.Database(path)
    names = [name for name, _ in MIGRATIONS]
    assert "0009_llm_call_cost" in names
    migrate(old, MIGRATIONS[:8])
    old.execute("INSERT INTO sessions (id, goal, status, started_at) VALUES ('s1', 'g', 'succeeded', '2026-01-01')")
    old.execute("INSERT INTO llm_calls (session_id, role, model, prompt_tokens, created_at) "
                "VALUES ('s1', 'operator', 'gemini-2.5-flash', 100, '2026-01-01')")
    old.conn.commit()
    old.close()
    engine = DataEngine.open(path.parent)
    cols = {row[1] for row in sqlite3.connect(path).execute("PRAGMA table_info(llm_calls)")}
    assert {"cost_usd", "price_source"} <= cols
    costs = session_costs(engine, "s1")
    assert costs.total_usd is None and costs.by_role == {"operator": None}
