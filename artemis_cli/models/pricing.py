"""What a model call cost in USD (issue 24 "Money").

Prices come from ``genai-prices`` (a maintained table with cached-input prices) unless the
profile's ``prices:`` table names the model (USD per million tokens: ``input``, ``cached_input``,
``output``), which overrides or adds. Usage is what the provider reported: ``prompt_tokens``
already counts the request's image tokens and includes the cached tokens (billed at the cached
price), output is completion + thoughts (both billed as output).

Where the call went decides the price list:

* ``gemini`` — Google's prices (``provider_id='google'``), whatever the endpoint (the fake Gemini
  server stands in for Google's own API);
* ``openai`` without a base URL — OpenAI's prices; with a base URL on localhost/127.0.0.1/::1 it is
  a local server and costs 0 unless the profile prices the model; another base URL is looked up by
  its URL in genai-prices (``provider_api_url``);
* an offline model (heuristic, scripted) costs 0.

A model with no known price has cost ``None`` (source ``unknown``): shown as "unknown", never 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

SOURCE_GENAI_PRICES = "genai-prices"
SOURCE_PROFILE = "profile"
SOURCE_LOCAL = "local"
SOURCE_OFFLINE = "offline"
SOURCE_UNKNOWN = "unknown"

LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


@dataclass(frozen=True)
class Price:
    """A call's cost: ``usd`` None when the model's price is unknown; ``source`` says which list."""

    usd: float | None
    source: str


@dataclass(frozen=True)
class Route:
    """Where a model name's calls go: provider ``gemini``/``openai``/``offline`` and base URL."""

    provider: str
    base_url: str | None = None

    @property
    def local(self) -> bool:
        if self.provider != "openai" or not self.base_url:
            return False
        return (urlsplit(self.base_url).hostname or "").lower() in LOCAL_HOSTS


def _per_million(rate: float, tokens: int) -> float:
    return rate * tokens / 1_000_000


def _genai_price(model: str, route: Route, prompt: int, cached: int, output: int) -> float | None:
    from genai_prices import Usage, calc_price

    usage = Usage(input_tokens=prompt, cache_read_tokens=cached or None, output_tokens=output)
    kwargs: dict[str, Any]
    if route.provider == "gemini":
        kwargs = {"provider_id": "google"}
    elif route.base_url:
        kwargs = {"provider_api_url": route.base_url}
    else:
        kwargs = {"provider_id": "openai"}
    try:
        return float(calc_price(usage, model, **kwargs).total_price)
    except LookupError:
        return None


@dataclass
class Pricer:
    """Prices calls by model name. ``routes`` maps a model name to where it runs (names not in it
    take ``default``); ``prices`` is the profile's table (model -> {input, cached_input, output})."""

    routes: dict[str, Route] = field(default_factory=dict)
    default: Route = field(default_factory=lambda: Route("gemini"))
    prices: dict[str, dict[str, float | None]] = field(default_factory=dict)

    def route(self, model: str) -> Route:
        return self.routes.get(model, self.default)

    def price(self, model: str, *, prompt: int = 0, cached: int = 0, output: int = 0) -> Price:
        """The cost of one call of ``model`` with this usage (``prompt`` includes ``cached``)."""
        own = self.prices.get(model)
        if own is not None:
            rate_in = own.get("input") or 0.0
            cached_rate = own.get("cached_input")
            if cached_rate is None:  # a profile price without cached_input (or with it null)
                cached_rate = rate_in
            usd = (_per_million(rate_in, max(0, prompt - cached)) + _per_million(cached_rate, cached)
                   + _per_million(own.get("output") or 0.0, output))
            return Price(usd, SOURCE_PROFILE)
        route = self.route(model)
        if route.provider == "offline":
            return Price(0.0, SOURCE_OFFLINE)
        if route.local:
            return Price(0.0, SOURCE_LOCAL)
        listed = _genai_price(model, route, prompt, cached, output)
        return Price(None, SOURCE_UNKNOWN) if listed is None else Price(listed, SOURCE_GENAI_PRICES)

    def known(self, model: str) -> bool:
        """Whether ``model`` has a price (a one-token probe)."""
        return self.price(model, prompt=1, output=1).usd is not None


def _model_route(model: Any) -> Route:
    if getattr(model, "offline", False):
        return Route("offline")
    module = type(model).__module__
    if module.endswith("openai_provider"):
        return Route("openai", getattr(model, "base_url", None))
    if module.endswith("gemini"):
        return Route("gemini")
    return Route("offline")  # a model of a test's own making: no provider bills it


def pricer_for(model: Any, profile: Any = None) -> Pricer:
    """The pricer of a run: the operator ``model``'s chain on its own route, the profile's roles
    on theirs, and the profile's ``prices:`` table."""
    default = _model_route(model)
    routes: dict[str, Route] = {}
    roles = getattr(profile, "models", None)
    if roles is not None and default.provider != "offline":
        for name in type(roles).model_fields:
            role = getattr(roles, name)
            route = Route(role.provider, role.base_url if role.provider == "openai" else None)
            for model_name in role.chain:
                routes[model_name] = route
    for model_name in getattr(model, "chain", [getattr(model, "name", "")]):
        routes[model_name] = default
    table = getattr(profile, "prices", None) or {}
    prices = {name: p.model_dump(exclude_none=True) if hasattr(p, "model_dump") else dict(p)
              for name, p in table.items()}
    return Pricer(routes=routes, default=default, prices=prices)


def format_usd(usd: float | None) -> str:
    """``$0.0123`` (4 significant decimals below a cent), ``unknown`` for None."""
    if usd is None:
        return "unknown"
    if usd == 0:
        return "$0"
    if usd < 0.01:
        return f"${usd:.6f}".rstrip("0")
    return f"${usd:.4f}"
