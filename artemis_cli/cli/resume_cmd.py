"""``artemis resume``: continue an interrupted session from the DataEngine (no model call to rebuild)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from artemis_cli.cli.console import escape
from artemis_cli.cli.options import DataDirOpt
from artemis_cli.cli.run_cmd import finish_command, stop_cleanly, with_progress


def resume(
    session: Annotated[str, typer.Argument(help="Session id (a unique prefix, or 'latest').")],
    device: Annotated[str | None, typer.Option("--device", "-d", help="Device to continue on (default: the session's).")] = None,
    model: Annotated[str | None, typer.Option(
        "--model", "-m", help="Continue on another model of the same provider (openai:A → openai:B, one Gemini "
                              "model → another). Default: the session's.")] = None,
    base_url: Annotated[str | None, typer.Option(
        "--base-url", help="Continue on another OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1. "
                           "Default: $ARTEMIS_OPENAI_BASE_URL, else the session's.")] = None,
    max_cost: Annotated[float | None, typer.Option(
        "--max-cost", min=0, help="Stop before the model call that would pass this many USD. It limits the whole "
                                  "session: what earlier runs of it spent counts. Default: the session's last limit, "
                                  "else the profile's max_cost.")] = None,
    data_dir: DataDirOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout.")] = False,
    no_live: Annotated[bool, typer.Option("--no-live", help="Plain progress lines.")] = False,
) -> None:
    """Continue an interrupted session where it stopped.

    The model and its endpoint are checked first (as `artemis run` does): one that cannot answer
    is a usage error and the session stays resumable. Text typed into password fields is not
    stored: a simulated phone is restored with $ARTEMIS_SECRET_<FIELD> (e.g.
    ARTEMIS_SECRET_PASSWORD) or $ARTEMIS_SECRET.
    """
    stop_cleanly(lambda: _resume(session, device, model, base_url, data_dir, as_json, no_live, max_cost),
                 as_json)


def _resume(session: str, device: str | None, model: str | None, base_url: str | None, data_dir: Path | None,
            as_json: bool, no_live: bool, max_cost: float | None = None) -> None:
    from artemis_cli.device.select import resolve_device
    from artemis_cli.engine.db import DataEngine
    from artemis_cli.models.preflight import check_model
    from artemis_cli.paths import data_dir as resolve_data_dir
    from artemis_cli.resume import ensure_resumable, resume_model, resume_session

    engine = DataEngine.open(resolve_data_dir(data_dir), create=False)
    try:
        rec = engine.get_session(session)
        ensure_resumable(rec)
        mdl, override = resume_model(rec, engine, model, base_url)
        check_model(mdl)  # a dead endpoint fails here, before the session is touched (it stays resumable)
        # own the session before anything touches a device: a live owner is refused here (exit 2)
        with engine.acquire_lease(rec.id, "resume") as lease:
            dev = resolve_device(device) if device else None
            header = f"resuming after step {engine.last_step_number(rec.id)} · task [cyan]{escape(rec.task_id or '')}[/]"
            if override:
                header += f" · model {escape(mdl.label)}"
            try:
                result = with_progress(lambda cb: resume_session(rec.id, engine, device=dev, model=mdl, lease=lease,
                                                                 override=override, max_cost=max_cost,
                                                                 **cb),
                                       header=header, as_json=as_json, no_live=no_live)
            finally:
                if dev is not None:
                    dev.close()
    finally:
        engine.close()  # the last close checkpoints the WAL (see run_cmd)
    finish_command(result, as_json)
