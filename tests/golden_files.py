"""Golden-file checks shared by every test area: exact text, regenerated on purpose only.

``ARTEMIS_UPDATE_GOLDEN=1 pytest …`` rewrites the files; review the diff before committing."""

from __future__ import annotations

import os
from pathlib import Path


def assert_golden(path: Path, text: str) -> None:
    if os.environ.get("ARTEMIS_UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing golden {path}; run with ARTEMIS_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8"), f"{path.name} changed; review and regenerate"
