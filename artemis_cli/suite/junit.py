"""The suite result as JUnit XML (junitparser): one testsuite, one testcase per case.

The testsuite's name and every testcase's classname are the suite name (``artemis test --name``,
default ``artemis``): stable from run to run and whatever path was typed, so a CI's test history
lines up. The suite id, the model (and why it was chosen) are testsuite properties."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def write_junit(suite: dict[str, Any], path: Path) -> None:
    from junitparser import Failure, JUnitXml, Properties, Property, TestCase, TestSuite

    name = suite.get("name") or "artemis"
    ts = TestSuite(name)
    for key, value in _suite_properties(suite):
        ts.add_property(key, value)
    for case in suite["cases"]:
        tc = TestCase(case["name"], classname=name, time=float(case.get("elapsed_s") or 0.0))
        props = Properties()
        for key, value in _properties(case):
            props.add_property(Property(key, value))
        tc.append(props)
        if case["status"] != "passed":
            failure = Failure(case.get("failure") or case["status"])
            failure.text = case.get("message") or ""
            tc.result = [failure]
        ts.add_testcase(tc)
    xml = JUnitXml()
    xml.add_testsuite(ts)
    xml.write(str(path), pretty=True)


def _suite_properties(suite: dict[str, Any]) -> list[tuple[str, str]]:
    """The suite id, and the model of the task cases and the healing model of the session cases,
    each with why it was chosen."""
    out = [("suite_id", str(suite["id"]))]
    model = suite.get("model") or {}
    if model.get("name"):
        out += [("model", str(model["name"])), ("model.why", str(model["why"]))]
    healing = model.get("healing") or {}
    if healing.get("name"):
        out += [("healing_model", str(healing["name"])), ("healing_model.why", str(healing["why"]))]
    return out


def _properties(case: dict[str, Any]) -> list[tuple[str, str]]:
    """(name, value) properties of one testcase: device, steps, model calls, cost in USD (total
    and per role; "unknown" where a price is not known), session, report, attempts, flaky, and for
    a session case what its replay did."""
    out: list[tuple[str, str]] = []
    for key in ("kind", "source", "task_file", "device", "steps", "model_calls", "session_id", "report", "attempts",
                "flaky"):
        value = case.get(key)
        if value is not None:
            out.append((key, str(value).lower() if isinstance(value, bool) else str(value)))
    faults = case.get("app_faults")
    if isinstance(faults, list) and faults:  # crashes/ANRs of the app in front, passed or not
        out.append(("app_faults", "; ".join(str(f) for f in faults)))
    cost = case.get("cost")
    if isinstance(cost, dict):
        out.append(("cost_usd", usd_text(cost.get("total_usd"))))
        out.extend((f"cost_usd.{role}", usd_text(usd)) for role, usd in (cost.get("by_role") or {}).items())
    for key, value in (case.get("replay") or {}).items():
        if value is not None:
            out.append((f"replay.{key}", str(value)))
    return out


def usd_text(value: Any) -> str:
    """A cost in USD as a property value: "unknown" when a price is not known."""
    return "unknown" if value is None else f"{float(value):.8f}".rstrip("0").rstrip(".")
