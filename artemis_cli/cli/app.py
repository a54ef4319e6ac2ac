"""The ``artemis`` entry point: wires the sub-apps and turns ArtemisError into one-line errors."""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import sys
from collections.abc import Iterator, Mapping, MutableMapping
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


#: Every command and group of ``artemis``, in the order of the help: (module in artemis_cli/cli,
#: its Typer sub-app or command function, the first paragraph of its help). A command's module is
#: imported only when that command runs or its help is asked for (start-up time, issue 38): the
#: root help shows these summaries; ``tests/cli/test_lazy_commands.py`` checks that they are the
#: loaded commands' own and that the root help is the same either way.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "run": ("run_cmd", "run", "Run a task on a phone, an emulator or the simulated phone."),
    "resume": ("resume_cmd", "resume", "Continue an interrupted session where it stopped."),
    "devices": ("devices_cmd", "devices", "List attached adb devices and the simulated phone's worlds."),
    "apps": ("apps_cmd", "apps",
             "List a device's launchable apps, or resolve each NAME to the package a person means on that "
             "phone and say how (package, alias, label, fuzzy) with the alternatives; a name that is not "
             "installed is shown with the launchable apps whose name is like it (else with the launchable "
             "apps). Misses are answers, not errors (exit 0); exit 2 on bad usage, 3 when the device is "
             "unavailable."),
    "doctor": ("devices_cmd", "doctor",
               "Check adb, attached devices, the API key and the data dir (database, blobs, writable, free "
               "space); with --model openai:NAME, --base-url or --profile, also the OpenAI-compatible endpoints "
               "a run would use (one tiny request each). What nothing asked for needs (adb and a phone without "
               "--device SERIAL, a Gemini key without a Gemini model) is shown as not applying, not failed. "
               "Exit 1 if something needed is missing or damaged. Reads only: never creates or migrates the "
               "data dir."),
    "replay": ("replay_cmd", "replay",
               "Replay a recorded session: no model calls; each step is replayed, retargeted, healed or diverged."),
    "report": ("report_cmd", "report",
               "Write one HTML file: the session's summary, how full the model's context was, then every step "
               "with its screenshot, and the shorter summaries older steps were folded into."),
    "recall": ("recall_cmd", "recall",
               "Search a session's steps, notes and chunks, or show steps by number, time or app; every result "
               "names its step and T+mm:ss."),
    "test": ("test_cmd", "test",
             "Run tasks (as artemis run) and recorded sessions (replayed with healing) as a test suite on one "
             "or more devices; exit 0 only when every case passed."),
    "mcp": ("mcp_cmd", "mcp",
            "Serve a phone to an MCP client; every action it takes is a recorded, replayable step."),
    "sessions": ("sessions_cmd", "app", "Browse and inspect recorded sessions."),
    "tasks": ("tasks_cmd", "app", "Work with task files."),
    "profiles": ("profiles_cmd", "app", "Work with profiles (the loop, the model of each role, memory settings)."),
    "sim": ("sim_cmd", "app", "The simulated phone."),
    "bench": ("bench_cmd", "app", "Frozen long-task benchmark: memory modes side by side."),
}


@functools.cache
def load_command(name: str) -> Any:
    """The click command (or group) of ``artemis NAME``, built from its module on first use."""
    from artemis_cli.cli.helptext import prepare

    module, attr, _ = COMMANDS[name]
    target = getattr(importlib.import_module(f"artemis_cli.cli.{module}"), attr)
    holder = typer.Typer()
    if isinstance(target, typer.Typer):
        holder.add_typer(target, name=name, cls=ArtemisGroup)
    else:
        holder.command(name)(target)
    prepare(holder)
    return typer.main.get_group(holder).commands[name]


class _LazyCommands(MutableMapping[str, Any]):
    """The root group's commands: every name of :data:`COMMANDS` is listed; a command is built
    (its module imported) when it is looked up."""

    def __init__(self, loaded: Mapping[str, Any]) -> None:
        self._loaded = dict(loaded)

    def __getitem__(self, name: str) -> Any:
        if name not in self._loaded:
            if name not in COMMANDS:
                raise KeyError(name)
            self._loaded[name] = load_command(name)
        return self._loaded[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        del self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*COMMANDS, *self._loaded]))

    def __len__(self) -> int:
        return len(dict.fromkeys([*COMMANDS, *self._loaded]))


class LazyGroup(ArtemisGroup):
    """``artemis`` itself: its commands load on use (:class:`_LazyCommands`), and its help lists
    them by their summaries in :data:`COMMANDS` without importing any command's module."""

    #: False renders the root help from the loaded commands (the test that the summaries are theirs)
    summaries_in_help = True

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = _LazyCommands(self.commands)
        self._listing = False

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if self._listing and cmd_name in COMMANDS and cmd_name not in self.commands._loaded:  # type: ignore[attr-defined]
            from typer.core import TyperCommand

            return TyperCommand(name=cmd_name, help=COMMANDS[cmd_name][2])
        return self.commands.get(cmd_name)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = self.summaries_in_help
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


app = typer.Typer(
    name=PROG,
    help="Run LLM agents that operate Android phones; record, replay and benchmark them.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,  # we hold API keys
    add_completion=False,
    cls=LazyGroup,
)


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


def _prepare_help() -> None:
    from artemis_cli.cli.helptext import prepare
    from artemis_cli.cli.plain_values import take_plain_values

    prepare(app)
    take_plain_values()  # option values without pydantic where they are plain (start-up time)


@app.callback()
def _options(
    show_version: bool = typer.Option(False, "--version", "-V", is_eager=True, callback=_print_version,
                                      help="Print the version (artemis X.Y.Z) and exit."),
) -> None:
    """Run LLM agents that operate Android phones; record, replay and benchmark them."""


_prepare_help()


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
