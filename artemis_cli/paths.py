"""Where Artemis keeps its data: --data-dir, else $ARTEMIS_HOME, else the user data dir."""

from __future__ import annotations

import os
from pathlib import Path


def data_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get("ARTEMIS_HOME")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("artemis", appauthor=False))


def repo_root() -> Path | None:
    """The source checkout (for bundled profiles/ and tasks/), when running from one."""
    here = Path(__file__).resolve().parent.parent
    return here if (here / "profiles").is_dir() else None
