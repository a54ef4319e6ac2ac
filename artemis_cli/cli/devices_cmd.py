"""``artemis devices`` and ``artemis doctor``."""

from __future__ import annotations

import json
import os
from typing import Annotated, Any

import typer

from artemis_cli.cli.console import escape, out
from artemis_cli.cli.options import DataDirOpt
from artemis_cli.cli.tables import PlainOpt


def devices(as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list: serial, kind, state, model, detail.")] = False,
            plain: PlainOpt = False) -> None:
    """List attached adb devices and the simulated phone's worlds.

    When stdout is not a terminal (or with --plain) each device is one tab-separated line with no header: serial, kind, state, model, detail."""
    from artemis_cli.device.select import list_devices

    listings = list_devices()
    if as_json:
        print(json.dumps([vars(d) for d in listings], ensure_ascii=False, indent=2))
        return
    from artemis_cli.cli.tables import Column, FitTable, print_table

    # narrow: the detail goes first, then the kind; the serial (what --device takes) stays whole
    table = FitTable.listing([Column("serial", "id"), Column("kind", drop=2), Column("state", "label", min_width=9),
                      Column("model", "label", min_width=12), Column("detail", "label", drop=3)])
    for d in listings:
        table.add_row(d.serial, d.kind, d.state, d.model or "", d.detail or "")
    print_table(table, plain=plain)


#: The Gemini endpoint when neither ARTEMIS_GEMINI_BASE_URL nor the SDK's GOOGLE_GEMINI_BASE_URL is set.
GEMINI_DEFAULT_URL = "https://generativelanguage.googleapis.com/"
#: Problem rows printed per check (the rest are counted; ``--json`` lists them all).
DOCTOR_MAX_LISTED = 20
#: ``--deep`` shows a progress bar once hashing has taken this long.
DEEP_PROGRESS_AFTER_S = 2.0


def doctor(
    data_dir: DataDirOpt = None,
    deep: Annotated[bool, typer.Option("--deep", help="Also hash every referenced blob file.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object: ok and every check.")] = False,
    device: Annotated[str | None, typer.Option(
        "--device", "-d", help="Also check this device is attached and ready (a serial needs adb; 'sim' needs "
                               "nothing).")] = None,
    model: Annotated[str | None, typer.Option(
        "--model", "-m", help="openai:NAME: also check NAME on its OpenAI-compatible endpoint (reachable, "
                              "served, tool calls, cached tokens); a Gemini model: the API key and the model.")] = None,
    base_url: Annotated[str | None, typer.Option(
        "--base-url", help="The endpoint for --model openai:NAME, e.g. http://127.0.0.1:8000/v1. Default: "
                           "$ARTEMIS_OPENAI_BASE_URL. Alone: check it is up and list what it serves.")] = None,
    profile: Annotated[str | None, typer.Option(
        "--profile", "-p", help="flash | pro | path: also check every OpenAI-compatible endpoint its roles "
                                "use.")] = None,
) -> None:
    """Check adb, attached devices, the API key and the data dir (database, blobs, writable,
    free space); with --model openai:NAME, --base-url or --profile, also the OpenAI-compatible
    endpoints a run would use (one tiny request each). What nothing asked for needs (adb and a
    phone without --device SERIAL, a Gemini key without a Gemini model) is shown as not applying,
    not failed. Exit 1 if something needed is missing or damaged. Reads only: never creates or
    migrates the data dir."""
    from artemis_cli.device.select import parse_sim_spec
    from artemis_cli.engine.health import Finding, check_data_dir
    from artemis_cli.models import endpoint_check
    from artemis_cli.models.registry import provider_of
    from artemis_cli.paths import data_dir as resolve

    gemini_model = model if model is not None and provider_of(model) == "gemini" else None
    # bad options: exit 2 before any row
    endpoint_plan = endpoint_check.plan(None if gemini_model else model, base_url, profile)
    checks: list[dict[str, Any]] = []

    def add(name: str, ok: bool, detail: str, hint: str = "", level: str = "") -> None:
        checks.append({"check": name, "ok": ok, "detail": detail, "hint": hint,
                       "level": level or ("ok" if ok else "error")})

    _adb_rows(add, device if device is not None and parse_sim_spec(device) is None else None)
    key = os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY")
    gemini_needed = True if gemini_model else (endpoint_plan.gemini_needed if endpoint_plan is not None else None)
    if key:
        add("API key", True, "GEMINI_API_KEY/GOOGLE_API_KEY is set")
    elif gemini_needed is False and endpoint_plan is not None:
        add("API key", True, f"no GEMINI_API_KEY, and none needed: {endpoint_plan.gemini_reason}")
    elif gemini_needed is None:
        add("Gemini", True, "no GEMINI_API_KEY — offline models only (export GEMINI_API_KEY=… to run Gemini)",
            level=NOT_APPLICABLE)
    else:
        add("API key", False, "no GEMINI_API_KEY or GOOGLE_API_KEY",
            (endpoint_plan.gemini_hint if endpoint_plan is not None else "")
            or f"export GEMINI_API_KEY=… ({gemini_model or 'the profile'} runs on Gemini)")
    add("Gemini endpoint", *_gemini_endpoint())
    if gemini_model and key:
        add(*_gemini_model_row(gemini_model, profile))
    if endpoint_plan is not None:
        for row in endpoint_check.check(endpoint_plan):
            add(*row)
        if model is not None and not gemini_model:
            add(*_budget_row(model, base_url, profile))
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
        moot = list(dict.fromkeys(c["check"] for c in checks if c["level"] == NOT_APPLICABLE))
        good = "[green]All good.[/]" + (f" Not needed here: {escape(', '.join(moot))}." if moot else "")
        out().print(good if healthy else f"[yellow]Problems: {escape(', '.join(failed))}.[/]")
    raise typer.Exit(0 if healthy else 1)


#: The level of a row for a check that nothing asked for needs (shown, never a failure).
NOT_APPLICABLE = "n/a"
SIM_ONLY = "not needed for the simulated phone"


def _adb_rows(add: Any, serial: str | None) -> None:
    """adb and the phones: required when ``serial`` (a real device) is asked for, else rows that
    say what does not apply (a sim-only setup needs neither adb nor a phone)."""
    from artemis_cli.device.select import adb_status, list_devices

    status = adb_status()
    needed = serial is not None
    if status.adb_binary:
        add("adb binary", True, status.adb_binary)
    elif needed:
        add("adb binary", False, f"adb not found on PATH (needed for --device {serial})",
            "install Android platform-tools (Debian: apt install adb)")
        return
    else:
        add("real devices", True, f"adb not installed — {SIM_ONLY} (for a phone: apt install adb)",
            level=NOT_APPLICABLE)
        return
    if status.server_reachable:
        add("adb server", True, f"reachable (version {status.server_version})")
    else:
        # adb_status's text may carry the fix too: the hint says it once
        said = (status.error or "not reachable").split("; ", 1)[0]
        if not needed:
            add("adb server", True, f"{said} — {SIM_ONLY} (for a phone: adb start-server)", level=NOT_APPLICABLE)
            return
        add("adb server", False, said, "start it with `adb start-server`")
        return
    real = [d for d in list_devices() if d.kind != "sim"]
    ready = [d for d in real if d.state == "device"]
    if needed:
        asked = [d for d in real if d.serial == serial]
        if asked and asked[0].state == "device":
            add("device", True, f"{serial} ({asked[0].model or '?'})")
        else:
            state = f" (state {asked[0].state})" if asked else ""
            others = ", ".join(d.serial for d in real) or "none"
            add("device", False, f"{serial} is not attached and ready{state}; attached: {others}",
                "connect it with USB debugging on (adb devices lists it), or `adb connect HOST:PORT`")
    elif ready:
        add("device", True, ", ".join(f"{d.serial} ({d.model or '?'})" for d in ready))
    elif real:
        add("device", True, f"no phone or emulator ready ({len(real)} not ready) — {SIM_ONLY}",
            "authorize USB debugging on the phone", "warning")
    else:
        add("device", True, f"no phone or emulator attached — {SIM_ONLY} (--device sim)", level=NOT_APPLICABLE)


def _budget_row(model: str, base_url: str | None, profile: str | None) -> tuple[Any, ...]:
    """``--model openai:NAME``: the server's context window (when it says) and the effective
    budget and floor a run on the simulated phone would get, fitted as the run would fit it
    (``runner.fitted_context``), or why a run would be refused."""
    from artemis_cli.config.profile import load_profile
    from artemis_cli.errors import ArtemisError
    from artemis_cli.models.registry import build_model
    from artemis_cli.runner import fitted_context

    try:
        prof = load_profile(profile or "flash")
        mdl = build_model(model, task=None, profile=prof, base_url=base_url)
        budget = fitted_context(prof, mdl, (1080, 2400))[1]
    except ArtemisError as exc:
        return "Context budget", False, f"a run would be refused: {exc}", exc.hint or ""
    fitted = f" · {budget.fitted_text()}" if budget.fitted else ""
    return "Context budget", True, f"{budget.text()}{fitted} (on a 1080x2400 screen; S zone: {budget.measured_by})"


def _gemini_model_row(name: str, profile: str | None) -> tuple[Any, ...]:
    """``--model gemini…`` with a key: does the model answer (the run's pre-flight check)?"""
    from artemis_cli.config.profile import load_profile
    from artemis_cli.errors import ArtemisError
    from artemis_cli.models.preflight import check_model
    from artemis_cli.models.registry import build_model

    try:
        mdl = build_model(name, task=None, profile=load_profile(profile or "flash"))
        check_model(mdl)
    except ArtemisError as exc:
        return "Gemini model", False, str(exc), exc.hint or ""
    return "Gemini model", True, f"{mdl.name} answers (models.get)"


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
    marks = {"ok": "[green]✓[/]", "warning": "[yellow]![/]", "error": "[red]✗[/]", NOT_APPLICABLE: "[dim]–[/]"}
    shown: dict[str, int] = {}
    hidden: dict[str, int] = {}
    for i, c in enumerate(checks):
        problem = c["level"] in ("warning", "error")
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
