"""Options several commands share, with one help text each."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

#: Where sessions are kept (``paths.data_dir``): one wording for every command that takes it.
DATA_DIR_HELP = ("Data dir, where sessions are kept (default: $ARTEMIS_HOME, else the user data dir, "
                 "~/.local/share/artemis on Linux).")
DataDirOpt = Annotated[Path | None, typer.Option("--data-dir", help=DATA_DIR_HELP)]
