"""Shared paths and expectations for the config tests (not a test module)."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
BAD = HERE.parent / "fixtures" / "bad_tasks"
FULL = HERE / "full_task.yaml"

# file name -> (line, field path, message fragment) of the first (or only) error
BROKEN_CASES = {
    "missing_goal.yaml": (2, "goal", "required key is missing"),
    "unknown_key.yaml": (3, "mx_steps", "unknown key 'mx_steps' (did you mean 'max_steps'?)"),
    "negative_max_steps.yaml": (4, "max_steps", "must be ≥ 1 (got -3)"),
    "syntax_error.yaml": (5, None, "YAML syntax error: expected ',' or '}'"),
    "deep_reference_type.yaml": (9, "reference[3].tap.nth", "must be a whole number (got 'first')"),
    "bad_success_check.yaml": (7, "success[1].contains", "use one of equals, contains, matches"),
    "bad_regex.yaml": (5, "success[0].matches", "invalid regular expression: unterminated character set"),
}
