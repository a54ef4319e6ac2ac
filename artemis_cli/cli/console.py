"""Rich consoles, created lazily (Rich import costs start-up time), and what happens when the
reader of stdout or stderr goes away.

Progress (session header, step lines, notices, the spinner) goes to :func:`err`; results (tables,
summaries) to :func:`out`; ``--json`` is written with :func:`write_out`. A closed pipe never stops
a command: the first write that meets it points that file descriptor at ``/dev/null``
(:func:`drop_stream`), so the rest of the command — a run's remaining steps — goes on, later
writes vanish and the interpreter's final flush cannot print "Exception ignored … BrokenPipeError".
SIGPIPE stays ignored, as Python sets it: the write raises instead of killing the process.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from functools import cache
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console


def drop_stream(stream: IO[Any] | None = None) -> None:
    """Point ``stream``'s file descriptor (default: stdout) at ``/dev/null`` after its reader went
    away. Streams without a real descriptor (a test's buffer) are left as they are."""
    stream = sys.stdout if stream is None else stream
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def write_out(text: str) -> None:
    """Write ``text`` to stdout and flush; a closed stdout drops it silently (:func:`drop_stream`)."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        drop_stream(sys.stdout)


def flush_stdout() -> None:
    """The last flush of stdout, done before the interpreter's own so a closed pipe stays quiet."""
    with contextlib.suppress(BrokenPipeError):
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            drop_stream(sys.stdout)
            sys.stdout.flush()  # what was buffered now goes to /dev/null


@cache
def _console_class() -> type[Console]:
    from rich.console import Console

    class PipeSafeConsole(Console):
        """Rich's console exits with status 1 when its pipe closes; ours goes quiet and carries on."""

        def on_broken_pipe(self) -> None:
            self.quiet = True
            drop_stream(sys.stderr if self.stderr else sys.stdout)

    return PipeSafeConsole


@cache
def out() -> Console:
    return _console_class()(highlight=False, soft_wrap=True)


@cache
def err() -> Console:
    return _console_class()(stderr=True, highlight=False, soft_wrap=True)


def escape(text: str) -> str:
    """Device and model text must never be interpreted as Rich markup."""
    from rich.markup import escape as _escape

    return _escape(text)


@contextlib.contextmanager
def json_on_error(as_json: bool) -> Iterator[None]:
    """``--json``: a command that stops before it has a result (a model check that fails, a bad
    device, an output path that cannot be written) still prints exactly one JSON document on
    stdout — ``{"status": "error", "error", "hint", "exit_code"}`` — so ``--json | jq`` never
    reads empty input; the error then reaches stderr and the exit code as usual (cli/app)."""
    import click
    import typer

    try:
        yield
    except (typer.Exit, typer.Abort, click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
        raise  # the command's own exit (its result already printed) or Click's usage error
    except Exception as exc:
        if as_json:
            import json

            from artemis_cli.errors import ArtemisError

            if isinstance(exc, ArtemisError):
                doc = {"status": "error", "error": str(exc), "hint": exc.hint, "exit_code": exc.exit_code}
            else:  # what cli/app prints for an error nobody expected
                doc = {"status": "error", "error": f"unexpected {type(exc).__name__}: {exc}",
                       "hint": "rerun with ARTEMIS_DEBUG=1 for the full traceback, and report it.", "exit_code": 1}
            write_out(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
        raise
