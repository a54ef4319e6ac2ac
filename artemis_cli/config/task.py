"""Task files (``tasks/*.yaml``, SPEC §3.1): schema, loading, and validation with file:line errors.

```yaml
id: settings-wifi-on            # slug; defaults to the file name (slugified)
goal: Turn on Wi-Fi             # what the operator is told (required)
app: com.android.settings       # optional package, launched before step 1
profile: flash                  # flash | pro | path to a profile
max_steps: 30                   # 1..10000
device: sim                     # sim: written for the simulated phone | any (default: sim with a sim: block)
setup: [{shell: settings put global wifi_on 0}]
success:                        # checked after the run, never shown to the model
  - {shell: settings get global wifi_on, equals: "1"}   # or contains: / matches: (regex)
  - visible: Wi-Fi              # | not_visible: … | app: com.android.settings (foreground)
  - answer: {contains: Wi-Fi}   # the finish answer: equals: / contains: / matches: (regex)
  - finished: {success: false}  # how the model called finish (false: the task must be refused)
inject: [{at_step: 5, text: Use the quick settings panel instead}]
secrets: {shop_password: the demo account's password}   # name -> one-line description (below)
reference: [...]                # see below
sim: {world: default, seed: 0, popups: true, faults: null, latency: off, packages: null}   # faults e.g. "drop:0.1,garbage_xml:0.2": artemis_cli/sim/faults.py; latency off/pixel/fast: artemis_cli/sim/latency.py; packages: a real phone's `pm list packages` output, relative to this file
                                # shop_password_env: NAME — the Shop's password is $NAME (default artemis123)
tags: [settings]
description: free text
```

Success checks look at the device after the run (``shell``, ``visible``, ``not_visible``,
``app``) or at how the model ended it (``answer``, ``finished``). ``answer`` takes exactly one of
``equals``, ``contains``, ``matches`` with the same meaning as a shell check's (the answer with
surrounding whitespace stripped; ``matches`` is a Python regex searched in it; all
case-sensitive, so ``(?i)`` for a case-insensitive regex). ``finished: {success: false}`` says the
task must be refused or given up: it passes only when the model called ``finish`` with
``success: false`` (``{success: true}``: only when it called finish claiming success). Both fail
when the model never called finish (it ran out of steps, or the session stopped). Combine them
with device checks to say what must (not) have happened, e.g. a refusal that deletes nothing::

    success:
      - finished: {success: false}
      - answer: {matches: "(?i)will not|won't|cannot|can't"}
      - shell: content query --uri content://com.android.contacts/contacts | wc -l
        equals: "15"

``device`` says where the task is meant to run. ``sim`` (the default for a task with a ``sim:``
block): written for the simulated phone, so ``artemis run`` uses the simulated phone unless
``--device`` names another one ($ANDROID_SERIAL and an attached phone do not move it). ``any``:
the usual choice ($ANDROID_SERIAL, the one attached device, else the simulated phone); a task
with neither ``device`` nor ``sim:`` is ``any``.

``secrets`` names the credentials the task needs, each with a one-line description. The model
is told the names and descriptions (never a value) and types one with ``type_text(secret=NAME)``;
the value comes from ``$ARTEMIS_SECRET_<NAME>`` (NAME upper-cased: ``ARTEMIS_SECRET_SHOP_PASSWORD``),
else ``$ARTEMIS_SECRET``, else a hidden prompt on a terminal — a missing one is a usage error before
the session starts — and no record ever holds it (``artemis_cli.operators.secrets``). Non-secret
facts a task needs (a username) belong in its goal. Names are identifiers (letters, digits, ``_``).

Unknown keys are errors everywhere.  Field paths in errors are dotted with 0-based indices:
``success[1].equals``, ``reference[3].tap.text``.

Reference actions (what the scripted model plays; one single-key mapping per list item):

- ``tap: SELECTOR`` / ``long_press: SELECTOR``
- ``type: {text: "hello", into: SELECTOR?, clear: false, submit: false}`` — ``into`` focuses a
  field first; ``clear`` empties it; ``submit`` presses enter afterwards. ``secret: NAME`` instead
  of ``text`` types one of the task's ``secrets`` (``type: {secret: shop_password, into: {id:
  password}, submit: true}``): a reference never holds a password.
- ``swipe: up|down|left|right`` or ``swipe: {direction: up, on: SELECTOR?}`` or
  ``swipe: {from: [x, y], to: [x, y]}`` — the direction is the finger's movement (``up`` reveals
  content further down), ``on`` swipes inside that element instead of the whole screen.
- ``key: back|home|enter|recents|delete``
- ``launch: com.example.app`` (package, or an app name the device can resolve)
- ``wait: 1.5`` (seconds, 0..3600)
- ``note: {key: str, content: str}`` (``save_note``)
- ``finish: {success: true, answer: ""}`` (``finish:`` alone means success with no answer)

A SELECTOR is a mapping with at least one of ``text`` (exact label), ``text_contains``, ``id``
(resource-id, full ``pkg:id/name`` or just ``name``), ``desc`` (content-desc), ``class`` (short
``Button`` or full ``android.widget.Button``), plus ``nth`` (0-based, among matches in screen
order, default 0); or pixel ``x`` and ``y`` (both).  Whole numbers in label fields are read as
text (``text: 5`` is the label "5").
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    Strict,
    field_validator,
    model_validator,
)

from .validation import DocumentLocator, PlainLocator, fail, show, validate_model
from .yaml_source import load_yaml_file

# --- field types -----------------------------------------------------------------------------

_SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_PACKAGE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _int_as_text(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


def _check_slug(value: str) -> str:
    if not _SLUG.match(value):
        raise fail(
            f"must be a slug: lowercase letters, digits, '.', '_' or '-', starting with a letter "
            f"or digit (got {value!r})"
        )
    return value


def _check_package(value: str) -> str:
    if not _PACKAGE.match(value):
        raise fail(f"must be an Android package name such as com.android.settings (got {value!r})")
    return value


def _check_env_name(value: str) -> str:
    if not _ENV_NAME.match(value):
        raise fail(f"must be an environment variable name such as SHOP_PASSWORD (got {value!r})")
    return value


_SECRET_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: The longest one-line description a secret may have.
SECRET_DESCRIPTION_CHARS = 200


def _check_secret_name(value: str) -> str:
    if not _SECRET_NAME.match(value):
        raise fail(f"a secret's name must be an identifier such as shop_password: letters, digits and '_', "
                   f"not starting with a digit (got {value!r})")
    return value


def _check_one_line(value: str) -> str:
    if not value.strip():
        raise fail("a secret needs a one-line description of what it is (e.g. the demo account's password)")
    if "\n" in value.strip() or "\r" in value:
        raise fail("a secret's description must be one line")
    if len(value) > SECRET_DESCRIPTION_CHARS:
        raise fail(f"a secret's description must be at most {SECRET_DESCRIPTION_CHARS} characters (got {len(value)})")
    return value.strip()


def _check_point(value: Any) -> Any:
    if not (isinstance(value, list | tuple) and len(value) == 2):
        raise fail(f"must be a point [x, y] (got {show(value)})")
    return value


def _check_not_blank(value: str) -> str:
    if not value.strip():
        raise fail("must not be empty")
    return value


Int = Annotated[int, Strict()]
NonEmpty = Annotated[str, AfterValidator(_check_not_blank)]
Text = Annotated[str, BeforeValidator(_int_as_text)]
Label = Annotated[str, BeforeValidator(_int_as_text), AfterValidator(_check_not_blank)]
Slug = Annotated[str, AfterValidator(_check_slug)]
Package = Annotated[str, AfterValidator(_check_package)]
EnvName = Annotated[str, AfterValidator(_check_env_name)]
SecretName = Annotated[str, AfterValidator(_check_secret_name)]
OneLine = Annotated[str, AfterValidator(_check_one_line)]
Coordinate = Annotated[int, Strict(), Field(ge=0)]
Point = Annotated[tuple[Coordinate, Coordinate], Field(strict=False), BeforeValidator(_check_point)]
Direction = Literal["up", "down", "left", "right"]
#: the keys a reference step may press (device.protocol.KEY_NAMES; a test keeps them equal)
KeyName = Literal["back", "home", "enter", "recents", "delete", "tab", "escape", "search", "menu", "volume_up",
                  "volume_down"]

ACTIONS = ("tap", "double_tap", "long_press", "type", "swipe", "scroll", "drag", "key", "launch", "open_url", "stop",
           "wait", "note", "finish")
CHECK_KINDS = ("shell", "visible", "not_visible", "app", "answer", "finished")
COMPARATORS = ("equals", "contains", "matches")


class StrictModel(BaseModel):
    """Base of every schema model: unknown keys are errors, no silent type coercion."""

    model_config = ConfigDict(extra="forbid", strict=True)

    @model_validator(mode="before")
    @classmethod
    def _require_mapping(cls, data: Any) -> Any:
        data = cls._prepare(data)
        if not isinstance(data, dict | BaseModel):
            raise fail(f"must be a mapping{cls._mapping_hint()} (got {show(data)})")
        return data

    @classmethod
    def _prepare(cls, data: Any) -> Any:
        """Expand shorthands before validation (overridden by subclasses)."""
        return data

    @classmethod
    def _mapping_hint(cls) -> str:
        return ""


# --- selectors and reference actions ------------------------------------------------------------


class Selector(StrictModel):
    """How a reference action finds its element. See the module docstring."""

    text: Label | None = None
    text_contains: Label | None = None
    id: Label | None = None
    desc: Label | None = None
    class_name: NonEmpty | None = Field(default=None, alias="class")
    nth: Int = Field(default=0, ge=0)
    x: Coordinate | None = None
    y: Coordinate | None = None

    @model_validator(mode="after")
    def _check(self) -> Selector:
        if (self.x is None) != (self.y is None):
            given, other = ("x", "y") if self.x is not None else ("y", "x")
            raise fail(f"pixel '{given}' needs '{other}' too", key=given)
        if not self.has_semantics and self.x is None:
            raise fail("a selector needs at least one of text, text_contains, id, desc, class, or x and y")
        return self

    @property
    def has_semantics(self) -> bool:
        return any(v is not None for v in (self.text, self.text_contains, self.id, self.desc, self.class_name))


class TypeSpec(StrictModel):
    """``text`` to type, or ``secret``: the name of one of the task's ``secrets`` (its value is
    never in the task)."""

    text: Text | None = None
    secret: SecretName | None = None
    into: Selector | None = None
    clear: Annotated[bool, Strict()] = False
    submit: Annotated[bool, Strict()] = False

    @model_validator(mode="after")
    def _text_or_secret(self) -> TypeSpec:
        if self.text is not None and self.secret is not None:
            raise fail("give 'text' or 'secret', not both", key="secret")
        if self.text is None and self.secret is None:
            raise fail("a type step needs 'text' (what to type) or 'secret' (the name of one of the task's secrets)")
        return self


class SwipeSpec(StrictModel):
    """``swipe: up`` is read as ``{direction: up}``."""

    direction: Direction | None = None
    on: Selector | None = None
    from_: Point | None = Field(default=None, alias="from")
    to: Point | None = None

    @classmethod
    def _prepare(cls, data: Any) -> Any:
        return {"direction": data} if isinstance(data, str) else data

    @model_validator(mode="after")
    def _check(self) -> SwipeSpec:
        if self.from_ is not None or self.to is not None:
            if self.direction is not None:
                raise fail("use either 'direction' or 'from'/'to', not both", key="direction")
            if self.on is not None:
                raise fail("'on' goes with 'direction', not with 'from'/'to'", key="on")
            if self.from_ is None or self.to is None:
                given, other = ("from", "to") if self.from_ is not None else ("to", "from")
                raise fail(f"'{given}' needs '{other}' too", key=given)
        elif self.direction is None:
            raise fail("a swipe needs a direction (up, down, left, right) or 'from: [x, y]' and 'to: [x, y]'")
        return self


class ScrollSpec(StrictModel):
    """``scroll: down`` is read as ``{direction: down}``: the content's direction (what to see)."""

    direction: Direction
    on: Selector | None = None
    to_end: Annotated[bool, Strict()] = False

    @classmethod
    def _prepare(cls, data: Any) -> Any:
        return {"direction": data} if isinstance(data, str) else data


class DragSpec(StrictModel):
    """``drag: {from: {text: A}, to: {text: B}}``; either end may be a point ``{x: …, y: …}``."""

    from_: Selector = Field(alias="from")
    to: Selector


class NoteSpec(StrictModel):
    key: NonEmpty
    content: Text


class FinishSpec(StrictModel):
    success: Annotated[bool, Strict()] = True
    answer: Text = ""


class ReferenceAction(StrictModel):
    """One step of a known solution: exactly one of the fields is set; ``kind`` names it."""

    tap: Selector | None = None
    double_tap: Selector | None = None
    long_press: Selector | None = None
    type: TypeSpec | None = None
    swipe: SwipeSpec | None = None
    scroll: ScrollSpec | None = None
    drag: DragSpec | None = None
    key: KeyName | None = None
    launch: NonEmpty | None = None
    open_url: NonEmpty | None = None
    stop: NonEmpty | None = None
    wait: float | None = Field(default=None, ge=0, le=3600)
    note: NoteSpec | None = None
    finish: FinishSpec | None = None

    @classmethod
    def _prepare(cls, data: Any) -> Any:
        if isinstance(data, dict) and "finish" in data and data["finish"] is None:
            return {**data, "finish": {}}
        return data

    @classmethod
    def _mapping_hint(cls) -> str:
        return f" with one action ({', '.join(ACTIONS)}), e.g. '- tap: {{text: OK}}'"

    @model_validator(mode="after")
    def _exactly_one(self) -> ReferenceAction:
        given = [name for name in ACTIONS if name in self.model_fields_set]
        if not given:
            raise fail(f"empty step: expected one action ({', '.join(ACTIONS)})")
        if len(given) > 1:
            raise fail(
                f"one action per step, found '{given[0]}' and '{given[1]}'; put each in its own list item",
                key=given[1],
            )
        if getattr(self, given[0]) is None:
            raise fail(f"'{given[0]}' needs a value", key=given[0])
        return self

    @property
    def kind(self) -> str:
        return next(name for name in ACTIONS if getattr(self, name) is not None)

    @property
    def value(self) -> Any:
        return getattr(self, self.kind)


# --- other task parts ----------------------------------------------------------------------------


class SetupStep(StrictModel):
    shell: NonEmpty


def _check_regex(value: str | None) -> str | None:
    if value is not None:
        try:
            re.compile(value)
        except (re.error, RecursionError, OverflowError) as exc:
            raise fail(f"invalid regular expression: {exc}") from None
    return value


def _one_comparator(model: BaseModel, what: str) -> None:
    given = [name for name in COMPARATORS if getattr(model, name) is not None]
    if not given:
        raise fail(f"{what} needs one of equals, contains, matches")
    if len(given) > 1:
        raise fail(f"use one of equals, contains, matches (found '{given[0]}' and '{given[1]}')", key=given[1])


class AnswerCheck(StrictModel):
    """``answer: {contains: Wi-Fi}``: exactly one of equals/contains/matches, compared with the
    ``finish`` answer like a shell check's output (stripped; ``matches`` is a regex search)."""

    equals: Text | None = None
    contains: Text | None = None
    matches: str | None = None

    @field_validator("matches")
    @classmethod
    def _regex(cls, value: str | None) -> str | None:
        return _check_regex(value)

    @model_validator(mode="after")
    def _exactly_one(self) -> AnswerCheck:
        _one_comparator(self, "an answer check")
        return self

    @classmethod
    def _mapping_hint(cls) -> str:
        return " with one of equals, contains, matches, e.g. 'answer: {contains: Wi-Fi}'"


class FinishedCheck(StrictModel):
    """``finished: {success: false}``: the model called finish with this ``success`` (false: the
    task must be refused or given up)."""

    success: Annotated[bool, Strict()]

    @classmethod
    def _mapping_hint(cls) -> str:
        return ", e.g. 'finished: {success: false}'"


class SuccessCheck(StrictModel):
    """Exactly one of ``shell`` (with exactly one of equals/contains/matches), ``visible``,
    ``not_visible`` (text on the final screen), ``app`` (foreground package), ``answer`` (the
    finish answer: ``{equals|contains|matches: …}``) or ``finished`` (``{success: true|false}``:
    how the model called finish; ``false`` = the task must be refused). ``kind`` names it.
    ``equals`` and ``contains`` compare against the command's output with surrounding whitespace
    stripped; ``matches`` is a Python regex searched in it."""

    shell: NonEmpty | None = None
    equals: Text | None = None
    contains: Text | None = None
    matches: str | None = None
    visible: Label | None = None
    not_visible: Label | None = None
    app: Package | None = None
    answer: AnswerCheck | None = None
    finished: FinishedCheck | None = None

    @field_validator("matches")
    @classmethod
    def _regex(cls, value: str | None) -> str | None:
        return _check_regex(value)

    @model_validator(mode="after")
    def _exactly_one(self) -> SuccessCheck:
        kinds = [name for name in CHECK_KINDS if getattr(self, name) is not None]
        comparators = [name for name in COMPARATORS if getattr(self, name) is not None]
        if not kinds:
            empty = [name for name in CHECK_KINDS if name in self.model_fields_set]
            if empty:
                raise fail(f"'{empty[0]}' needs a value", key=empty[0])
            raise fail(f"a success check needs one of {', '.join(CHECK_KINDS)}")
        if len(kinds) > 1:
            raise fail(
                f"one check per item, found '{kinds[0]}' and '{kinds[1]}'; put each in its own list item",
                key=kinds[1],
            )
        if kinds[0] == "shell":
            _one_comparator(self, "a shell check")
        elif comparators and kinds[0] == "answer":
            raise fail(f"put '{comparators[0]}' inside answer, e.g. 'answer: {{{comparators[0]}: …}}'",
                       key=comparators[0])
        elif comparators:
            raise fail(f"'{comparators[0]}' only goes with 'shell'", key=comparators[0])
        return self

    @property
    def kind(self) -> str:
        return next(name for name in CHECK_KINDS if getattr(self, name) is not None)


class Injection(StrictModel):
    at_step: Int = Field(ge=1)
    text: NonEmpty


class SimOptions(StrictModel):
    world: NonEmpty = "default"
    seed: Int = Field(default=0, ge=0)
    popups: Annotated[bool, Strict()] = True
    faults: NonEmpty | None = None
    #: Device-latency profile (artemis_cli/sim/latency.py): off, pixel or fast (YAML reads a bare
    #: ``off`` as false: that means off too).
    latency: Annotated[Literal["off", "pixel", "fast"],
                       BeforeValidator(lambda v: "off" if v is False else v)] = "off"
    #: The variable holding the Shop's password: the task (and so the session) names it, never
    #: holds it, like every secret (SPEC §5 invariant 5).
    shop_password_env: EnvName | None = None
    #: A real phone's ``adb shell pm list packages`` output (relative to the task file): each
    #: package is installed on the sim as a stub app (sim/worlds/stub.py).
    packages: NonEmpty | None = None
    #: Apps ask for runtime permissions on first launch (the Clock: POST_NOTIFICATIONS), as on
    #: Android 13+; a task not about that dialog grants it in ``setup:`` (``pm grant``).
    permission_prompts: Annotated[bool, Strict()] = True
    #: The phone starts on the lock screen (swipe up or ``input keyevent 82`` unlocks).
    locked: Annotated[bool, Strict()] = False


class Task(StrictModel):
    id: Slug
    goal: NonEmpty
    app: Package | None = None
    profile: NonEmpty = "flash"
    max_steps: Int = Field(default=30, ge=1, le=10000)
    #: Where the task is meant to run: ``sim`` (the simulated phone) or ``any``; None = ``sim``
    #: when the task has a ``sim:`` block, else ``any`` (:attr:`written_for_sim`).
    device: Literal["sim", "any"] | None = None
    setup: list[SetupStep] = Field(default_factory=list)
    success: list[SuccessCheck] = Field(default_factory=list)
    inject: list[Injection] = Field(default_factory=list)
    reference: list[ReferenceAction] = Field(default_factory=list)
    #: Credentials the task needs: name -> one-line description (the model is told both, never a
    #: value; ``operators.secrets`` resolves the values).
    secrets: dict[SecretName, OneLine] = Field(default_factory=dict)
    sim: SimOptions | None = None
    tags: list[NonEmpty] = Field(default_factory=list)
    description: str | None = None

    _source_path: Path | None = PrivateAttr(default=None)

    @property
    def written_for_sim(self) -> bool:
        """True when the task is meant for the simulated phone (``device: sim``, or a ``sim:``
        block and no ``device: any``): ``--device`` alone moves it to another device."""
        return self.device == "sim" or (self.device is None and self.sim is not None)

    @property
    def source_path(self) -> Path | None:
        """The file this task was loaded from (None for ``--goal`` tasks)."""
        return self._source_path


# --- loading -------------------------------------------------------------------------------------


def slugify(text: str, *, max_length: int = 48) -> str:
    """``"Turn on Wi-Fi!"`` -> ``"turn-on-wi-fi"`` (never empty: falls back to ``"task"``)."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-._")[:max_length].strip("-._")
    return slug or "task"


def load_task(path: str | Path) -> Task:
    """Load and validate a task file. Any problem raises one ``ConfigError`` (``.errors`` has all)."""
    doc = load_yaml_file(path)
    data = dict(doc.data)
    data.setdefault("id", slugify(Path(path).stem))
    task = validate_model(Task, data, DocumentLocator(doc))
    task._source_path = Path(path)
    _check_secrets(task, doc)
    if task.sim is not None and task.sim.packages is not None:
        _check_sim_packages(task.sim, Path(path), doc)
    return task


def _check_secrets(task: Task, doc: Any) -> None:
    """Two secrets whose variables would be one (``a`` and ``A``), and reference steps typing a
    secret the task does not declare, are errors at their own line."""
    from artemis_cli.errors import ConfigError

    seen: dict[str, str] = {}
    for name in task.secrets:
        other = seen.setdefault(name.upper(), name)
        if other != name:
            raise ConfigError(doc.path, doc.key_line_of(("secrets", name)), f"secrets.{name}",
                              f"{name!r} and {other!r} are one variable (ARTEMIS_SECRET_{name.upper()}); "
                              "rename one")
    for i, step in enumerate(task.reference):
        typed = step.type.secret if step.type is not None else None
        if typed is not None and typed not in task.secrets:
            declared = f"its secrets: {', '.join(task.secrets)}" if task.secrets else "it declares none"
            raise ConfigError(doc.path, doc.line_of(("reference", i, "type", "secret")), f"reference[{i}].type.secret",
                              f"the task has no secret named {typed!r} ({declared}); add it under secrets:")


def _check_sim_packages(sim: SimOptions, path: Path, doc: Any) -> None:
    """``sim.packages`` made relative to the task file, and read now so a bad list is reported
    when the task loads (its own file and line), not when the phone is built."""
    from artemis_cli.errors import ConfigError
    from artemis_cli.perception.packages import read_package_file

    given = Path(str(sim.packages)).expanduser()
    resolved = given if given.is_absolute() else path.parent / given
    if not resolved.is_file():
        raise ConfigError(doc.path, doc.line_of(("sim", "packages")), "sim.packages",
                          f"no such file {str(resolved)!r} (a relative path is relative to the task file)")
    read_package_file(resolved)
    sim.packages = str(resolved)


def task_from_goal(goal: str, *, app: str | None = None, max_steps: int | None = None) -> Task:
    """A task for ``artemis run --goal "…"``; errors name ``command line`` instead of a file."""
    data: dict[str, Any] = {"id": slugify(goal), "goal": goal}
    if app is not None:
        data["app"] = app
    if max_steps is not None:
        data["max_steps"] = max_steps
    return validate_model(Task, data, PlainLocator("command line", data))
