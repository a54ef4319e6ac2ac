"""Timestamps as stored by the DataEngine: ISO-8601 UTC with milliseconds, so they sort as text."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> datetime:
    return datetime.now(UTC)


def to_iso(moment: datetime) -> str:
    """``2024-05-01T12:34:56.789+00:00``. Naive datetimes are taken to be UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")


def now_iso() -> str:
    return to_iso(utc_now())


def parse_iso(text: str) -> datetime:
    """Parse a stored (or user-given) ISO-8601 timestamp; a bare date means midnight UTC."""
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def normalize_iso(value: str | datetime) -> str:
    """Bring a user-given time (string or datetime) into the stored text format."""
    return to_iso(parse_iso(value) if isinstance(value, str) else value)


def format_offset(ms: float) -> str:
    """Session-relative time ``T+mm:ss`` (hours roll into minutes: ``T+125:03``): the only time
    format inside transcripts, so frozen text stays true and byte-stable."""
    total = max(0, int(ms // 1000))
    return f"T+{total // 60:02d}:{total % 60:02d}"
