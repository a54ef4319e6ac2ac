"""``artemis devices`` and ``artemis doctor``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer

from artemis_cli.cli.console import escape, out


def devices(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """List attached adb devices and the simulated phone's worlds."""
    from artemis_cli.device.select import list_devices

    listings = list_devices()
    if as_json:
        print(json.dumps([vars(d) for d in listings], ensure_ascii=False, indent=2))
        return
    from artemis_cli.cli.tables import Column, FitTable

    # narrow: the detail goes first, then the kind; the serial (what --device takes) stays whole
    table = FitTable([Column("serial", "id"), Column("kind", drop=2), Column("state", "label", min_width=9),
                      Column("model", "label", min_width=12), Column("detail", "label", drop=3)])
    for d in listings:
        table.add_row(d.serial, d.kind, d.state, d.model or "", d.detail or "")
    console = out()
    console.print(table.build(console.width))


#: The Gemini endpoint when neither ARTEMIS_GEMINI_BASE_URL nor the SDK's GOOGLE_GEMINI_BASE_URL is set.
GEMINI_DEFAULT_URL = "https://generativelanguage.googleapis.com/"
#: Problem rows printed per check (the rest are counted; ``--json`` lists them all).
DOCTOR_MAX_LISTED = 20
#: ``--deep`` shows a progress bar once hashing has taken this long.
DEEP_PROGRESS_AFTER_S = 2.0


def doctor(
    data_dir: Annotated[Path | None, typer.Option("--data-dir")] = None,
    deep: Annotated[bool, typer.Option("--deep", help="also hash every referenced blob file")] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    model: Annotated[str | None, typer.Option(
        "--model", "-m", help="openai:NAME: also check NAME on its OpenAI-compatible endpoint (reachable, "
                              "served, tool calls, cached tokens).")] = None,
    base_url: Annotated[str | None, typer.Option(
        "--base-url", help="The endpoint for --model openai:NAME, e.g. http://127.0.0.1:8000/v1. Default: "
                           "$ARTEMIS_OPENAI_BASE_URL. Alone: check it is up and list what it serves.")] = None,
    profile: Annotated[str | None, typer.Option(
        "--profile", "-p", help="flash | pro | path: also check every OpenAI-compatible endpoint its roles "
                                "use.")] = None,
) -> None:
    """Check adb, attached devices, the API key and the data dir (database, blobs, writable,
    free space); with --model openai:NAME, --base-url or --profile, also the OpenAI-compatible
    endpoints a run would use (one tiny request each). Exit 1 if something is missing or
    damaged. Reads only: never creates or migrates the data dir."""
    from artemis_cli.device.select import adb_status, list_devices
    from artemis_cli.engine.health import Finding, check_data_dir
    from artemis_cli.models import endpoint_check as doctor_endpoint
    from artemis_cli.paths import data_dir as resolve

    endpoint_plan = doctor_endpoint.plan(model, base_url, profile)  # bad options: exit 2 before any row
    checks: list[dict[str, Any]] = []

    def add(name: str, ok: bool, detail: str, hint: str = "", level: str = "") -> None:
        checks.append({"check": name, "ok": ok, "detail": detail, "hint": hint,
                       "level": level or ("ok" if ok else "error")})

    status = adb_status()
    if status.adb_binary:
        add("adb binary", True, status.adb_binary)
    else:
        add("adb binary", False, "adb not found on PATH", "install Android platform-tools (Debian: apt install adb)")
    if status.server_reachable:
        add("adb server", True, f"reachable (version {status.server_version})")
    else:
        add("adb server", False, status.error or "not reachable", "start it with `adb start-server`")
    real = [d for d in list_devices() if d.kind != "sim"]
    ready = [d for d in real if d.state == "device"]
    if ready:
        add("device", True, ", ".join(f"{d.serial} ({d.model or '?'})" for d in ready))
    else:
        add("device", False, "no phone or emulator attached" + (f" ({len(real)} not ready)" if real else ""),
            "connect one with USB debugging on, or use the simulated phone: --device sim")
    key = os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY")
    if key:
        add("API key", True, "GEMINI_API_KEY/GOOGLE_API_KEY is set")
    elif endpoint_plan is not None and endpoint_plan.gemini_needed is False:
        add("API key", True, f"no GEMINI_API_KEY, and none needed: {endpoint_plan.gemini_reason}")
    else:
        add("API key", False, "no GEMINI_API_KEY or GOOGLE_API_KEY",
            (endpoint_plan.gemini_hint if endpoint_plan is not None else "")
            or "export GEMINI_API_KEY=… (without one, runs use the offline heuristic baseline)")
    add("Gemini endpoint", *_gemini_endpoint())
    if endpoint_plan is not None:
        for row in doctor_endpoint.check(endpoint_plan):
            add(*row)
    path = resolve(data_dir)
    try:
        findings = check_data_dir(path, deep=deep, progress=None if as_json else _DeepProgress())
    except Exception as exc:  # report, never crash the doctor
        findings = [Finding("data dir", "error", f"{path}: cannot check it: {exc}",
                            "pass --data-dir or set ARTEMIS_HOME to another folder")]
    for f in findings:
        add(f.check, f.ok, f.detail, f.hint, f.level)
    add("simulated phone", True, "built in: --device sim")

    healthy = all(c["ok"] for c in checks)
    if as_json:
        print(json.dumps({"ok": healthy, "checks": checks}, indent=2))
    else:
        _print_checks(checks)
        failed = list(dict.fromkeys(c["check"] for c in checks if not c["ok"]))
        out().print("[green]All good.[/]" if healthy else f"[yellow]Problems: {escape(', '.join(failed))}.[/]")
    raise typer.Exit(0 if healthy else 1)


def _gemini_endpoint() -> tuple[bool, str, str]:
    """Which server Gemini calls go to: ours, the SDK's environment override, or Google's."""
    from urllib.parse import urlsplit

    for var in ("ARTEMIS_GEMINI_BASE_URL", "GOOGLE_GEMINI_BASE_URL"):
        url = os.environ.get(var)
        if not url:
            continue
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            return False, f"{var}={url!r} is not an http(s) URL", \
                f"set it to the server's URL (e.g. http://127.0.0.1:8080), or unset it for {GEMINI_DEFAULT_URL}"
        return True, f"{url} (from {var})", ""
    return True, f"{GEMINI_DEFAULT_URL} (default; ARTEMIS_GEMINI_BASE_URL points runs at another server)", ""


def _print_checks(checks: list[dict[str, Any]]) -> None:
    """One line per row; a problem's hint once after its group (rows of a check that share it);
    at most DOCTOR_MAX_LISTED problem rows per check."""
    marks = {"ok": "[green]✓[/]", "warning": "[yellow]![/]", "error": "[red]✗[/]"}
    shown: dict[str, int] = {}
    hidden: dict[str, int] = {}
    for i, c in enumerate(checks):
        problem = c["level"] != "ok"
        if problem:
            shown[c["check"]] = shown.get(c["check"], 0) + 1
        if problem and shown[c["check"]] > DOCTOR_MAX_LISTED:
            hidden[c["check"]] = hidden.get(c["check"], 0) + 1
        else:
            out().print(f"{marks[c['level']]} {c['check']}: {escape(c['detail'])}")
        nxt = checks[i + 1] if i + 1 < len(checks) else None
        same_group = nxt is not None and (nxt["check"], nxt["hint"], nxt["level"]) == (c["check"], c["hint"], c["level"])
        if problem and not same_group:
            if hidden.get(c["check"]):
                out().print(f"  … and {hidden.pop(c['check'])} more {c['check']} problem(s) (--json lists all)")
            if c["hint"]:
                out().print(f"    [dim]→ {escape(c['hint'])}[/]")


class _DeepProgress:
    """``--deep`` progress on a terminal's stderr, shown only once hashing has taken a while and
    erased when it is done."""

    def __init__(self) -> None:
        import time

        self._clock = time.monotonic
        self._start = self._clock()
        self._last = 0.0
        self._shown = 0

    def __call__(self, done: int, total: int) -> None:
        import sys

        now = self._clock()
        if done >= total:
            if self._shown:
                sys.stderr.write("\r" + " " * self._shown + "\r")
                sys.stderr.flush()
            return
        if now - self._start < DEEP_PROGRESS_AFTER_S or now - self._last < 0.2 or not sys.stderr.isatty():
            return
        self._last = now
        line = f"hashing blobs: {done}/{total}"
        sys.stderr.write("\r" + line)
        sys.stderr.flush()
        self._shown = max(self._shown, len(line))
