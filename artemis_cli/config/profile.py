"""Profiles (``profiles/flash.yaml``, ``profiles/pro.yaml``; SPEC §3.2, §8, §13).

A profile picks the operator loop, the model (and fallback chain) for each role, and the memory
settings.  ``extends: NAME_OR_PATH`` deep-merges the profile over its parent: mappings merge key by
key, everything else (lists, scalars, null) replaces the parent's value.  ``name`` and
``extends`` are never inherited.  Roles not mentioned get the defaults of the profile's loop
(:data:`ROLE_DEFAULTS`), merged the same way.

``load_profile("flash")`` finds ``<dir>/profiles/flash.yaml`` (or ``<dir>/flash.yaml``) in the
current directory, then in the source checkout; anything containing a ``/`` or ending in
``.yaml``/``.yml`` is a path.  A parent named by ``extends`` is looked up next to the child first.
Errors name the file and line each bad value came from.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, PrivateAttr, Strict, model_validator

from artemis_cli.errors import ConfigError
from artemis_cli.paths import repo_root

from .task import Int, NonEmpty, StrictModel
from .validation import fail, validate_model
from .yaml_source import FieldPath, YamlDocument, load_yaml_file

Loop = Literal["flash", "pro"]
ROLES = ("operator", "planner", "validator", "visual_lens", "chunk_lens")

ROLE_DEFAULTS: dict[str, dict[str, dict[str, Any]]] = {
    "flash": {
        "operator": {"model": "gemini-2.5-flash", "fallback": ["gemini-2.0-flash"]},
        "planner": {"model": "gemini-2.5-flash", "fallback": ["gemini-2.0-flash"]},
        "validator": {"model": "gemini-2.5-flash", "fallback": ["gemini-2.0-flash"]},
        "visual_lens": {"model": "gemini-2.5-flash-lite", "fallback": ["gemini-2.0-flash-lite"]},
        "chunk_lens": {"model": "gemini-2.5-flash", "fallback": ["gemini-2.5-flash-lite"]},
    },
    "pro": {
        "operator": {"model": "gemini-2.5-pro", "fallback": ["gemini-2.5-flash"]},
        "planner": {"model": "gemini-2.5-pro", "fallback": ["gemini-2.5-flash"]},
        "validator": {"model": "gemini-2.5-flash", "fallback": ["gemini-2.0-flash"]},
        "visual_lens": {"model": "gemini-2.5-flash-lite", "fallback": ["gemini-2.0-flash-lite"]},
        "chunk_lens": {"model": "gemini-2.5-flash", "fallback": ["gemini-2.5-flash-lite"]},
    },
}

Bool = Annotated[bool, Strict()]
Ratio = Annotated[float, Field(gt=0, le=1)]


Provider = Literal["gemini", "openai"]
KEY_ENV_RE = r"^[A-Za-z_][A-Za-z0-9_]*$"


class ModelRole(StrictModel):
    """One role's model. ``provider: openai`` talks to any OpenAI-compatible endpoint
    (``base_url``, key from the environment variable ``api_key_env``, default OPENAI_API_KEY; a
    local server needs none). ``tool_calls: text`` drives a model that cannot call tools (it
    replies with one JSON action in its text); ``max_image_side`` caps the screenshots this model
    is sent (below the profile's ``screenshot.max_side``)."""

    provider: Provider = "gemini"
    model: NonEmpty
    fallback: list[NonEmpty] = Field(default_factory=list)
    temperature: float | None = Field(default=None, ge=0, le=2)
    base_url: NonEmpty | None = Field(default=None, pattern=r"^https?://[^\s/]+")
    api_key_env: NonEmpty | None = Field(default=None, pattern=KEY_ENV_RE)
    tool_calls: Literal["native", "text"] = "native"
    max_image_side: Int | None = Field(default=None, ge=64, le=8192)

    @model_validator(mode="after")
    def _endpoint_for_openai_only(self) -> ModelRole:
        if self.provider == "gemini":
            for key in ("base_url", "api_key_env"):
                if getattr(self, key) is not None:
                    raise fail(f"{key} applies to provider openai (Gemini takes its key from GEMINI_API_KEY and "
                               "its endpoint from ARTEMIS_GEMINI_BASE_URL)", key=key)
            if self.tool_calls != "native":
                raise fail("tool_calls: text applies to provider openai (Gemini models call tools)", key="tool_calls")
            if self.max_image_side is not None:
                raise fail("max_image_side applies to provider openai (for Gemini, set screenshot.max_side)",
                           key="max_image_side")
        return self

    @property
    def chain(self) -> list[str]:
        """The model followed by its fallbacks, in the order they are tried."""
        return [self.model, *self.fallback]


def _role(loop: str, role: str) -> Any:
    return Field(default_factory=lambda: ModelRole.model_validate(ROLE_DEFAULTS[loop][role]))


class ModelRoles(StrictModel):
    operator: ModelRole = _role("flash", "operator")
    planner: ModelRole = _role("flash", "planner")
    validator: ModelRole = _role("flash", "validator")
    visual_lens: ModelRole = _role("flash", "visual_lens")
    chunk_lens: ModelRole = _role("flash", "chunk_lens")


class RuntimeSettings(StrictModel):
    max_concurrency: Int = Field(default=2, ge=1)
    retry_limit: Int = Field(default=3, ge=0)
    flush_timeout_s: float = Field(default=30, gt=0)


class TranscriptSettings(StrictModel):
    #: the prompt's hard limit once the run starts (the effective budget is the smaller of this
    #: and the model server's context window less ``reply_reserve_tokens``, when it says)
    context_budget_tokens: Int = Field(default=80000, ge=1)
    soft_ratio: Ratio = 0.7
    hard_ratio: Ratio = 0.9
    min_active_steps: Int = Field(default=5, ge=0)
    #: kept free of the server's context window for the model's reply (thoughts and the call)
    reply_reserve_tokens: Int = Field(default=1024, ge=0)
    #: the L3 emergency snapshot fires at most once per this many steps (it rewrites F)
    emergency_interval_steps: Int = Field(default=12, ge=1)
    image_scrub_depth: Int = Field(default=3, ge=0)
    pending_grace_steps: Int = Field(default=3, ge=0)
    xml_scrub_depth: Int = Field(default=1, ge=0)
    image_scrub_batch: Int = Field(default=3, ge=1)
    similarity_hint: Bool = True
    similarity_max_distance: Int = Field(default=5, ge=0, le=64)

    @model_validator(mode="after")
    def _ratios(self) -> TranscriptSettings:
        if self.soft_ratio >= self.hard_ratio:
            raise fail(
                f"soft_ratio ({self.soft_ratio}) must be below hard_ratio ({self.hard_ratio})",
                key="soft_ratio",
            )
        return self


class ChunkingSettings(StrictModel):
    max_steps: Int = Field(default=12, ge=1)
    target_source_tokens: Int = Field(default=2000, ge=1)
    max_chunks: Int = Field(default=8, ge=1)
    max_eras: Int | None = Field(default=None, ge=1)
    #: F's token budget: folding keeps F within it (null = 2.5% of context_budget_tokens, at
    #: least 1,000), so the prompt plateaus however long the task runs.
    frozen_budget_tokens: Int | None = Field(default=None, ge=200)
    #: re-sends of a segment whose chunk lens failed (at the next trigger or under pressure)
    max_resends: Int = Field(default=3, ge=0)

    @property
    def effective_max_eras(self) -> int:
        """``max_eras``, where null means "same as max_chunks" (SPEC §10.3)."""
        return self.max_eras if self.max_eras is not None else self.max_chunks


class RecallSettings(StrictModel):
    enabled: Bool = True
    max_results: Int = Field(default=5, ge=1)
    max_text_tokens: Int = Field(default=2000, ge=1)
    max_image_steps: Int = Field(default=1, ge=0)


MediaResolution = Literal["low", "medium", "high"]


class ScreenshotSettings(StrictModel):
    """The screenshot the models see (the recorded one stays full size). ``max_side`` scales the
    longest side down (null sends the device's pixels); ``media_resolution`` is sent to Gemini 3
    models, which price an image by it (null leaves the service default); ``marks`` draws each
    listed element's index at its box on the operator's copy (set-of-marks, ``perception.marks``;
    the validator, planner and lenses get it unmarked)."""

    max_side: Int | None = Field(default=1152, ge=64, le=8192)
    media_resolution: MediaResolution | None = "medium"
    marks: bool = True


class MemorySettings(StrictModel):
    runtime: RuntimeSettings = Field(default_factory=RuntimeSettings)
    transcript: TranscriptSettings = Field(default_factory=TranscriptSettings)
    chunking: ChunkingSettings = Field(default_factory=ChunkingSettings)
    recall: RecallSettings = Field(default_factory=RecallSettings)


class HealSettings(StrictModel):
    """Self-healing replay (``artemis replay --heal``): a heal that has not rejoined the recording
    after ``max_steps`` model steps ends the replay as failed."""

    max_steps: Int = Field(default=15, ge=1, le=1000)


class ModelPrice(StrictModel):
    """A model's price in USD per million tokens (profile ``prices:``): overrides genai-prices
    or prices a model it does not know (a local server's model costs 0 unless priced here).
    ``cached_input`` defaults to ``input``."""

    input: float = Field(ge=0)
    cached_input: float | None = Field(default=None, ge=0)
    output: float = Field(ge=0)


class Profile(StrictModel):
    name: NonEmpty
    extends: NonEmpty | None = None
    loop: Loop
    coordinates: Literal["pixels", "normalized"] = "pixels"
    models: ModelRoles = Field(default_factory=ModelRoles)
    screenshot: ScreenshotSettings = Field(default_factory=ScreenshotSettings)
    #: the Android know-how in the operator's system text: full, or short (a run fitted to a
    #: small context window gets short: ``operators.budget_fit``)
    knowhow: Literal["full", "short"] = "full"
    memory: MemorySettings = Field(default_factory=MemorySettings)
    heal: HealSettings = Field(default_factory=HealSettings)
    max_steps: Int | None = Field(default=None, ge=1, le=10000)
    step_delay_ms: Int = Field(default=0, ge=0)
    settle_ms: Int = Field(default=0, ge=0)
    #: after an action, watch the screen until it stops changing, at most this long (0: only settle_ms);
    #: an observation that alone took longer still gets its one confirming screenshot
    settle_max_ms: Int = Field(default=2000, ge=0, le=60000)
    #: model name -> its price (``models.pricing``): overrides or adds to genai-prices
    prices: dict[NonEmpty, ModelPrice] = Field(default_factory=dict)
    #: stop a run cleanly before the model call that would pass this many USD (``--max-cost``)
    max_cost: float | None = Field(default=None, gt=0)

    _files: list[Path] = PrivateAttr(default_factory=list)

    @classmethod
    def _prepare(cls, data: Any) -> Any:
        """Fill roles the profile does not set with its loop's defaults."""
        if not isinstance(data, dict):
            return data
        raw_loop = data.get("loop")
        loop = raw_loop if isinstance(raw_loop, str) and raw_loop in ROLE_DEFAULTS else "flash"  # [] is unhashable
        models = data.get("models", {})
        if isinstance(models, dict):
            defaults = copy.deepcopy(ROLE_DEFAULTS[loop])
            for role, settings in models.items():
                # a role moved to another provider does not inherit the default Gemini fallbacks
                if (isinstance(settings, dict) and role in defaults and settings.get("provider", "gemini") != "gemini"
                        and "fallback" not in settings):
                    defaults[role] = {k: v for k, v in defaults[role].items() if k != "fallback"}
            data = {**data, "models": deep_merge(defaults, models)}
        return data

    @property
    def files(self) -> list[Path]:
        """The files (absolute) this profile was built from: the requested one first, then its parents."""
        return list(self._files)


# --- loading ---------------------------------------------------------------------------------------


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """``override`` over ``base``: mappings merge key-wise, anything else replaces."""
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _without_other_provider_fallbacks(base: dict[str, Any], override: Any) -> dict[str, Any]:
    """``base`` minus the fallbacks of roles that ``override`` moves to another provider without
    naming fallbacks of its own: a Gemini fallback cannot serve an OpenAI-compatible role."""
    models = override.get("models") if isinstance(override, dict) else None
    base_models = base.get("models")
    if not isinstance(models, dict) or not isinstance(base_models, dict):
        return base
    trimmed = dict(base_models)
    for role, settings in models.items():
        parent = base_models.get(role)
        if (isinstance(settings, dict) and isinstance(parent, dict) and "provider" in settings
                and "fallback" not in settings and settings["provider"] != parent.get("provider", "gemini")):
            trimmed[role] = {k: v for k, v in parent.items() if k != "fallback"}
    return {**base, "models": trimmed}


def _looks_like_path(name: str) -> bool:
    return "/" in name or os.sep in name or name.endswith((".yaml", ".yml"))


def _display(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def default_search_dirs() -> list[Path]:
    dirs = [Path.cwd()]
    root = repo_root()
    if root is not None and root.resolve() != Path.cwd().resolve():
        dirs.append(root)
    return dirs


def _candidates(name: str, dirs: list[Path]) -> list[Path]:
    out = []
    for d in dirs:
        out += [d / "profiles" / f"{name}.yaml", d / f"{name}.yaml"]
    return out


def resolve_profile_path(name_or_path: str, *, search_dirs: list[Path] | None = None,
                         relative_to: Path | None = None) -> Path | None:
    """The file a profile name or path refers to (None when no such file exists)."""
    if _looks_like_path(name_or_path):
        path = Path(name_or_path).expanduser()
        if not path.is_absolute() and relative_to is not None and (relative_to / path).is_file():
            return relative_to / path
        return path if path.is_file() else None
    dirs = list(search_dirs) if search_dirs is not None else default_search_dirs()
    if relative_to is not None:
        dirs.insert(0, relative_to)
    return next((c for c in _candidates(name_or_path, dirs) if c.is_file()), None)


def available_profiles(search_dirs: list[Path] | None = None) -> list[str]:
    """The profile names ``--profile NAME`` finds: every ``profiles/*.yaml`` of the search dirs
    (the current directory, the source checkout), and a ``*.yaml`` beside them only when it is
    written as a profile (:func:`looks_like_profile`) — tasks and other YAML files are not
    profiles because they sit in the directory a command runs in."""
    names: set[str] = set()
    for d in search_dirs if search_dirs is not None else default_search_dirs():
        if (d / "profiles").is_dir():
            names.update(p.stem for p in (d / "profiles").glob("*.yaml"))
        if d.is_dir():
            names.update(p.stem for p in d.glob("*.yaml") if looks_like_profile(p))
    return sorted(names)


def looks_like_profile(path: Path) -> bool:
    """``path`` holds a mapping with ``loop:`` or ``extends:`` and only a profile's top-level keys."""
    import yaml

    try:
        if path.stat().st_size > 1 << 20:
            return False
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return False
    return (isinstance(data, dict) and bool({"loop", "extends"} & set(data))
            and set(map(str, data)) <= set(Profile.model_fields))


class _ChainLocator:
    """Locates a merged value in the child-most file of the extends chain that sets it."""

    def __init__(self, docs: list[YamlDocument], merged: dict[str, Any]) -> None:
        self.docs = docs  # requested profile first
        self.merged = YamlDocument(docs[0].path, merged)

    def value_at(self, path: FieldPath) -> tuple[bool, Any]:
        return self.merged.value_at(path)

    def node_line(self, path: FieldPath) -> tuple[str, int | None]:
        for end in range(len(path), -1, -1):
            for doc in self.docs:
                if doc.has(path[:end]):
                    return doc.path, doc.lines[path[:end]]
        return self.docs[0].path, None

    def key_line(self, path: FieldPath) -> tuple[str, int | None]:
        for doc in self.docs:
            if path in doc.key_lines:
                return doc.path, doc.key_lines[path]
        return self.node_line(path)


def load_profile(name_or_path: str, *, search_dirs: list[Path] | None = None) -> Profile:
    """Load a profile by name (``flash``, ``pro``, …) or path, following ``extends:``."""
    path = resolve_profile_path(name_or_path, search_dirs=search_dirs)
    if path is None:
        raise _not_found(name_or_path, search_dirs, None, None)
    docs: list[YamlDocument] = []
    seen: list[Path] = []
    while True:
        if path.resolve() in seen:
            chain = " → ".join(d.path for d in docs) + f" → {_display(path)}"
            raise ConfigError(docs[-1].path, docs[-1].key_line_of(("extends",)), "extends",
                              f"extends cycle: {chain}")
        seen.append(path.resolve())
        doc = load_yaml_file(_display(path))
        docs.append(doc)
        parent = doc.data.get("extends")
        if parent is None:
            break
        if not isinstance(parent, str) or not parent.strip():
            raise ConfigError(doc.path, doc.line_of(("extends",)), "extends",
                              "must be a profile name or a path to a profile file")
        parent_path = resolve_profile_path(parent, search_dirs=search_dirs, relative_to=path.parent)
        if parent_path is None:
            raise _not_found(parent, search_dirs, doc, doc.line_of(("extends",)))
        path = parent_path

    merged: dict[str, Any] = {}
    for doc in reversed(docs):
        merged = deep_merge(_without_other_provider_fallbacks(merged, doc.data), doc.data)
    child = docs[0].data
    merged["name"] = child.get("name", Path(docs[0].path).stem)
    merged.pop("extends", None)
    if "extends" in child:
        merged["extends"] = child["extends"]
    profile = validate_model(Profile, merged, _ChainLocator(docs, merged))
    profile._files = seen
    return profile


def _not_found(name: str, search_dirs: list[Path] | None, doc: YamlDocument | None,
               line: int | None) -> ConfigError:
    if _looks_like_path(name):
        message = f"profile file '{name}' not found"
    else:
        known = available_profiles(search_dirs)
        message = f"no profile named '{name}'" + (f" (available: {', '.join(known)})" if known else "")
    if doc is None:
        exc = ConfigError(name, None, None, message)
    else:
        exc = ConfigError(doc.path, line, "extends", message)
    exc.hint = "use flash, pro, or a path to a profile .yaml file"
    return exc
