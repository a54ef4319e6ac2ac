"""Failure classification helpers: durations, RetryInfo, backoff."""

from __future__ import annotations

import pytest

from artemis_cli.models.retry import backoff_delay, parse_duration_s, retry_delay_from_details


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("38s", 38.0),
        ("0.25s", 0.25),
        (" 1.5s ", 1.5),
        (".5s", 0.5),
        (2, 2.0),
        ("5", None),
        ("-1s", None),
        (None, None),
        (True, None),
    ],
)
def test_parse_duration(value: object, expected: float | None) -> None:
    assert parse_duration_s(value) == expected


def test_retry_delay_from_error_body() -> None:
    body = {
        "error": {
            "code": 429,
            "details": [
                {"@type": "type.googleapis.com/google.rpc.QuotaFailure"},
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7s"},
            ],
        }
    }
    assert retry_delay_from_details(body) == 7.0
    assert retry_delay_from_details({"error": {"details": "junk"}}) is None
    assert retry_delay_from_details(["not", "a", "dict"]) is None


def test_backoff_exponential_capped_and_server_delay_wins() -> None:
    assert [backoff_delay(i, base_s=1, max_s=5) for i in range(4)] == [1, 2, 4, 5]
    assert backoff_delay(3, base_s=1, max_s=5, server_delay_s=0.1) == 0.1
    assert backoff_delay(0, base_s=1, max_s=5, server_delay_s=60) == 5
