"""A small validator for the subset of JSON Schema that ``schema.json`` uses (no dependency):
type (incl. lists and null), const, enum, required, properties, additionalProperties (schema),
minProperties, items, minItems, maxItems, minimum, maximum."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from artemis_cli.errors import UsageError

_TYPES: dict[str, tuple[type, ...]] = {"object": (dict,), "array": (list,), "string": (str,), "boolean": (bool,),
                                       "integer": (int,), "number": (int, float), "null": (type(None),)}


SCHEMA_PATH = Path(__file__).with_name("schema.json")


def schema() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return data


def _type_ok(value: Any, name: str) -> bool:
    if name in ("integer", "number") and isinstance(value, bool):
        return False
    return isinstance(value, _TYPES[name])


def errors(value: Any, sch: dict[str, Any], path: str = "$") -> list[str]:
    out: list[str] = []
    types = sch.get("type")
    if types is not None:
        names = types if isinstance(types, list) else [types]
        if not any(_type_ok(value, n) for n in names):
            return [f"{path}: expected {' or '.join(names)}, got {type(value).__name__}"]
    if "const" in sch and value != sch["const"]:
        out.append(f"{path}: must be {sch['const']!r}")
    if "enum" in sch and value not in sch["enum"]:
        out.append(f"{path}: must be one of {sch['enum']}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in sch and value < sch["minimum"]:
            out.append(f"{path}: {value} < minimum {sch['minimum']}")
        if "maximum" in sch and value > sch["maximum"]:
            out.append(f"{path}: {value} > maximum {sch['maximum']}")
    if isinstance(value, dict):
        out += [f"{path}: missing {k!r}" for k in sch.get("required", []) if k not in value]
        if len(value) < sch.get("minProperties", 0):
            out.append(f"{path}: needs at least {sch['minProperties']} properties")
        props = sch.get("properties", {})
        extra = sch.get("additionalProperties")
        for k, v in value.items():
            if k in props:
                out += errors(v, props[k], f"{path}.{k}")
            elif isinstance(extra, dict):
                out += errors(v, extra, f"{path}.{k}")
    if isinstance(value, list):
        if len(value) < sch.get("minItems", 0):
            out.append(f"{path}: needs at least {sch['minItems']} items")
        if "maxItems" in sch and len(value) > sch["maxItems"]:
            out.append(f"{path}: at most {sch['maxItems']} items")
        if isinstance(sch.get("items"), dict):
            for i, v in enumerate(value):
                out += errors(v, sch["items"], f"{path}[{i}]")
    return out


def validate_results(data: Any) -> None:
    """Raise ``UsageError`` listing every place ``data`` breaks the results schema."""
    problems = errors(data, schema())
    if problems:
        raise UsageError("bench results do not match the schema: " + "; ".join(problems[:10]),
                         hint="artemis_cli/bench/schema.json documents the format")
