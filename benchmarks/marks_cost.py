"""What set-of-marks costs per screenshot (prints figures; nothing is asserted).

For each app screen of the simulated phone (1080x2400) it builds the operator's image both ways,
uncached, the way the ledger does (``perception.model_image.scale_for_model`` then
``perception.marks.draw_marks``) and reports, per screen and as medians:

- ``clean_bytes`` / ``marked_bytes``: the PNG sent (the wire carries it base64, +33%);
- ``scale_ms``: scaling alone; ``marks_ms``: drawing the marks on the scaled image and
  re-encoding it (the extra cost of marks, paid once per screenshot: both are cached by sha);
- ``marks``: how many elements were marked.

Usage: python benchmarks/marks_cost.py [--max-side 1152] [--repeat 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from artemis_cli.operators.observe import observe  # noqa: E402
from artemis_cli.perception import marks as marks_module  # noqa: E402
from artemis_cli.perception import model_image  # noqa: E402
from artemis_cli.perception.marks import draw_marks, marks_of  # noqa: E402
from artemis_cli.perception.model_image import ImageCache, scale_for_model  # noqa: E402
from artemis_cli.sim.phone import SimPhone  # noqa: E402

APPS = [None, "com.android.settings", "com.android.deskclock", "com.android.contacts", "com.artemis.notes",
        "com.artemis.shop"]


def _uncached() -> None:
    model_image._cache = ImageCache(64)
    marks_module._cache = ImageCache(64)


def measure(max_side: int, repeat: int) -> dict[str, Any]:
    rows = []
    for app in APPS:
        phone = SimPhone(seed=3, popups=False)
        if app:
            phone.launch(app)
        obs = observe(phone, (1080, 2400), "pixels")
        marks = marks_of(obs.elements)
        scale_ms, marks_ms = [], []
        for _ in range(repeat):
            _uncached()
            t0 = time.perf_counter()
            clean = scale_for_model(obs.png, max_side)
            t1 = time.perf_counter()
            marked = draw_marks(obs.png, max_side, marks)
            t2 = time.perf_counter()
            scale_ms.append((t1 - t0) * 1000)
            marks_ms.append((t2 - t1) * 1000)
        rows.append({"screen": app or "home", "marks": len(marks), "clean_bytes": len(clean),
                     "marked_bytes": len(marked), "scale_ms": round(statistics.median(scale_ms), 2),
                     "marks_ms": round(statistics.median(marks_ms), 2)})
    return {
        "max_side": max_side,
        "screens": rows,
        "median_clean_bytes": statistics.median(r["clean_bytes"] for r in rows),
        "median_marked_bytes": statistics.median(r["marked_bytes"] for r in rows),
        "median_scale_ms": statistics.median(r["scale_ms"] for r in rows),
        "median_marks_ms": statistics.median(r["marks_ms"] for r in rows),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-side", type=int, default=1152)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out = measure(args.max_side, args.repeat)
    if args.json:
        print(json.dumps(out, indent=2))
        return
    for r in out["screens"]:
        print(f"{r['screen']:<24} {r['marks']:>3} marks  {r['clean_bytes']:>7} -> {r['marked_bytes']:>7} bytes  "
              f"scale {r['scale_ms']:.1f} ms + marks {r['marks_ms']:.1f} ms")
    print(f"median: {out['median_clean_bytes']} -> {out['median_marked_bytes']} bytes; "
          f"scale {out['median_scale_ms']:.1f} ms + marks {out['median_marks_ms']:.1f} ms")


if __name__ == "__main__":
    main()
