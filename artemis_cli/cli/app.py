"""The ``artemis`` entry point: wires the sub-apps and turns ArtemisError into one-line errors."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any, NoReturn

import typer
from typer.core import TyperGroup

from artemis_cli.errors import ArtemisError, ConfigError, debug_enabled, parse_flag

PROG = "artemis"


class _NoSubcommand(Exception):
    """A command group was called without a subcommand (``artemis tasks``)."""

    def __init__(self, ctx: Any) -> None:
        super().__init__("missing command")
        self.ctx = ctx


class _StdoutClosed(Exception):
    """The reader of stdout went away (``artemis sessions list | head -1``); stdout is /dev/null now."""


class ArtemisGroup(TyperGroup):
    """A group called without a subcommand shows its help on stderr and exits 2, on every Typer:
    Click 8.1 printed the help and exited 0, Click 8.2+ and Typer's bundled click raise
    ``NoArgsIsHelpError`` (whose rich help went to stdout with an empty error)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if not args and self.no_args_is_help and not ctx.resilient_parsing:
            raise _NoSubcommand(ctx)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: Any) -> Any:
        """A write to a closed stdout ends the command quietly. Caught here, below Click, whose
        own EPIPE handler would exit 1; Rich consoles and ``write_out`` go on without raising."""
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            from artemis_cli.cli.console import drop_stream

            drop_stream(sys.stdout)
            raise _StdoutClosed() from None


app = typer.Typer(
    name=PROG,
    help="Run LLM agents that operate Android phones; record, replay and benchmark them.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,  # we hold API keys
    add_completion=False,
    cls=ArtemisGroup,
)


def _register() -> None:
    from artemis_cli.cli import devices_cmd, resume_cmd, run_cmd, sessions_cmd, sim_cmd, tasks_cmd

    app.command("run")(run_cmd.run)
    app.command("resume")(resume_cmd.resume)
    from artemis_cli.cli import prompt_cmd

    sessions_cmd.app.command("prompt")(prompt_cmd.prompt)
    app.add_typer(sessions_cmd.app, name="sessions", cls=ArtemisGroup)
    app.command("devices")(devices_cmd.devices)
    from artemis_cli.cli import apps_cmd

    app.command("apps")(apps_cmd.apps)
    app.command("doctor")(devices_cmd.doctor)
    app.add_typer(tasks_cmd.app, name="tasks", cls=ArtemisGroup)
    from artemis_cli.cli import profiles_cmd

    app.add_typer(profiles_cmd.app, name="profiles", cls=ArtemisGroup)
    from artemis_cli.cli import replay_cmd, report_cmd

    app.command("replay")(replay_cmd.replay)
    app.command("report")(report_cmd.report)
    from artemis_cli.cli import recall_cmd

    app.command("recall")(recall_cmd.recall)
    app.add_typer(sim_cmd.app, name="sim", cls=ArtemisGroup)
    from artemis_cli.cli import bench_cmd

    app.add_typer(bench_cmd.app, name="bench", cls=ArtemisGroup)
    from artemis_cli.cli import test_cmd

    app.command("test")(test_cmd.test)
    from artemis_cli.cli import mcp_cmd

    app.command("mcp")(mcp_cmd.mcp)
    from artemis_cli.cli.helptext import prepare

    prepare(app)


def version() -> str:
    """The installed package's version (its metadata), else the source tree's ``__version__``."""
    from importlib import metadata

    try:
        return metadata.version("artemis-cli")
    except metadata.PackageNotFoundError:
        from artemis_cli import __version__

        return __version__


def _print_version(value: bool) -> None:
    if value:
        print(f"{PROG} {version()}")
        raise typer.Exit(0)


@app.callback()
def _options(
    show_version: bool = typer.Option(False, "--version", "-V", is_eager=True, callback=_print_version,
                                      help="Print the version (artemis X.Y.Z) and exit."),
) -> None:
    """Run LLM agents that operate Android phones; record, replay and benchmark them."""


_register()


def _click_errors() -> tuple[type[Exception], type[Exception]]:
    """``(ClickException, UsageError)`` of the click that Typer uses: the separate ``click``
    package up to Typer 0.25, its own bundled copy (``typer._click``) since 0.26. ``typer.BadParameter``
    is both Typers' public name for that click's BadParameter, so its ancestors are the classes."""
    bases = {cls.__name__: cls for cls in typer.BadParameter.__mro__}
    return bases["ClickException"], bases["UsageError"]


def _debug_note() -> None:
    value = os.environ.get("ARTEMIS_DEBUG")
    if parse_flag(value) is None:
        print(f"Note: ARTEMIS_DEBUG={value!r} is not one of 1/0, true/false, yes/no, on/off; "
              "treated as off.", file=sys.stderr)


def _show_help(ctx: Any) -> NoReturn:
    with contextlib.redirect_stdout(sys.stderr):  # Typer's rich help prints instead of returning
        text = ctx.get_help()
    if text:
        print(text, file=sys.stderr)
    sys.exit(2)


def main() -> None:
    from artemis_cli.cli.console import flush_stdout

    try:
        _main()
    finally:
        flush_stdout()  # a closed stdout: quietly, before the interpreter's own flush would complain


#: The hint of an invalid task or profile file (the validate commands list one line per file).
CONFIG_HINT = ("fix what each line names; `artemis tasks validate FILE` (a task) or `artemis profiles "
               "validate FILE` (a profile) checks a file without running anything")


def _help_hint(argv: list[str]) -> str:
    """``see `artemis sessions show --help``` for the (sub)command ``argv`` names: the hint of an
    input error that has none of its own."""
    command: Any = typer.main.get_command(app)  # a click Group (whichever click Typer carries)
    words = [PROG]
    for arg in argv:
        sub = (getattr(command, "commands", None) or {}).get(arg)
        if sub is None:
            break
        command, words = sub, [*words, arg]
    return f"see `{' '.join(words)} --help` for what each argument and option takes"


def _main() -> None:
    click_exception, usage_error = _click_errors()
    try:
        rc = app(prog_name=PROG, standalone_mode=False)
        sys.exit(rc if isinstance(rc, int) else 0)
    except ArtemisError as exc:
        if debug_enabled():
            raise
        _debug_note()
        print(f"Error: {exc}", file=sys.stderr)
        hint = exc.hint or (CONFIG_HINT if isinstance(exc, ConfigError) else
                            _help_hint(sys.argv[1:]) if exc.exit_code == 2 else None)
        if hint:  # every input error (exit 2) says what to do next
            print(f"Hint: {hint}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except SystemExit:
        raise
    except KeyboardInterrupt as exc:  # a stop signal before any session was taken
        print("Interrupted.", file=sys.stderr)
        sys.exit(getattr(exc, "exit_code", 130))
    except _StdoutClosed:  # the reader took what it wanted: the command did its job
        sys.exit(0)
    except _NoSubcommand as exc:
        _show_help(exc.ctx)
    except typer.Abort:  # Ctrl-C or end of input at a prompt
        print("Aborted.", file=sys.stderr)
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except click_exception as exc:  # usage errors: Click's usage line, "Try …", "Error: …"
        exc.show()  # type: ignore[attr-defined]
        sys.exit(2 if isinstance(exc, usage_error) else exc.exit_code)  # type: ignore[attr-defined]
    except Exception as exc:
        if debug_enabled():
            raise
        _debug_note()
        print(f"Error: unexpected {type(exc).__name__}: {exc}", file=sys.stderr)
        print("Hint: rerun with ARTEMIS_DEBUG=1 for the full traceback, and report it.", file=sys.stderr)
        sys.exit(1)
