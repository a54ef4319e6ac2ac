"""The ``artemis`` entry point: wires the sub-apps and turns ArtemisError into one-line errors."""

from __future__ import annotations

import os
import sys

import typer

from artemis_cli.errors import ArtemisError

app = typer.Typer(
    name="artemis",
    help="Run LLM agents that operate Android phones; record, replay and benchmark them.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,  # we hold API keys
    add_completion=False,
)


def _register() -> None:
    from artemis_cli.cli import devices_cmd, resume_cmd, run_cmd, sessions_cmd, sim_cmd, tasks_cmd

    app.command("run")(run_cmd.run)
    app.command("resume")(resume_cmd.resume)
    from artemis_cli.cli import prompt_cmd

    sessions_cmd.app.command("prompt")(prompt_cmd.prompt)
    app.add_typer(sessions_cmd.app, name="sessions")
    app.command("devices")(devices_cmd.devices)
    app.command("doctor")(devices_cmd.doctor)
    app.add_typer(tasks_cmd.app, name="tasks")
    from artemis_cli.cli import replay_cmd, report_cmd

    app.command("replay")(replay_cmd.replay)
    app.command("report")(report_cmd.report)
    from artemis_cli.cli import recall_cmd

    app.command("recall")(recall_cmd.recall)
    app.add_typer(sim_cmd.app, name="sim")
    from artemis_cli.cli import bench_cmd

    app.add_typer(bench_cmd.app, name="bench")


_register()


def main() -> None:
    try:
        rc = app(standalone_mode=False)
        sys.exit(rc if isinstance(rc, int) else 0)
    except ArtemisError as exc:
        if os.environ.get("ARTEMIS_DEBUG"):
            raise
        print(f"Error: {exc}", file=sys.stderr)
        if exc.hint:
            print(f"Hint: {exc.hint}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        print("Interrupted.", file=sys.stderr)
        sys.exit(130)
    except Exception as exc:  # click usage errors and unexpected failures
        import click

        if isinstance(exc, click.exceptions.Abort):
            print("Aborted.", file=sys.stderr)
            sys.exit(130)
        if isinstance(exc, click.ClickException):
            exc.show()
            sys.exit(2 if isinstance(exc, click.UsageError) else exc.exit_code)
        if isinstance(exc, click.exceptions.Exit):
            sys.exit(exc.exit_code)
        if os.environ.get("ARTEMIS_DEBUG"):
            raise
        print(f"Error: unexpected {type(exc).__name__}: {exc}", file=sys.stderr)
        print("Hint: rerun with ARTEMIS_DEBUG=1 for the full traceback, and report it.", file=sys.stderr)
        sys.exit(1)
