"""Reading ``pm list packages`` output: the one parser for a device's own output, a real phone's
package list given to the simulated phone (``artemis sim serve --packages``, a task's
``sim.packages``) and the fixtures under ``fixtures/packages/``."""

from __future__ import annotations

import re
from pathlib import Path

from artemis_cli.errors import ConfigError

#: an Android package name ("android" alone is one)
PACKAGE_RE = re.compile(r"[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*")


def parse_package_list(text: str, *, source: str | None = None) -> list[str]:
    """Packages in ``pm list packages`` output, in order, each once.

    With ``source`` (a file name) the text must be nothing but ``package:NAME`` lines (blank lines
    and CRLF are fine): any other line raises ConfigError naming ``source`` and the line. Without it
    (a device's own output) lines that are not package lines are skipped.
    """
    seen: dict[str, None] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        name = line[len("package:"):].strip() if line.startswith("package:") else None
        if name is None or not PACKAGE_RE.fullmatch(name):
            if source is None:
                continue
            what = "is not a package:NAME line" if name is None else f"has an invalid package name {name!r}"
            raise ConfigError(source, number, None,
                              f"{line[:60]!r} {what} (expected `adb shell pm list packages` output)")
        seen.setdefault(name, None)
    if source is not None and not seen:
        raise ConfigError(source, None, None, "no package:NAME lines (expected `adb shell pm list packages` output)")
    return list(seen)


def read_package_file(path: str | Path, *, shown: str | None = None) -> list[str]:
    """The packages of a saved ``adb shell pm list packages`` output; errors name ``shown`` (or
    the path) and the line."""
    name = shown or str(path)
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise ConfigError(name, None, None, "no such package list file") from None
    except OSError as exc:
        raise ConfigError(name, None, None, f"cannot read the package list: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ConfigError(name, None, None, "is not UTF-8 text (expected `adb shell pm list packages` output)") from None
    return parse_package_list(text, source=name)


__all__ = ["PACKAGE_RE", "parse_package_list", "read_package_file"]
