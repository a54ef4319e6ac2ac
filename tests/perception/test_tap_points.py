"""The point the element list gives for an element hit-tests back to it (issue 12, item 4).

For every real dump, every listed element's point is hit-tested and sorted into one of these:

* ``self``      — the hit is the element;
* ``control``   — text inside a control (its nearest actionable ancestor takes taps): the hit is
                  that control, which is what a tap on the text does;
* ``list``      — something that scrolls (listed for swiping): the hit is a row inside it;

and text that no touch can reach, kept in the list for reading (counts pinned per dump below, and
every one but the stacked icons by label):

* ``stacked``   — a node with the same bounds is drawn over it (status-bar notification icons
                  piled on one spot; "over" in drawing order: ``drawing-order`` where the dump
                  has it, else later in the file);
* ``backdrop``  — every point of it belongs to a control that is not its ancestor (a sheet's
                  ``touch_outside``/dimmer, a keyguard scrim, a launcher workspace, a button drawn
                  across it); non-clickable text does not consume a touch, so that control gets it;
* ``container`` — a labelled container whose whole area belongs to controls inside it.

Anything else fails the test.  Before tap points (and windows in drawing order) 86 of the 460
elements of dumps 001–040 had a centre hitting another node, and 59 of 76 in 041/042.
"""

from __future__ import annotations

from collections import Counter

import pytest
from perception_dumps import dump, dump_files

from artemis_cli.perception.elements import MAX_LABEL_CHARS, index_elements
from artemis_cli.perception.hierarchy import parse_hierarchy
from artemis_cli.perception.hittest import SCROLL, TAP, TEXT, HitIndex, hit_test
from artemis_cli.perception.tapping import Budget, Placement, place
from artemis_cli.perception.types import UITree

READ_ONLY = {"stacked", "backdrop", "container"}

# Every element whose point does not hit it, per dump (dumps not listed: every point hits its element).
PINNED: dict[str, dict[str, int]] = {
    "003": {"list": 2, "backdrop": 1},
    "004": {"list": 2, "container": 1},
    "005": {"list": 1},
    "007": {"list": 1},
    "008": {"list": 2, "control": 1},
    "009": {"list": 2},
    "011": {"list": 1},
    "013": {"list": 1, "container": 1, "control": 1, "backdrop": 1},
    "014": {"control": 7, "backdrop": 1},
    "021": {"list": 2},
    "024": {"backdrop": 1},
    "025": {"backdrop": 1, "stacked": 2},
    "026": {"stacked": 1, "backdrop": 1},
    "027": {"list": 1},
    "029": {"backdrop": 1},
    "033": {"backdrop": 2},
    "037": {"list": 1},
    "038": {"control": 2},  # a message's whole text is in its bubble's label (issue 22): not repeated
    "039": {"backdrop": 1},
    "041": {"stacked": 18},
    "042": {"stacked": 10},
}
# The read-only texts themselves: (dump, label prefix) -> what a tap there reaches.
READ_ONLY_TEXTS = {
    ("003", "1 - 5"): "ImageView (id image)",
    ("004", "当前所在页面"): 'View "阿姨" (id ol)',
    ("013", "Google"): 'FrameLayout "Google Search" (id search_edit_frame)',
    ("013", "Home screen 1 of 1"): "Workspace (id workspace)",
    ("014", "\U000f0140"): 'EditText "Select an item..." (id text_input)',
    ("024", "Pill Design"): "View (id touch_outside)",
    ("025", "Contact"): 'Button "Dismiss" (id background_dimmer)',
    ("026", "第3页"): "ViewGroup",  # launcher page indicator over the clickable home screen
    ("029", "Home"): "ScrollView (id workspace)",
    ("033", "This device is locked"): "View (id scrim_behind)",
    ("033", "Try again in 21 seconds"): "View (id scrim_behind)",
    ("039", "BANJEN"): 'Button "2nd string, note B3. Double tap to play."',
}


def _category(tree: UITree, i: int, hit: int | None) -> str:
    index = HitIndex.of(tree)
    structure, kind = index.structure, index.kinds.get(i)
    if hit == i:
        return "self"
    if hit is None or kind is None:
        return "nothing"
    ancestor = structure.nearest_actionable_ancestor(i)
    inside = i < hit < structure.subtree_end[i]
    if kind == TEXT and hit == ancestor and index.kinds.get(ancestor) == TAP:
        return "control"
    if tree.nodes[i].scrollable and inside:
        return "list"
    if kind == TEXT and index.rank[hit] < index.rank[i] and tree.nodes[hit].bounds == tree.nodes[i].bounds:
        return "stacked"
    if kind == TEXT and inside:
        return "container"
    if kind == TEXT and index.kinds.get(hit) in (TAP, SCROLL):
        return "backdrop"
    return "unexplained"


def _categories(tree: UITree) -> list[tuple[str, str, str]]:
    """(category, label, what the point hits) for every listed element."""
    position = {node.path: i for i, node in enumerate(tree.nodes)}
    out = []
    for element in index_elements(tree):
        hit = HitIndex.of(tree).hit(*element.center)
        out.append(
            (
                _category(tree, position[element.node.path], hit),
                element.label,
                hit_test(tree, *element.center).describe(),
            )
        )
    return out


@pytest.mark.parametrize("path", dump_files(), ids=lambda p: p.name[:3])
def test_every_listed_point_hits_its_element(path) -> None:
    tree = parse_hierarchy(path.read_bytes())
    found = _categories(tree)
    others = Counter(category for category, _, _ in found if category != "self")
    assert dict(others) == PINNED.get(path.name[:3], {})
    reached_by_text = {
        (path.name[:3], label): reached
        for category, label, reached in found
        if category in READ_ONLY - {"stacked"}
    }
    expected = {k: v for k, v in READ_ONLY_TEXTS.items() if k[0] == path.name[:3]}
    assert len(reached_by_text) == len(expected)
    for (prefix, start), reached in expected.items():
        (got,) = [r for (p, label), r in reached_by_text.items() if p == prefix and label.startswith(start)]
        assert got == reached


def test_totals() -> None:
    found = [c for p in dump_files() for c, _, _ in _categories(parse_hierarchy(p.read_bytes()))]
    counts = Counter(found)
    assert counts["unexplained"] == 0 and counts["nothing"] == 0
    # 538: since touches follow drawing order, 026's 2-pixel clickable page stub at the left edge
    # is no longer listed: the clickable home-screen page drawn after it covers every point of it.
    assert len(found) == 538
    assert counts["self"] == 468  # the 026 stub was one (see above)
    assert sum(counts[c] for c in ("control", "list")) == 27
    assert sum(counts[c] for c in READ_ONLY) == 43


def test_points_lie_in_the_visible_part_of_their_element() -> None:
    for path in dump_files():
        tree = parse_hierarchy(path.read_bytes())
        for element in index_elements(tree):
            b = element.node.bounds
            x, y = element.center
            assert max(b.left, 0) <= x < min(b.right, tree.screen_width) or b.width <= 1, (path.name, element)
            assert max(b.top, 0) <= y < min(b.bottom, tree.screen_height) or b.height <= 1, (
                path.name,
                element,
            )


def test_partly_covered_elements_move_and_covered_ones_go() -> None:
    """042: the app's full-screen root under the bars and the Edge handle gets a point of its own;
    the navigation bar takes the bottom 144 px of the screen."""
    tree = parse_hierarchy(dump("042"))
    elements = index_elements(tree)
    root = next(e for e in elements if e.node.resource_id.endswith("quick_capture_root_container"))
    assert hit_test(tree, *root.node.bounds.center).resource_id != root.node.resource_id
    assert hit_test(tree, *root.center).resource_id == root.node.resource_id
    for element in elements:
        if element.node.package == "com.instagram.androim":
            assert element.center[1] < 1776  # nothing of the app is offered under the navigation bar


def _row_tree(first_text: str) -> UITree:
    return parse_hierarchy(
        '<hierarchy><node class="android.widget.FrameLayout" bounds="[0,0][1080,2400]">'
        '<node class="android.widget.LinearLayout" clickable="true" bounds="[0,100][1080,300]">'
        f'<node class="android.widget.TextView" text="{first_text}" bounds="[0,100][800,200]"/>'
        '<node class="android.widget.TextView" text="12 Mar" bounds="[800,100][1080,200]"/>'
        "</node></node></hierarchy>"
    )


def test_child_text_is_kept_when_the_rendered_label_cuts_it_off() -> None:
    """Item 5: the row borrows "subject · 12 Mar"; the current screen's labels are whole (issue 22),
    so the date is in the row's label and not repeated, unless the label outgrows the
    2,000-character guard and its cut leaves the date out."""
    short = [e.label for e in index_elements(_row_tree("Lunch?"))]
    assert short == ["Lunch? · 12 Mar"]  # the date is in the row's label: not repeated
    long_subject = "Re: " + "quarterly report " * 5
    assert [e.label for e in index_elements(_row_tree(long_subject))] == [f"{long_subject.strip()} · 12 Mar"]
    huge_subject = "Re: " + "quarterly report " * 120
    labels = [e.label for e in index_elements(_row_tree(huge_subject))]
    assert labels[1:] == ["12 Mar"]
    assert len(labels[0]) > MAX_LABEL_CHARS and "12 Mar" not in labels[0][:MAX_LABEL_CHARS]


def test_spent_budget_still_keeps_windows_in_mind() -> None:
    app = (
        '<node class="android.widget.FrameLayout" package="com.example" clickable="true" bounds="[0,0][1000,2000]">'
        '<node class="android.widget.Button" text="Big" clickable="true" bounds="[100,100][900,900]"/>'
        '<node class="android.widget.Button" text="Low" clickable="true" bounds="[0,1000][1000,2000]"/></node>'
    )
    keyboard = (
        '<node class="android.widget.FrameLayout" package="com.android.inputmethod.latin" bounds="[0,1500][1000,2000]">'
        '<node class="android.view.View" content-desc="q" clickable="true" bounds="[0,1500][500,2000]"/></node>'
    )
    tree = parse_hierarchy(f"<hierarchy>{keyboard}{app}</hierarchy>")
    index = HitIndex.of(tree)
    paths = {n.text or n.package: i for i, n in enumerate(tree.nodes) if n.depth == 0 or n.text}
    root, big, low = paths["com.example"], paths["Big"], paths["Low"]
    checked = place(index, root, Budget())
    assert checked.searched and checked.point == (500, 50) and checked.lands_on == root
    assert place(index, root, Budget(remaining=0)) == Placement((500, 1000), searched=False)  # unchecked
    assert place(index, big, Budget(remaining=0)) == Placement((500, 500), searched=False)
    # "Low" [0,1000][1000,2000] half under the keyboard from y=1500: still moved out from under it
    assert place(index, low, Budget(remaining=0)) == Placement((500, 1250), searched=False)
    assert place(index, low, Budget()) == Placement((500, 1250), lands_on=low)
    budget = Budget(remaining=10**6)
    place(index, root, budget)
    assert 0 < 10**6 - budget.remaining < 1000  # a small screen costs little
    before = budget.remaining
    place(index, big, budget)  # its centre hits it at once: charged for that one hit test
    assert 0 < before - budget.remaining < 10


def test_text_overhanging_its_control_is_tapped_on_the_control() -> None:
    tree = parse_hierarchy(
        '<hierarchy><node class="android.widget.FrameLayout" bounds="[0,0][1000,1000]">'
        '<node class="android.widget.LinearLayout" content-desc="Row" clickable="true" bounds="[200,0][1000,100]">'
        '<node class="android.widget.TextView" text="Overhang" bounds="[0,0][300,100]"/>'
        "</node></node></hierarchy>"
    )
    (element,) = [e for e in index_elements(tree) if e.label == "Overhang"]
    assert element.center == (250, 50)  # the centre (150, 50) is off the row: nothing takes it
    assert hit_test(tree, *element.center).bounds == (200, 0, 1000, 100)
