"""``artemis mcp``: serve one phone to an MCP client (Claude Code, Cursor, VS Code, any agent),
recording every action it takes as a step of an Artemis session."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from artemis_cli.cli.console import err, escape
from artemis_cli.cli.options import DataDirOpt


def mcp(
    device: Annotated[str | None, typer.Option(
        "--device", "-d", help="Serial, 'sim' or 'sim:<world>'. Default: $ANDROID_SERIAL, the one attached "
                               "device, else sim (as `artemis run --goal`); with --resume, the session's.")] = None,
    backend: Annotated[str, typer.Option("--backend", help="Real devices: auto (u2, else adb) | adb | u2.")] = "auto",
    goal: Annotated[str | None, typer.Option(
        "--goal", "-g", help="What the session is for (its goal in `sessions list`, reports, replays).")] = None,
    http: Annotated[int | None, typer.Option(
        "--http", min=0, max=65535, help="Serve streamable HTTP on 127.0.0.1:PORT (/mcp) instead of stdio; "
                                         "0 picks a free port.")] = None,
    allow_app: Annotated[list[str] | None, typer.Option(
        "--allow-app", metavar="PKG", help="Only operate this app (package; repeatable). In any other app only back and home "
                            "are sent.")] = None,
    read_only: Annotated[bool, typer.Option(
        "--read-only", help="Offer observe and recall only: nothing is sent to the phone.")] = False,
    resume: Annotated[str | None, typer.Option(
        "--resume", help="Continue an interrupted MCP session (its id, a unique prefix, or 'latest') on the "
                         "first tool call.")] = None,
    release_after: Annotated[float, typer.Option(
        "--release-after", min=0.1, max=86400, metavar="SECONDS",
        help="With --http: a client that has sent nothing and had no request or stream open for this long "
             "is gone (it left without a DELETE: a crash, a kill, the Inspector CLI): its session is "
             "interrupted and the next client continues it.")] = 60.0,
    profile: Annotated[str | None, typer.Option("--profile", "-p", help="flash | pro | path to a profile "
                                                                        "(settle times, recall limits).")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Simulated phone seed.")] = 0,
    data_dir: DataDirOpt = None,
) -> None:
    """Serve a phone to an MCP client; every action it takes is a recorded, replayable step.

    stdio by default (what Claude Code, Cursor and VS Code start); the session begins at the first
    tool call and ends on `finish`, or is left `interrupted` when the client goes away (continue it
    with `artemis mcp --resume ID`). Over --http, a client that left without saying so is released
    after --release-after seconds and the next client continues its session. Progress and errors
    go to stderr; stdout carries only MCP.
    """
    from artemis_cli.stopping import StopRequested, as_stop, catch_stop_signals

    with catch_stop_signals():
        try:
            _mcp(device, backend, goal, http, tuple(allow_app or ()), read_only, resume, profile, seed, data_dir,
                 release_after)
        except KeyboardInterrupt as exc:
            stop: StopRequested = as_stop(exc)
            if http is None:
                _exit_now(stop.exit_code)
            raise typer.Exit(stop.exit_code) from None


def _exit_now(code: int) -> None:
    """Exit at once, everything written and closed: on stdio a stop signal leaves the SDK's
    stdin reader blocked in a read on a worker thread that interpreter exit would wait for until
    the client closes stdin (a client that sends SIGTERM first would see the server hang)."""
    import contextlib
    import os
    import sys

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


def _mcp(device: str | None, backend: str, goal: str | None, http: int | None, allow_apps: tuple[str, ...],
         read_only: bool, resume: str | None, profile: str | None, seed: int, data_dir: Path | None,
         release_after: float = 60.0) -> None:
    import anyio

    from artemis_cli.config.profile import load_profile
    from artemis_cli.device.select import resolve_device
    from artemis_cli.engine.db import DataEngine
    from artemis_cli.errors import UsageError
    from artemis_cli.mcp_server.server import ArtemisMcp
    from artemis_cli.mcp_server.session import DrivenSession, Policy, check_resumable
    from artemis_cli.paths import data_dir as resolve_data_dir
    from artemis_cli.resume import recorded_device

    def notice(text: str) -> None:
        err().print(f"[yellow]{escape(text)}[/]")

    for package in allow_apps:
        if not package.strip() or any(c.isspace() for c in package):
            raise UsageError(f"--allow-app takes a package name, got {package!r}", hint="e.g. --allow-app com.android.settings")
    engine = DataEngine.open(resolve_data_dir(data_dir))
    try:
        run: dict[str, Any] = {}
        resume_id = None
        if resume is not None:
            rec = engine.get_session(resume)
            check_resumable(rec)
            resume_id, run = rec.id, dict((rec.config or {}).get("run") or {})
            goal = goal or rec.goal
            profile = profile or rec.profile
        prof = load_profile(profile or "flash")
        if resume_id is not None and device is None:  # where the session ran
            dev = recorded_device(run, rec.device_serial, notice)
        else:
            dev = resolve_device(device, backend=backend, sim_seed=seed, notice=notice)  # type: ignore[arg-type]
        try:
            info = dev.info()
            # how a new session of this server finds its device again (replay, resume)
            spec = device or run.get("device")
            run_config = {"device": spec if spec is not None else (info.serial if info.kind != "sim" else "sim"),
                          "backend": backend, "sim": {"seed": seed} if info.kind == "sim" else {}}
            session = DrivenSession(engine, dev, prof, goal=goal or "", policy=Policy(allow_apps, read_only),
                                    run_config=run_config, resume_id=resume_id,
                                    notice=notice)
            server = ArtemisMcp(session, on_notice=lambda text: err().print(escape(text), soft_wrap=True),
                                release_after_s=release_after)
            where = f"device {escape(info.serial)} ({info.kind}, {info.width}x{info.height}) · data {escape(str(engine.data_dir))}"
            mode = " · read-only" if read_only else ""
            mode += f" · apps {escape(', '.join(allow_apps))}" if allow_apps else ""
            mode += f" · resuming {resume_id} at the first tool call" if resume_id else ""
            mode += f" · a silent client is released after {release_after:g} s" if http is not None else ""
            reason = "the MCP client disconnected"
            try:
                if http is None:
                    err().print(f"[bold]Artemis MCP server[/] on stdio · {where}{mode}", soft_wrap=True)
                    anyio.run(server.serve_stdio)
                else:
                    def ready(url: str) -> None:
                        err().print(f"[bold]Artemis MCP server[/] at {url} · {where}{mode}", soft_wrap=True)

                    anyio.run(lambda: server.serve_http(http, on_ready=ready))
                    reason = "the server stopped"
            except KeyboardInterrupt:
                reason = "the server was stopped"
                raise
            finally:
                server.close(reason)
        finally:
            dev.close()
    finally:
        engine.close()
