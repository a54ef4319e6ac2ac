"""The suite result as JUnit XML (junitparser): one testsuite, one testcase per case."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def write_junit(suite: dict[str, Any], path: Path) -> None:
    from junitparser import Failure, JUnitXml, Properties, Property, TestCase, TestSuite

    ts = TestSuite(f"artemis test {suite['id']}")
    for case in suite["cases"]:
        tc = TestCase(case["name"], classname=case["source"], time=float(case.get("elapsed_s") or 0.0))
        props = Properties()
        for key in ("device", "steps", "model_calls", "cost", "session_id", "report", "attempts", "flaky"):
            value = case.get(key)
            if value is not None:
                props.add_property(Property(key, str(value).lower() if isinstance(value, bool) else str(value)))
        tc.append(props)
        if case["status"] != "passed":
            failure = Failure(case.get("failure") or case["status"])
            failure.text = case.get("message") or ""
            tc.result = [failure]
        ts.add_testcase(tc)
    xml = JUnitXml()
    xml.add_testsuite(ts)
    xml.write(str(path), pretty=True)
