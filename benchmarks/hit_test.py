"""Hit-test cost on a large synthetic dump (prints figures; nothing is asserted).

Builds a uiautomator2-style dump of about ``--nodes`` nodes (status bar, navigation bar listed
first, and an app window of overlapping clickable rows with text children, as a long WebView or
feed produces), parses it once, then reports:

- ``parse_ms``: parse_hierarchy;
- ``index_build_ms``: the first hit test, which builds the tree's hit-test index (window order,
  parent links, band index) and caches it on the tree;
- ``hit_us_per_call``: median microseconds per hit test after that (random points);
- ``elements_ms``: index_elements (element list with tap points) on the same tree.

Before the index, every hit test rebuilt the tree structure: about 0.23 s per call at 200k nodes.

Usage: python benchmarks/hit_test.py [--nodes 200000] [--calls 2000] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from artemis_cli.perception.elements import index_elements  # noqa: E402
from artemis_cli.perception.hierarchy import parse_hierarchy  # noqa: E402
from artemis_cli.perception.hittest import hit_test  # noqa: E402

W, H = 1080, 2400
_ATTRS = (
    'index="0" resource-id="{rid}" class="{cls}" package="{pkg}" content-desc="{desc}" text="{text}" '
    'checkable="false" checked="false" clickable="{click}" enabled="true" focusable="false" focused="false" '
    'scrollable="false" long-clickable="false" password="false" selected="false" visible-to-user="true" '
    'bounds="[{l},{t}][{r},{b}]" display-id="0"'
)


def _node(
    left: int,
    top: int,
    right: int,
    bottom: int,
    *,
    cls: str = "android.view.View",
    pkg: str = "com.example.feed",
    rid: str = "",
    desc: str = "",
    text: str = "",
    click: bool = False,
) -> str:
    return "<node " + _ATTRS.format(
        rid=rid,
        cls=cls,
        pkg=pkg,
        desc=desc,
        text=text,
        click="true" if click else "false",
        l=left,
        t=top,
        r=right,
        b=bottom,
    )


def synthetic_dump(nodes: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    ui = "com.android.systemui"
    parts = [
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">",
        _node(0, 2256, W, H, pkg=ui, rid=f"{ui}:id/navigation_bar_frame", cls="android.widget.FrameLayout")
        + ">",
        _node(180, 2256, 360, H, pkg=ui, rid=f"{ui}:id/back", desc="Back", click=True) + "/>",
        _node(450, 2256, 630, H, pkg=ui, rid=f"{ui}:id/home", desc="Home", click=True) + "/></node>",
        _node(0, 0, W, 96, pkg=ui, cls="android.widget.FrameLayout") + ">",
        _node(40, 0, 200, 96, pkg=ui, rid=f"{ui}:id/clock", text="9:41") + "/></node>",
        _node(0, 0, W, H, cls="android.widget.FrameLayout") + ">",
    ]
    count = 6
    while count < nodes:
        top = rng.randrange(0, H - 60)
        left = rng.randrange(0, W // 2)
        right = rng.randrange(left + 60, W + 1)
        parts.append(_node(left, top, right, top + 60, click=True, cls="android.widget.LinearLayout") + ">")
        parts.append(_node(left + 8, top + 8, right - 8, top + 30, text=f"Row {count}") + "/>")
        parts.append(_node(left + 8, top + 30, right - 8, top + 52, text=f"detail {count % 97}") + "/>")
        parts.append("</node>")
        count += 3
    parts.append("</node></hierarchy>")
    return "".join(parts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--nodes", type=int, default=200_000)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    xml = synthetic_dump(args.nodes)
    t0 = time.perf_counter()
    tree = parse_hierarchy(xml)
    parse_ms = (time.perf_counter() - t0) * 1000
    t0 = time.perf_counter()
    hit_test(tree, 270, 2300)  # builds and caches the index
    build_ms = (time.perf_counter() - t0) * 1000
    rng = random.Random(1)
    per_call: list[float] = []
    for _ in range(args.calls):
        x, y = rng.randrange(W), rng.randrange(H)
        t0 = time.perf_counter()
        hit_test(tree, x, y)
        per_call.append((time.perf_counter() - t0) * 1e6)
    t0 = time.perf_counter()
    elements = index_elements(tree)
    elements_ms = (time.perf_counter() - t0) * 1000
    result = {
        "nodes": len(tree.nodes),
        "parse_ms": round(parse_ms, 1),
        "index_build_ms": round(build_ms, 1),
        "hit_us_per_call": round(statistics.median(per_call), 1),
        "hit_us_p95": round(sorted(per_call)[int(len(per_call) * 0.95)], 1),
        "elements": len(elements),
        "elements_ms": round(elements_ms, 1),
    }
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>16}: {value}")


if __name__ == "__main__":
    main()
