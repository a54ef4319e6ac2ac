"""Maestro flows that replay: every selector finds the recorded element, and only it, on the
screen recorded before its step; pop-up dismissals are optional; the task's setup is there.

The matcher here is written from Maestro's own rules (``maestro-client`` ``Filters``,
``maestro-orchestra`` ``buildFilter``), independently of ``artemis_cli.export.maestro_select``:

- ``text``: regex, case-insensitive, DOTALL, MULTILINE, full match on the text (or the text with
  newlines as spaces), the hint or the accessibility text (content-desc); a pattern equal to the
  value matches too;
- ``id``: regex, full match on the resource-id or on the part after its last ``/``;
- basic filters are intersected, then a match with a matching direct child is replaced by that
  child (recursively, last child);
- ``index``: 0-based, among the matches sorted by top, then left.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import load_task
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import StepRecord
from artemis_cli.export import maestro_flow
from artemis_cli.export.maestro import MaestroFlow, dismissed_popup, setup_commands
from artemis_cli.export.maestro_select import regex_literal
from artemis_cli.models.offline.scripted import ScriptedModel
from artemis_cli.models.registry import reference_script
from artemis_cli.perception.hierarchy import parse_hierarchy
from artemis_cli.perception.types import UITree
from artemis_cli.runner import RunResult, run_task
from artemis_cli.sim.phone import SimPhone

TASKS = Path(__file__).resolve().parents[2] / "tasks"

SELECTING = ("tapOn", "longPressOn")


# -- a tiny Maestro selector matcher ------------------------------------------------------------


def _text_matches(pattern: str, values: list[str]) -> bool:
    rx = re.compile(pattern, re.IGNORECASE | re.DOTALL | re.MULTILINE)
    for value in values:
        for v in (value, value.replace("\n", " ")):
            if v and (v == pattern or rx.fullmatch(v)):
                return True
    return False


def maestro_find(tree: UITree, selector: dict[str, Any]) -> list[int]:
    """Node indices the selector finds (distinct, screen order)."""
    assert set(selector) <= {"text", "id", "index", "optional"}, selector
    nodes = tree.nodes

    def hit(i: int) -> bool:
        n = nodes[i]
        if "text" in selector and not _text_matches(str(selector["text"]), [n.text, n.hint, n.content_desc]):
            return False
        if "id" in selector:
            rx = re.compile(str(selector["id"]), re.IGNORECASE | re.DOTALL | re.MULTILINE)
            rid = n.resource_id
            if not rid or not (rx.fullmatch(rid) or rx.fullmatch(rid.split("/")[-1])):
                return False
        return True

    def children(i: int) -> list[int]:
        prefix, depth = nodes[i].path + ".", nodes[i].depth + 1
        return [j for j in range(len(nodes)) if nodes[j].depth == depth and nodes[j].path.startswith(prefix)]

    def deepest(i: int) -> int:
        kids = [c for c in children(i) if hit(c)]
        return deepest(kids[-1]) if kids else i

    found = sorted({deepest(i) for i in range(len(nodes)) if hit(i)},
                   key=lambda i: (nodes[i].bounds.top, nodes[i].bounds.left))
    if "index" in selector:
        k = int(selector["index"])
        return found[k:k + 1]
    return found


def _inside(tree: UITree, i: int, target: dict[str, Any]) -> bool:
    """Node ``i`` is the recorded target or lies inside it (Maestro taps a descendant's centre)."""
    b = tree.nodes[i].bounds
    left, top, right, bottom = target["bounds"]
    return left <= b.left and top <= b.top and b.right <= right and b.bottom <= bottom


def _record(engine: DataEngine, name: str) -> RunResult:
    """The task's reference run, played by the scripted model on the simulated phone (what the
    ``record_task`` fixture does; that fixture is function-scoped, this run is shared)."""
    task = load_task(TASKS / name)
    opts = task.sim.model_dump() if task.sim is not None else {}
    world, seed = opts.pop("world", "default"), opts.pop("seed", 0)
    opts.pop("latency", None)
    phone = SimPhone(world=world, seed=seed, **{k: v for k, v in opts.items() if v is not None})
    result = run_task(task, load_profile("flash"), phone, ScriptedModel(reference_script(task)), engine,
                      real_time=False)
    assert result.success, result.message
    return result


# -- the recorded shop run -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DataEngine, str, MaestroFlow]]:
    base = tmp_path_factory.mktemp("shop")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ARTEMIS_HOME", str(base / "home"))
        engine = DataEngine.open(base / "data")
        run = _record(engine, "shop-office-order.yaml")
    yield engine, run.session_id, maestro_flow(engine, run.session_id)
    engine.close()


def _pre_tree(engine: DataEngine, step: StepRecord) -> UITree:
    assert step.ui_xml, step.number
    return parse_hierarchy(engine.blob(step.ui_xml))


def test_every_selector_finds_exactly_the_recorded_element(shop: tuple[DataEngine, str, MaestroFlow]) -> None:
    engine, sid, flow = shop
    steps = {s.number: s for s in engine.get_steps(sid)}
    checked = 0
    owners: dict[str, set[tuple[str, str, str, str]]] = {}
    for entry in flow.steps:
        for command in entry.commands:
            if not isinstance(command, dict) or next(iter(command)) not in SELECTING:
                continue
            selector = command[next(iter(command))]
            assert "point" not in selector, (entry.step, selector)  # every target here has a label
            step = steps[entry.step]
            tree = _pre_tree(engine, step)
            found = maestro_find(tree, selector)
            assert len(found) == 1, (entry.step, selector, [tree.nodes[i] for i in found])
            assert _inside(tree, found[0], step.target or {}), (entry.step, selector, step.target)
            t = step.target or {}
            key = yaml.safe_dump({k: v for k, v in selector.items() if k != "optional"}, sort_keys=True)
            owners.setdefault(key, set()).add((t["class_name"], t["resource_id"], t["content_desc"], t["text"]))
            checked += 1
    assert checked >= 48 + 6 + 2  # the product taps, the pop-ups, cart and checkout (and the fields)
    shared = {key: targets for key, targets in owners.items() if len(targets) > 1}
    assert not shared, shared  # no selector stands for two different recorded targets
    # the 48 product taps are told apart by their content-desc, not "Add to cart" for every row
    product = [c["tapOn"] for c in flow.commands if isinstance(c, dict) and "tapOn" in c
               and "cart" in str(c["tapOn"].get("text", "")).lower()]
    assert len(product) == 48
    assert {"text": "Add USB-C Cable to cart"} in product and {"text": "Add to cart"} not in product


def test_popup_dismissals_are_optional(shop: tuple[DataEngine, str, MaestroFlow]) -> None:
    engine, sid, flow = shop
    steps = {s.number: s for s in engine.get_steps(sid)}
    popup_steps = {n for n, s in steps.items() if "popup]" in (s.thought or "")}
    assert len(popup_steps) >= 6  # seed 64 shows the promotion pop-up six times or more
    for entry in flow.steps:
        taps = [c["tapOn"] for c in entry.commands if isinstance(c, dict) and "tapOn" in c]
        if entry.step in popup_steps:
            assert entry.popup and taps == [{"id": "promo_dismiss", "optional": True}], (entry.step, taps)
            assert (steps[entry.step].target or {})["resource_id"].startswith("com.artemis.promo:")
        else:
            assert all("optional" not in t for t in taps), (entry.step, taps)
    text = flow.to_yaml()
    assert text.count("optional: true") == len(popup_steps)
    commands = list(yaml.safe_load_all(text))[1]
    assert sum(1 for c in commands if isinstance(c, dict) and c.get("tapOn", {}).get("optional")) == len(popup_steps)


def test_a_confirmation_the_task_needs_is_a_required_step(tmp_path: Path) -> None:
    """contacts-delete confirms "Delete this contact?" (``android:id/button1`` in the app's own
    dialog): that tap is the task's progress, so the flow must not pass without deleting."""
    engine = DataEngine.open(tmp_path / "data")
    run = _record(engine, "contacts-delete.yaml")
    steps = {s.number: s for s in engine.get_steps(run.session_id)}
    confirm = [n for n, s in steps.items() if (s.target or {}).get("resource_id") == "android:id/button1"]
    assert len(confirm) == 1 and (steps[confirm[0]].outcome or {}).get("windows_closed")  # the dialog closed
    flow = maestro_flow(engine, run.session_id)
    entry = next(e for e in flow.steps if e.step == confirm[0])
    taps = [c["tapOn"] for c in entry.commands if isinstance(c, dict) and "tapOn" in c]
    assert not entry.popup and taps and all("optional" not in t for t in taps), taps
    assert "optional" not in flow.to_yaml()
    engine.close()


def test_setup_and_step_comments(shop: tuple[DataEngine, str, MaestroFlow]) -> None:
    engine, sid, flow = shop
    text = flow.to_yaml()
    header, commands = list(yaml.safe_load_all(text))
    assert header == {"appId": "com.artemis.shop"}
    # the task's setup (am force-stop) first, then the recorded launch, which does not restart the app
    assert commands[:2] == [{"stopApp": "com.artemis.shop"},
                            {"launchApp": {"appId": "com.artemis.shop", "stopApp": False}}]
    assert "# setup: am force-stop com.artemis.shop" in text
    lines = text.splitlines()
    for s in engine.get_steps(sid):  # one comment per recorded step, with its number
        assert sum(1 for line in lines if line.startswith(f"# step {s.number}: ")) == 1, s.number
    assert "# step 69: finish success=true" in text


def test_setup_without_a_maestro_command_is_an_adb_comment() -> None:
    assert setup_commands("am force-stop com.android.settings") == [{"stopApp": "com.android.settings"}]
    assert setup_commands("pm clear com.artemis.notes") == [{"clearState": "com.artemis.notes"}]
    assert setup_commands("settings put global wifi_on 0") == []
    assert setup_commands("am force-stop com.a; rm -rf /") == []  # only a plain package is translated


def test_setup_comment_in_a_flow(tmp_path: Path) -> None:
    engine = DataEngine.open(tmp_path / "data")
    run = _record(engine, "settings-dark-theme.yaml")
    text = maestro_flow(engine, run.session_id).to_yaml()
    assert ("# setup: Maestro has no shell command: run this with adb before the flow: "
            "adb shell 'settings put secure ui_night_mode 1'") in text
    assert "- stopApp: com.android.settings" in text
    engine.close()


def test_regex_literal_escapes_what_maestro_would_read_as_regex() -> None:
    for literal in ("$9.99", "Cart (0)", "a+b", "[x]", "Total: $15", "50% off?", "C:\\dir", "a|b", "^{}*"):
        pattern = regex_literal(literal)
        assert re.fullmatch(pattern, literal), literal
        assert not re.fullmatch(pattern, literal + "x")
    assert regex_literal("Add USB-C Cable to cart") == "Add USB-C Cable to cart"  # nothing needless


def _step(**kw: Any) -> StepRecord:
    base: dict[str, Any] = {"session_id": "s", "number": 3, "action_type": "tap", "foreground_app": "com.app"}
    return StepRecord(**{**base, **kw})


def test_popup_detection_without_the_scripted_marker() -> None:
    closed = {"windows_closed": ['"Rate us" (com.app)'], "app_before": "com.app", "app_after": "com.app"}
    overlay = {"text": "OK", "resource_id": "com.ads:id/ok", "label_source": "index"}
    dismiss = {"text": "Not now", "resource_id": "com.app:id/later", "label_source": "index"}
    ordinary = {"text": "Save", "resource_id": "com.app:id/save", "label_source": "index"}
    assert dismissed_popup(_step(target=overlay, outcome=closed), "com.app")
    assert dismissed_popup(_step(target=dismiss, outcome=closed), "com.app")
    assert not dismissed_popup(_step(target=ordinary, outcome=closed), "com.app")
    confirm = {"text": "Delete", "resource_id": "android:id/button1", "label_source": "index"}
    assert not dismissed_popup(_step(target=confirm, outcome=closed), "com.app")  # the app's own dialog
    assert not dismissed_popup(_step(target=dismiss, outcome={"windows_closed": []}), "com.app")
    assert dismissed_popup(_step(action_type="press_key", action_args={"key": "back"}, outcome=closed), "com.app")
    assert dismissed_popup(_step(thought="[script 4/9 popup] A pop-up is in the way", target=ordinary), "com.app")


_ROWS = """<hierarchy rotation="0">
<node index="0" class="android.widget.FrameLayout" package="com.app" bounds="[0,0][1080,2400]">
  <node class="android.widget.TextView" text="Price: $9.99" package="com.app" bounds="[0,100][600,200]"/>
  <node class="android.widget.Button" text="Add to cart" clickable="true" package="com.app" bounds="[700,100][1000,200]"/>
  <node class="android.widget.Button" text="Add to cart" clickable="true" package="com.app" bounds="[700,300][1000,400]"/>
  <node class="android.widget.LinearLayout" clickable="true" package="com.app" bounds="[0,500][1080,700]">
    <node class="android.widget.TextView" text="Open (2)" package="com.app" bounds="[40,540][400,660]"/>
  </node>
  <node class="android.widget.Button" text="Add to cart" clickable="true" package="com.app" bounds="[700,800][1000,900]"
        resource-id="com.app:id/add"/>
</node>
</hierarchy>"""


@pytest.mark.parametrize(("bounds", "cls", "text", "rid", "expected"), [
    ((700, 300, 1000, 400), "android.widget.Button", "Add to cart", "", {"text": "Add to cart", "index": 1}),
    ((700, 800, 1000, 900), "android.widget.Button", "Add to cart", "com.app:id/add", {"id": "add"}),
    ((0, 500, 1080, 700), "android.widget.LinearLayout", "Open (2)", "", {"text": "Open \\(2\\)"}),  # borrowed
])
def test_selectors_on_a_hand_built_screen(bounds: tuple[int, int, int, int], cls: str, text: str, rid: str,
                                          expected: dict[str, Any]) -> None:
    from artemis_cli.export.maestro_select import choose_selector
    from artemis_cli.perception.types import Target

    tree = parse_hierarchy(_ROWS)
    target = Target(text=text, resource_id=rid, class_name=cls, bounds=bounds, label_source="index")
    selector = choose_selector(tree, target)
    assert selector == expected
    (found,) = maestro_find(tree, selector)
    assert _inside(tree, found, target.to_dict())
