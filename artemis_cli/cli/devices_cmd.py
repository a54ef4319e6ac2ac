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
    from rich.table import Table

    table = Table()
    for col in ("serial", "kind", "state", "model", "detail"):
        table.add_column(col)
    for d in listings:
        table.add_row(escape(d.serial), d.kind, escape(d.state), escape(d.model or ""), escape(d.detail or ""))
    out().print(table)


def doctor(
    data_dir: Annotated[Path | None, typer.Option("--data-dir")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Check adb, attached devices, the API key and the data dir; exit 1 if something is missing."""
    from artemis_cli.device.select import adb_status, list_devices
    from artemis_cli.paths import data_dir as resolve

    checks: list[dict[str, Any]] = []

    def add(name: str, ok: bool, detail: str, hint: str = "") -> None:
        checks.append({"check": name, "ok": ok, "detail": detail, "hint": hint})

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
    else:
        add("API key", False, "no GEMINI_API_KEY or GOOGLE_API_KEY",
            "export GEMINI_API_KEY=… (without one, runs use the offline heuristic baseline)")
    path = resolve(data_dir)
    try:
        from artemis_cli.engine.db import DataEngine

        engine = DataEngine.open(path)
        problems = engine.integrity_check()
        engine.close()
        add("data dir", not problems, f"{path} (SQLite {'ok' if not problems else '; '.join(problems)})")
    except Exception as exc:  # report, never crash the doctor
        add("data dir", False, f"{path}: {exc}", "pass --data-dir or set ARTEMIS_HOME to a writable folder")
    add("simulated phone", True, "built in: --device sim")

    healthy = all(c["ok"] for c in checks)
    if as_json:
        print(json.dumps({"ok": healthy, "checks": checks}, indent=2))
    else:
        for c in checks:
            mark = "[green]✓[/]" if c["ok"] else "[red]✗[/]"
            line = f"{mark} {c['check']}: {escape(c['detail'])}"
            if not c["ok"] and c["hint"]:
                line += f"\n    [dim]→ {escape(c['hint'])}[/]"
            out().print(line)
        missing = [c["check"] for c in checks if not c["ok"]]
        out().print("[green]All good.[/]" if healthy else f"[yellow]Missing: {', '.join(missing)}.[/]")
    raise typer.Exit(0 if healthy else 1)
