"""The one conversion between the model's coordinates and device pixels.

``pixels``: the model speaks screen pixels.  ``normalized``: Gemini's 0–1000 grid over each axis,
``x_px = round(x / 1000 * width)`` clamped to ``[0, width - 1]``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

CoordinateMode = Literal["pixels", "normalized"]
NORMALIZED_MAX = 1000


def _round(value: float) -> int:
    return math.floor(value + 0.5)  # half-up, unlike round()'s banker's rounding


@dataclass(frozen=True)
class CoordinateSpace:
    width: int
    height: int
    mode: CoordinateMode = "pixels"

    def __post_init__(self) -> None:
        if self.width <= 0 or self.height <= 0:
            raise ValueError(f"screen size must be positive, got {self.width}x{self.height}")
        if self.mode not in ("pixels", "normalized"):
            raise ValueError(f"unknown coordinate mode {self.mode!r} (pixels or normalized)")

    @property
    def max_x(self) -> int:
        return NORMALIZED_MAX if self.mode == "normalized" else self.width

    @property
    def max_y(self) -> int:
        return NORMALIZED_MAX if self.mode == "normalized" else self.height

    def describe(self) -> str:
        if self.mode == "normalized":
            return "normalized 0-1000 on both axes (0,0 top-left, 1000,1000 bottom-right)"
        return f"pixels, x 0-{self.width - 1}, y 0-{self.height - 1}"

    def _check(self, axis: str, value: float, limit: int) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
            raise ValueError(f"coordinate {axis}={value!r} is not a number; use {self.describe()}")
        if value < 0 or value > limit:
            raise ValueError(
                f"coordinate {axis}={value:g} is off the screen: {axis} must be between 0 and {limit} "
                f"({self.describe()})"
            )

    def to_pixels(self, x: float, y: float) -> tuple[int, int]:
        """Model coordinates -> device pixels. Raises ValueError (worded for the model) when out of range."""
        self._check("x", x, self.max_x)
        self._check("y", y, self.max_y)
        if self.mode == "normalized":
            px = _round(x / NORMALIZED_MAX * self.width)
            py = _round(y / NORMALIZED_MAX * self.height)
        else:
            px, py = _round(x), _round(y)
        return min(max(px, 0), self.width - 1), min(max(py, 0), self.height - 1)

    def from_pixels(self, x: int, y: int) -> tuple[int, int]:
        """Device pixels -> model coordinates (clamped to the valid range, never raises)."""
        if self.mode == "normalized":
            nx = _round(x / self.width * NORMALIZED_MAX)
            ny = _round(y / self.height * NORMALIZED_MAX)
            return min(max(nx, 0), NORMALIZED_MAX), min(max(ny, 0), NORMALIZED_MAX)
        return min(max(int(x), 0), self.width - 1), min(max(int(y), 0), self.height - 1)
