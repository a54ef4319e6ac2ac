"""Validate YAML data against a pydantic model and turn every failure into a located issue.

Pydantic reports errors by ``loc`` (keys and indices).  A :class:`Locator` maps such a path back
to the file and line it came from; this module rewrites pydantic's messages into short,
user-facing ones (``must be ≥ 1 (got -3)``, ``unknown key 'mx_steps' (did you mean
'max_steps'?); allowed: …``) and raises one ``ConfigError`` listing them all.

Validators in the schema modules report problems with :func:`fail`; passing ``key=`` points the
error at that key of the mapping being validated (its field path and line).
"""

from __future__ import annotations

import datetime as _dt
import difflib
import types
import typing
from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticCustomError

from .issues import ConfigIssue, raise_issues
from .yaml_source import FieldPath, YamlDocument, format_field_path

M = TypeVar("M", bound=BaseModel)

CUSTOM_ERROR = "artemis"


def fail(message: str, *, key: str | None = None) -> PydanticCustomError:
    """An error for a validator to raise; ``key`` locates it at that key of the current mapping."""
    context: dict[str, Any] = {"message": message}
    if key is not None:
        context["key"] = key
    return PydanticCustomError(CUSTOM_ERROR, "{message}", context)


class Locator(Protocol):
    """Where the values being validated came from."""

    def value_at(self, path: FieldPath) -> tuple[bool, Any]: ...

    def node_line(self, path: FieldPath) -> tuple[str, int | None]: ...

    def key_line(self, path: FieldPath) -> tuple[str, int | None]: ...


class DocumentLocator:
    """Values from a single YAML document."""

    def __init__(self, doc: YamlDocument) -> None:
        self.doc = doc

    def value_at(self, path: FieldPath) -> tuple[bool, Any]:
        return self.doc.value_at(path)

    def node_line(self, path: FieldPath) -> tuple[str, int | None]:
        return self.doc.path, self.doc.line_of(path)

    def key_line(self, path: FieldPath) -> tuple[str, int | None]:
        return self.doc.path, self.doc.key_line_of(path)


class PlainLocator:
    """Values that did not come from a file (e.g. command-line options): no line numbers."""

    def __init__(self, name: str, data: dict[str, Any]) -> None:
        self.name = name
        self.data = data

    def value_at(self, path: FieldPath) -> tuple[bool, Any]:
        return YamlDocument(self.name, self.data).value_at(path)

    def node_line(self, path: FieldPath) -> tuple[str, int | None]:
        return self.name, None

    def key_line(self, path: FieldPath) -> tuple[str, int | None]:
        return self.name, None


def validate_model(model: type[M], data: Any, locator: Locator) -> M:
    """``model.model_validate(data)``; failures raise one ConfigError with every located issue."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise_issues(issues_from_validation_error(exc, model, locator))


def issues_from_validation_error(
    exc: ValidationError, model: type[BaseModel], locator: Locator
) -> list[ConfigIssue]:
    issues = []
    for err in exc.errors(include_url=False):
        loc: FieldPath = tuple(p for p in err["loc"] if isinstance(p, str | int))
        kind = err["type"]
        ctx = err.get("ctx") or {}
        if kind == "extra_forbidden":
            file, line = locator.key_line(loc)
            message = _unknown_key_message(model, loc)
        elif kind == "missing":
            file, line = locator.node_line(loc[:-1])
            message = "required key is missing"
        elif kind == CUSTOM_ERROR and ctx.get("key"):
            loc = (*loc, str(ctx["key"]))
            file, line = locator.key_line(loc)
            message = str(ctx.get("message", err["msg"]))
        else:
            loc = _deepest_existing(loc, locator)
            file, line = locator.node_line(loc)
            message = _message(err)
        issues.append(ConfigIssue(file, line, format_field_path(loc) or None, message))
    return issues


def _deepest_existing(loc: FieldPath, locator: Locator) -> FieldPath:
    """Cut a path that walks into a scalar (a shorthand such as ``swipe: sideways``) at the scalar."""
    for end in range(len(loc)):
        found, value = locator.value_at(loc[:end])
        if not found:
            return loc
        if not isinstance(value, dict | list):
            return loc[:end]
    return loc


# --- messages -------------------------------------------------------------------------------


def show(value: Any) -> str:
    """A value as the user wrote it in YAML, short."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        if all(v is None or isinstance(v, str | int | float) for v in value):
            text = "[" + ", ".join(show(v) for v in value) + "]"
            if len(text) <= 40:
                return text
        return "a list"
    if isinstance(value, str):
        text = value if len(value) <= 40 else value[:37] + "..."
        return repr(text)
    if isinstance(value, _dt.date | _dt.datetime):
        return f"the date {value.isoformat()}"
    text = str(value)
    return text if len(text) <= 40 else text[:37] + "..."


_TYPE_WORDS = {
    "string_type": "a string",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "list_type": "a list",
    "tuple_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "none_required": "null",
}


def _message(err: Any) -> str:
    kind: str = err["type"]
    ctx: dict[str, Any] = err.get("ctx") or {}
    got = show(err.get("input"))
    if kind in _TYPE_WORDS:
        text = f"must be {_TYPE_WORDS[kind]} (got {got})"
        if kind == "string_type" and isinstance(err.get("input"), bool | int | float):
            text += "; put it in quotes to make it text"
        return text
    if kind == "greater_than_equal":
        return f"must be ≥ {_bound(ctx.get('ge'))} (got {got})"
    if kind == "greater_than":
        return f"must be > {_bound(ctx.get('gt'))} (got {got})"
    if kind == "less_than_equal":
        return f"must be ≤ {_bound(ctx.get('le'))} (got {got})"
    if kind == "less_than":
        return f"must be < {_bound(ctx.get('lt'))} (got {got})"
    if kind == "finite_number":
        return f"must be a finite number (got {got})"
    if kind == "literal_error":
        return f"must be one of {ctx.get('expected')} (got {got})"
    if kind == "string_too_short":
        return "must not be empty" if ctx.get("min_length") == 1 else f"must be at least {ctx.get('min_length')} characters"
    if kind == "string_too_long":
        return f"must be at most {ctx.get('max_length')} characters"
    if kind in {"too_short", "too_long"}:
        return f"has {ctx.get('actual_length')} items; {_length_words(ctx)}"
    if kind == "value_error":
        return str(err["msg"]).removeprefix("Value error, ")
    if kind == CUSTOM_ERROR:
        return str(ctx.get("message", err["msg"]))
    return str(err["msg"])


def _bound(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _length_words(ctx: dict[str, Any]) -> str:
    low, high = ctx.get("min_length"), ctx.get("max_length")
    if low is not None and low == high:
        return f"expected exactly {low}"
    if high is not None:
        return f"expected at most {high}"
    return f"expected at least {low}"


def _unknown_key_message(model: type[BaseModel], loc: FieldPath) -> str:
    key = str(loc[-1]) if loc else "?"
    allowed = allowed_keys(model_at(model, loc[:-1]))
    text = f"unknown key '{key}'"
    if allowed:
        close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
        if close:
            text += f" (did you mean '{close[0]}'?)"
        text += "; allowed: " + ", ".join(allowed)
    return text


def allowed_keys(model: type[BaseModel] | None) -> list[str]:
    if model is None:
        return []
    return [info.alias or name for name, info in model.model_fields.items()]


def model_at(root: type[BaseModel], path: Sequence[str | int]) -> type[BaseModel] | None:
    """The model class that validates the mapping at ``path`` (None if it cannot be told)."""
    current: Any = root
    for part in path:
        current = _step(current, part)
        if current is None:
            return None
    for candidate in _members(current):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _members(annotation: Any) -> list[Any]:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _members(typing.get_args(annotation)[0])
    if origin is typing.Union or origin is types.UnionType:
        out: list[Any] = []
        for arg in typing.get_args(annotation):
            out.extend(_members(arg))
        return out
    return [annotation]


def _step(annotation: Any, part: str | int) -> Any:
    for candidate in _members(annotation):
        if isinstance(part, str) and isinstance(candidate, type) and issubclass(candidate, BaseModel):
            for name, info in candidate.model_fields.items():
                if (info.alias or name) == part:
                    return info.annotation
        if isinstance(part, int) and typing.get_origin(candidate) in (list, tuple):
            args = typing.get_args(candidate)
            if args:
                return args[0]
    return None
