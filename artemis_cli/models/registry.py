"""Pick the model for a run from ``--model`` and the profile (SPEC §8)."""

from __future__ import annotations

import os
from typing import Any

from artemis_cli.errors import ModelConfigError, UsageError
from artemis_cli.models.base import Model
from artemis_cli.models.choices import models_help

OPENAI_PREFIX = "openai:"


def has_api_key() -> bool:
    return bool(os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY"))


def profile_provider(profile: Any) -> str:
    """The provider of the profile's operator role (gemini when the profile names none)."""
    operator = getattr(getattr(profile, "models", None), "operator", None)
    return str(getattr(operator, "provider", "gemini"))


def default_model_name(profile: Any = None) -> str:
    """What runs without ``--model``: the profile's operator when it names an OpenAI-compatible
    endpoint (``profile``), else gemini with an API key, else the offline heuristic baseline."""
    return model_choice(None, profile)[0]


#: Why the keyless default is the heuristic baseline (``artemis run`` and ``artemis test`` say so).
NO_KEY_REASON = "no --model and no GEMINI_API_KEY (or GOOGLE_API_KEY) set"


def model_choice(model: str | None, profile: Any = None) -> tuple[str, str]:
    """(model name, why it was chosen) of a run given ``--model`` (or None) and its profile: the
    one rule ``default_model_name`` applies, with the reason the CLI shows the user."""
    if model:
        return model, f"--model {model}"
    if profile is not None and profile_provider(profile) == "openai":
        return "profile", "the profile's operator is an OpenAI-compatible endpoint"
    if has_api_key():
        return "gemini", "no --model; an API key is set"
    return "heuristic", NO_KEY_REASON
def provider_of(name: str) -> str:
    """Which provider a ``--model`` name runs on: openai, gemini, or the offline model's own name."""
    if name.startswith(OPENAI_PREFIX) or name == "profile":
        return "openai"
    if name.startswith("gemini"):
        return "gemini"
    return name


def resume_choice(run: dict[str, Any], model: str | None, base_url: str | None,
                  profile: Any = None) -> tuple[str, str | None, dict[str, Any]]:
    """(model name, base URL, override) a resume runs on: the session's recorded ``run`` config,
    with ``model`` (same provider only: UsageError naming both) and the endpoint from ``base_url``,
    else ``$ARTEMIS_OPENAI_BASE_URL`` (OpenAI-compatible sessions), else the recorded one. The
    override is ``{}`` when nothing changed, else the new ``model`` / ``base_url`` and what ``was``."""
    from artemis_cli.models.openai_provider import BASE_URL_ENV

    recorded = str(run.get("model") or default_model_name(profile))
    recorded_url = run.get("base_url")
    name = model.strip() if model else recorded
    if provider_of(name) != provider_of(recorded):
        raise UsageError(f"--model {name} runs on {provider_of(name)}, but the session ran {recorded} on "
                         f"{provider_of(recorded)}: a resume continues on the same provider",
                         hint=f"resume with another {provider_of(recorded)} model, or start a new run with "
                              f"--model {name}")
    url = base_url
    if url is None and provider_of(name) == "openai":
        url = os.environ.get(BASE_URL_ENV, "").strip() or None
    url = url or recorded_url
    if name == recorded and url == recorded_url:
        return name, url, {}
    return name, url, {"model": name, "base_url": url, "was": {"model": recorded, "base_url": recorded_url}}


def reference_script(task: Any) -> list[dict[str, Any]]:
    steps = getattr(task, "reference", None) or []
    out = []
    for step in steps:
        if hasattr(step, "model_dump"):
            out.append(step.model_dump(mode="json", exclude_none=True, by_alias=True))
        else:
            out.append(dict(step))
    return out


TIMEOUT_ENV = "ARTEMIS_GEMINI_TIMEOUT_S"
OPENAI_TIMEOUT_ENV = "ARTEMIS_OPENAI_TIMEOUT_S"
DEFAULT_TIMEOUT_S = 60.0
#: Local servers answer a long multimodal prompt more slowly than a cloud service.
DEFAULT_OPENAI_TIMEOUT_S = 120.0


def timeout_s(var: str = TIMEOUT_ENV, default: float = DEFAULT_TIMEOUT_S) -> float:
    """Seconds one model HTTP attempt may take: ``$var``, else ``default``."""
    raw = os.environ.get(var, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value <= 3600:
        raise ModelConfigError(f"{var} must be a number of seconds in (0, 3600], got {raw!r}",
                               hint=f"unset {var} to use the default of {default:g} s")
    return value


def gemini_timeout_s() -> float:
    """Seconds one Gemini HTTP attempt may take: ``$ARTEMIS_GEMINI_TIMEOUT_S``, default 60."""
    return timeout_s(TIMEOUT_ENV, DEFAULT_TIMEOUT_S)


def wire_options(role: Any) -> Any:
    from artemis_cli.models.openai_wire import WireOptions

    return WireOptions(tool_calls=getattr(role, "tool_calls", "native"),
                       max_image_side=getattr(role, "max_image_side", None))


def openai_endpoint(role: Any, base_url: str | None = None) -> tuple[str | None, str | None]:
    """(base URL, key variable) an OpenAI-compatible model for ``role`` talks to: ``base_url``,
    else the role's own (when its provider is openai), else ``$ARTEMIS_OPENAI_BASE_URL``, else
    None (api.openai.com); the role's ``api_key_env`` (None: OPENAI_API_KEY)."""
    from artemis_cli.models.openai_provider import BASE_URL_ENV

    own = role is not None and getattr(role, "provider", "gemini") == "openai"
    url = base_url or (role.base_url if own else None) or os.environ.get(BASE_URL_ENV, "").strip() or None
    return url, role.api_key_env if own else None


def openai_model(role: Any, *, model: str | None = None, base_url: str | None = None,
                 serves_all_roles: bool = False) -> Model:
    """An ``OpenAIModel`` for a profile role (``model`` / ``base_url`` override the role's). The
    endpoint: ``base_url``, else the role's, else ``$ARTEMIS_OPENAI_BASE_URL``, else api.openai.com."""
    from artemis_cli.models.openai_provider import OpenAIModel

    own = getattr(role, "provider", "gemini") == "openai"
    chain = [model] if model else list(role.chain)
    url, key_env = openai_endpoint(role, base_url)
    return OpenAIModel(chain, base_url=url, api_key_env=key_env, options=wire_options(role) if own else None,
                       timeout_s=timeout_s(OPENAI_TIMEOUT_ENV, DEFAULT_OPENAI_TIMEOUT_S),
                       serves_all_roles=serves_all_roles)


def gemini_model(chain: list[str]) -> Model:
    from artemis_cli.models.gemini import GeminiModel

    return GeminiModel(chain, base_url=os.environ.get("ARTEMIS_GEMINI_BASE_URL") or None,
                       timeout_s=gemini_timeout_s())


def build_model(name: str | None, *, task: Any, profile: Any, role: str = "operator",
                base_url: str | None = None) -> Model:
    """The operator model for ``--model NAME`` (None: :func:`default_model_name`).

    ``openai:NAME`` runs NAME on an OpenAI-compatible endpoint (``base_url``, else the profile
    operator's, else ``$ARTEMIS_OPENAI_BASE_URL``) for every role; ``profile`` (or no name with
    such a profile) runs each role as the profile sets it."""
    name = name or default_model_name(profile)
    roles = getattr(profile, "models", None)
    settings = getattr(roles, role, None)
    if base_url is not None and not name.startswith(OPENAI_PREFIX) and name != "profile":
        raise UsageError("--base-url applies to OpenAI-compatible models",
                         hint="use --model openai:NAME --base-url URL (Gemini's endpoint: $ARTEMIS_GEMINI_BASE_URL)")
    if name.startswith(OPENAI_PREFIX):
        model_name = name[len(OPENAI_PREFIX):].strip()
        if not model_name:
            raise UsageError("--model openai: needs the name the server serves", hint="e.g. --model openai:qwen2.5-vl-7b")
        return openai_model(settings, model=model_name, base_url=base_url, serves_all_roles=True)
    if name == "profile":
        if settings is None or settings.provider != "openai":
            raise UsageError("--model profile needs a profile whose operator role sets provider: openai")
        return openai_model(settings, base_url=base_url)
    if name == "heuristic":
        from artemis_cli.models.offline.heuristic import HeuristicModel

        return HeuristicModel()
    if name == "scripted":
        script = reference_script(task)
        if not script:
            raise UsageError(
                f"task {task.id!r} has no `reference` solution for the scripted model",
                hint="add a `reference:` list to the task file, or use --model heuristic",
            )
        from artemis_cli.models.offline.scripted import ScriptedModel

        return ScriptedModel(script)
    if name == "healer":
        from artemis_cli.models.offline.healer import HealerModel

        return HealerModel(reference_script(task))  # no reference: the plan comes with the request
    if name == "gemini" or name.startswith("gemini"):
        if settings is not None and settings.provider == "gemini":
            chain = list(settings.chain)
        else:  # the profile's operator is elsewhere: the loop's default Gemini chain
            from artemis_cli.config.profile import ROLE_DEFAULTS

            loop = getattr(profile, "loop", "flash")
            defaults = ROLE_DEFAULTS.get(loop, ROLE_DEFAULTS["flash"])[role]
            chain = [defaults["model"], *defaults["fallback"]]
        if name != "gemini":
            chain = [name, *[m for m in chain if m != name]]
        return gemini_model(chain)
    raise ModelConfigError(
        f"unknown model {name!r}",
        hint=f"use one of: {models_help()}",
    )


def role_model(operator: Model, profile: Any, role: str) -> Model | None:
    """The model for one of the profile's roles (visual_lens, chunk_lens, planner, validator),
    given the run's operator model; None when the operator is offline or not a provider model
    (the role then takes its mechanical or documented fallback).

    A model from ``--model openai:NAME`` serves every role. Otherwise each role runs as the
    profile sets it: on the operator's own client when provider and endpoint match (one
    connection pool, one key), else on a model of its own (a local operator with a cloud lens)."""
    from artemis_cli.models.gemini import GeminiModel
    from artemis_cli.models.openai_provider import OpenAIModel

    if operator.offline or not isinstance(operator, GeminiModel | OpenAIModel):
        return None  # offline, or a model of a test's own making: roles take their fallbacks
    settings = getattr(profile.models, role)
    if isinstance(operator, OpenAIModel) and operator.serves_all_roles:
        return operator.with_chain([operator.name], wire_options(settings) if settings.provider == "openai" else None)
    if settings.provider == "openai":
        candidate = openai_model(settings)
        if isinstance(operator, OpenAIModel) and isinstance(candidate, OpenAIModel) \
                and operator.endpoint == candidate.endpoint:
            return operator.with_chain(list(settings.chain), wire_options(settings))
        return candidate
    if isinstance(operator, GeminiModel):
        return operator.with_chain(list(settings.chain))
    if not has_api_key():
        raise ModelConfigError(f"the profile's {role} role runs on Gemini ({settings.model}), but no GEMINI_API_KEY "
                               "is set", hint=f"export GEMINI_API_KEY, or set models.{role}.provider: openai in the "
                                              "profile (or run with --model openai:NAME, which serves every role)")
    return gemini_model(list(settings.chain))


def check_role_models(operator: Model, profile: Any, *, lenses: bool = True) -> None:
    """Build every role model the run will use (the lenses when ``lenses``; the Pro agents on the
    Pro loop), so a role that cannot run (a Gemini role without a key, an unset api_key_env)
    stops the run before a session is created."""
    for role in roles_in_use(profile, lenses=lenses):
        role_model(operator, profile, role)


def roles_in_use(profile: Any, *, lenses: bool = True) -> list[str]:
    """The roles beside the operator that a run of ``profile`` calls: the Pro loop's planner and
    validator (its failure analyzer and checker run on them), then the two lenses."""
    roles = ["planner", "validator"] if getattr(profile, "loop", "flash") == "pro" else []
    return roles + (["visual_lens", "chunk_lens"] if lenses else [])
