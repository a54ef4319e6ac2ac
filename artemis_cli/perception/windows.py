"""The top-level windows of a dump, in the order the screen draws them (SPEC §6, §15 "Windows").

uiautomator2 (and ``uiautomator dump`` on many devices) writes one top-level ``<node>`` per window
— the app, the status bar, the navigation bar, the keyboard, dialogs — and collects the windows in
a set, so the order in the file is not the order on screen.  :func:`order_windows` rebuilds it.

Ordering rule, bottom to top:

1. **Display.**  Only windows on the dump's main display take part: display 0 when any window is
   on it (or says no ``display-id``), else the lowest ``display-id`` in the dump.  Windows of other
   displays are not on the screenshot: they are never hit and never listed.
2. **Layer**, by what the window is, in Android's window-type order:

   ``APP``         everything not below: the app, its dialogs and pop-ups, system dialogs (package
                   ``android``), other apps' overlays (Edge panel, chat heads);
   ``IME``         the keyboard: a package of an input method (``com.google.android.inputmethod.*``,
                   ``com.android.inputmethod.*``, ``…inputmethod…``, ``…keyboard…``, Samsung's
                   ``honeyboard``, SwiftKey) or a window holding an ``InputMethod…`` /
                   ``…inputmethodservice…`` class;
   ``STATUS_BAR``  a System UI (``com.android.systemui``) window against the top edge, narrower
                   than a quarter of the screen, or holding a ``status_bar`` id;
   ``SHADE``       a System UI window covering half the screen or more (notification shade,
                   keyguard), or holding a ``notification_shade`` / ``notification_panel`` id;
   ``SYSTEM``      any other System UI window (volume panel, System UI dialogs);
   ``NAV_BAR``     a System UI window with a ``navigation_bar`` / ``navbar`` id;
   ``DECOR``       screen decorations: ``rounded_corners``, ``display_cutout``, ``screen_decor`` ids.
3. **Within a layer**, larger windows under smaller ones (a dialog or pop-up is smaller than the
   window it floats over); equal areas keep the file's order, later on top — except that an
   activity's window (``window-type`` ``BASE_APPLICATION``, from the window manager) goes under
   the other windows of its size (a full-screen dialog or sheet of its app).

A window *catches touches* only when it holds something a touch can land on — a visible node
that is actionable or carries text / content-desc.  Empty windows (screen decorations, overlays
that pass touches through) and ``DECOR`` windows are transparent: they are never hit and never
cover what is under them.  The hit test goes top-down: the topmost touch-catching window whose
bounds contain the point wins, and within it Android's touch dispatch picks the node (children in
reverse drawing order before their parent: :mod:`artemis_cli.perception.hittest`).

**Modal windows** (``Window.modal``) take every touch on the screen, not only those inside them,
except the touches of the windows drawn above them (the status bar, the navigation bar, the
keyboard): Android's input dispatch sends a touch outside a *touch-modal* window to that window
(a dialog then cancels itself or swallows it, a pop-up menu closes), never to the app behind.
What is behind the topmost modal window is not offered to the model and a touch meant for it is
not sent (:mod:`~artemis_cli.perception.modal`). A window is modal when, in this order:

1. it is never one: the keyboard, the status bar, the navigation bar, the shade, screen
   decorations, a window added from the window manager only (``synthetic``: nothing of its own),
   one that catches no touch, and one with no app window below it (nothing to be in front of);
2. the window manager said so (a dump completed from ``dumpsys window``, which prints the flags):
   touch-modal is Android's own rule — neither ``NOT_FOCUSABLE`` nor ``NOT_TOUCH_MODAL`` (nor
   ``NOT_TOUCHABLE``) among its flags; toasts and system bars never are.  So an ``AlertDialog``
   (``ty=APPLICATION fl=DIM_BEHIND …``), the app-error dialog (``ty=SYSTEM_ALERT``), a focusable
   pop-up menu or spinner list (``ty=APPLICATION_PANEL``) are modal; an autocomplete drop-down
   (``NOT_FOCUSABLE``: typing goes on behind it) or a volume panel (``NOT_TOUCH_MODAL``) is not;
3. else from what the dump holds, as a phone draws it:

   * an ``AlertDialog``'s frame (``android:id/parentPanel``, ``alertTitle``, ``button1``-``3``,
     the framework's ``aerr_*`` buttons) or a runtime-permission prompt (the permission
     controller's or the package installer's package or ``permission_allow…`` button) — modal;
   * a scrim: a window covering the screen whose full-window clickable backdrop (``touch_outside``
     of a Material bottom sheet, ``design_bottom_sheet``, any label-less clickable node covering
     the window) lies beside smaller content — modal;
   * a dialog-sized window (smaller than the screen, at least a seventh of its shorter side each
     way) of the app's own package or the framework's, drawn over an app window — modal (a
     dialog, or a pop-up menu: a focusable ``PopupWindow`` closes on an outside touch, which
     then reaches nothing behind), unless the window below holds the focused text field outside
     it (an autocomplete drop-down: typing, and touches, go on behind it).  Other apps' small
     overlays (Samsung's Edge panel handle, chat heads) are not.

``Window.modal_kind`` names it for the model: ``dialog``, ``menu`` (a pop-up) or ``sheet``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import IntEnum

from artemis_cli.perception.structure import TreeStructure, is_actionable, is_edit, own_label
from artemis_cli.perception.types import Bounds, UINode, UITree

__all__ = ["Layer", "Window", "is_input_method_package", "keyboard_in_dump", "order_windows"]

SYSTEM_UI = "com.android.systemui"
_IME_PREFIXES = (
    "com.google.android.inputmethod.",
    "com.android.inputmethod.",
    "com.sohu.inputmethod.",
    "com.touchtype.swiftkey",
)
_IME_WORDS = ("inputmethod", "keyboard", "honeyboard")
_DECOR_IDS = ("rounded_corners", "display_cutout", "screen_decor")
_NAV_IDS = ("navigation_bar", "navbar", "nav_bar")
_SHADE_IDS = ("notification_shade", "notification_panel")


class Layer(IntEnum):
    APP = 0
    IME = 1
    STATUS_BAR = 2
    SHADE = 3
    SYSTEM = 4
    NAV_BAR = 5
    DECOR = 6


@dataclass(frozen=True)
class Window:
    """One top-level node and its subtree (node indices ``root`` to ``end - 1``).

    ``key`` (package, resource id, class of the top node) tells windows of two dumps apart (a
    dialog that opened); ``title`` is its first non-blank text; ``path`` its top node's path."""

    root: int
    end: int
    bounds: Bounds
    package: str
    layer: Layer
    catches_touches: bool
    key: tuple[str, str, str] = ("", "", "")
    title: str = ""
    path: str = ""
    #: the window manager's name for it, when the tree was completed from ``dumpsys window``
    #: (:mod:`~artemis_cli.perception.wm_windows`); ``synthetic``: known from there only (no
    #: content of its own), never reported as opened or closed itself
    wm_title: str = ""
    synthetic: bool = False
    #: takes every touch of the screen but those of the windows above it (module docstring);
    #: ``modal_kind``: "dialog", "menu" or "sheet"
    modal: bool = False
    modal_kind: str = ""

    def same_as(self, other: Window) -> bool:
        """One window in two trees: by the window manager's title when both have one (an
        activity's ``PKG/CLASS`` counts as its package's screen), else by package, id and class."""
        if self.wm_title and other.wm_title:
            return self.package == other.package and _wm_key(self.wm_title) == _wm_key(other.wm_title)
        return self.key == other.key

    def covers(self, node: UINode) -> bool:
        """True when this window lies over ``node``'s centre (and ``node`` is not inside it)."""
        if node.path == self.path or node.path.startswith(self.path + "."):
            return False
        return self.bounds.contains(*node.bounds.center)


def _wm_key(title: str) -> str:
    return "activity" if "/" in title else title


def is_input_method_package(package: str) -> bool:
    p = package.lower()
    return p.startswith(_IME_PREFIXES) or any(word in p for word in _IME_WORDS)


def _short_id(resource_id: str) -> str:
    return resource_id.rsplit("/", 1)[-1].lower()


#: ``dumpsys window`` types of the windows :mod:`~artemis_cli.perception.wm_windows` marks.
_WM_LAYERS = {"INPUT_METHOD": Layer.IME, "STATUS_BAR": Layer.STATUS_BAR, "STATUS_BAR_ADDITIONAL": Layer.STATUS_BAR,
              "NOTIFICATION_SHADE": Layer.SHADE, "NAVIGATION_BAR": Layer.NAV_BAR,
              "NAVIGATION_BAR_PANEL": Layer.NAV_BAR, "SYSTEM_DIALOG": Layer.SYSTEM, "VOLUME_OVERLAY": Layer.SYSTEM}


def _layer(tree: UITree, root: int, end: int) -> Layer:
    nodes = tree.nodes
    window = nodes[root]
    if window.window_type:  # the window manager named it (a dump of the active window, completed)
        return _WM_LAYERS.get(window.window_type, Layer.APP)
    package = window.package or next((nodes[i].package for i in range(root, end) if nodes[i].package), "")
    near_root = (nodes[i].class_name.lower() for i in range(root, end) if nodes[i].depth <= 2)
    if is_input_method_package(package) or any(
        c.rsplit(".", 1)[-1].startswith("inputmethod") or "inputmethodservice" in c for c in near_root
    ):
        return Layer.IME
    ids = {_short_id(nodes[i].resource_id) for i in range(root, end) if nodes[i].resource_id}

    def has_id(words: tuple[str, ...]) -> bool:
        return any(word in rid for rid in ids for word in words)

    if package != SYSTEM_UI:
        return Layer.APP
    if any(word in _short_id(window.resource_id) for word in _DECOR_IDS):
        return Layer.DECOR
    screen = max(1, tree.screen_width * tree.screen_height)
    large = window.bounds.area * 2 >= screen
    if has_id(_NAV_IDS) and not large:
        return Layer.NAV_BAR
    if large or has_id(_SHADE_IDS):
        return Layer.SHADE
    b = window.bounds
    if (b.top <= 0 and b.height * 4 < max(1, tree.screen_height)) or has_id(("status_bar",)):
        return Layer.STATUS_BAR
    return Layer.SYSTEM


def _main_display(tree: UITree, roots: list[int]) -> int:
    ids = {tree.nodes[r].display_id for r in roots}
    if None in ids or 0 in ids or not ids:
        return 0
    return min(i for i in ids if i is not None)


def _catches_touches(tree: UITree, structure: TreeStructure, root: int, end: int, layer: Layer) -> bool:
    if layer == Layer.DECOR:
        return False
    nodes = tree.nodes
    return any(
        structure.visible(i) and (is_actionable(nodes[i]) or bool(own_label(nodes[i])))
        for i in range(root, end)
    )


def order_windows(tree: UITree, structure: TreeStructure | None = None) -> tuple[Window, ...]:
    """The windows of the main display, bottom to top (see the module docstring for the rule)."""
    structure = structure or TreeStructure.of(tree)
    roots = [i for i, node in enumerate(tree.nodes) if node.depth == 0]
    display = _main_display(tree, roots)
    windows: list[tuple[int, int, int, int, Window]] = []
    for order, root in enumerate(roots):
        node = tree.nodes[root]
        if (node.display_id or 0) != display:
            continue
        end = structure.subtree_end[root]
        layer = _layer(tree, root, end)
        window = Window(
            root=root,
            end=end,
            bounds=node.bounds,
            package=node.package,
            layer=layer,
            catches_touches=_catches_touches(tree, structure, root, end, layer),
            key=(node.package, node.resource_id, node.class_name),
            title=next((tree.nodes[i].text for i in range(root, end) if tree.nodes[i].text.strip()), ""),
            path=node.path,
            wm_title=node.window_title,
            synthetic=node.synthetic,
        )
        # an activity's window under its own dialog of the same size (a dump completed from the
        # window manager: the activity is added after the dialog) is drawn below it
        base = 0 if node.window_type == "BASE_APPLICATION" else 1
        windows.append((int(layer), -node.bounds.area, base, order, window))
    windows.sort(key=lambda w: w[:4])
    return _with_modality(tree, structure, [w[4] for w in windows])


_NEVER_MODAL = (Layer.IME, Layer.STATUS_BAR, Layer.SHADE, Layer.NAV_BAR, Layer.DECOR)
#: window types that never take the touch of the screen (dumpsys's names)
_NEVER_MODAL_TYPES = {"TOAST", "INPUT_METHOD", "INPUT_METHOD_DIALOG", "STATUS_BAR", "STATUS_BAR_ADDITIONAL",
                      "NAVIGATION_BAR", "NAVIGATION_BAR_PANEL", "NOTIFICATION_SHADE", "WALLPAPER", "VOLUME_OVERLAY",
                      "ACCESSIBILITY_OVERLAY", "APPLICATION_MEDIA", "APPLICATION_MEDIA_OVERLAY"}
_MENU_TYPES = {"APPLICATION_PANEL", "APPLICATION_SUB_PANEL", "APPLICATION_ATTACHED_DIALOG", "1000", "1002", "1003"}
#: packages whose windows over an app are the framework's dialogs (app errors, permission prompts)
_FRAMEWORK_PACKAGES = ("android", "com.android.permissioncontroller", "com.google.android.permissioncontroller",
                       "com.android.packageinstaller", "com.google.android.packageinstaller")
_PERMISSION_PACKAGES = _FRAMEWORK_PACKAGES[1:]
_DIALOG_IDS = {"android:id/parentPanel", "android:id/alertTitle", "android:id/button1", "android:id/button2",
               "android:id/button3", "android:id/aerr_close", "android:id/aerr_wait", "android:id/aerr_app_info",
               "android:id/aerr_restart", "android:id/aerr_report", "android:id/aerr_mute"}
_DIALOG_ID_WORDS = ("permission_allow", "grant_dialog")
_SCRIM_IDS = ("touch_outside", "design_bottom_sheet")


def _with_modality(tree: UITree, structure: TreeStructure, windows: list[Window]) -> tuple[Window, ...]:
    """``windows`` (bottom to top) with ``modal`` and ``modal_kind`` set (module docstring)."""
    out: list[Window] = []
    app_below = False
    for window in windows:
        kind = _modal_kind(tree, structure, window, out) if app_below else ""
        out.append(replace(window, modal=True, modal_kind=kind) if kind else window)
        app_below = app_below or window.layer == Layer.APP
    return tuple(out)


def _modal_kind(tree: UITree, structure: TreeStructure, window: Window, below: list[Window]) -> str:
    """"dialog", "menu" or "sheet" when ``window``, drawn over the windows ``below``, is modal; else ""."""
    if window.layer in _NEVER_MODAL or window.synthetic or not window.catches_touches or not window.bounds.area:
        return ""
    top = tree.nodes[window.root]
    flags = top.window_flags
    if flags is not None:  # the window manager said
        kind = top.window_type
        if kind in _NEVER_MODAL_TYPES or {"NOT_FOCUSABLE", "NOT_TOUCH_MODAL", "NOT_TOUCHABLE"} & set(flags):
            return ""
        return "menu" if kind in _MENU_TYPES or window.wm_title.startswith("PopupWindow:") else "dialog"
    nodes = tree.nodes
    inside = range(window.root, window.end)
    ids = {nodes[i].resource_id for i in inside if nodes[i].resource_id}
    if ids & _DIALOG_IDS or window.package in _PERMISSION_PACKAGES or any(
            word in rid for rid in ids for word in _DIALOG_ID_WORDS):
        return "dialog"
    if window.layer != Layer.APP:
        return ""
    w, h = max(1, tree.screen_width), max(1, tree.screen_height)
    b = window.bounds
    if b.area * 10 >= w * h * 9:  # covers the screen: modal only with a scrim beside its content
        return "sheet" if _has_scrim(tree, structure, window, ids) else ""
    if min(b.width, b.height) * 7 < min(w, h):
        return ""  # a handle, a bubble: no dialog
    apps = [x for x in below if x.layer == Layer.APP]
    if window.package not in _FRAMEWORK_PACKAGES and window.package not in {x.package for x in apps}:
        return ""  # another app's overlay over this one
    if any(nodes[i].focused and is_edit(nodes[i]) and not b.contains(*nodes[i].bounds.center)
           for x in apps for i in range(x.root, x.end)):
        return ""  # a drop-down under the field being typed into
    return "menu" if any(nodes[i].scrollable or "ListView" in nodes[i].class_name for i in inside) else "dialog"


def _has_scrim(tree: UITree, structure: TreeStructure, window: Window, ids: set[str]) -> bool:
    """A full-window backdrop that takes touches beside the window's smaller content."""
    if any(_short_id(rid) in _SCRIM_IDS for rid in ids):
        return True
    nodes = tree.nodes
    area = window.bounds.area
    for i in range(window.root, window.end):
        n = nodes[i]
        if n.clickable and not own_label(n) and not n.scrollable and n.bounds.area * 10 >= area * 9:
            end = structure.subtree_end[i]
            if any(own_label(nodes[j]) and nodes[j].bounds.area * 2 < area
                   for j in range(window.root, window.end) if not i <= j < end and j > i):
                return True
    return False


def keyboard_in_dump(windows: Sequence[Window]) -> bool | None:
    """Whether the on-screen keyboard is shown, as far as a dump's ``windows`` (in drawing order,
    as ``HitIndex.windows`` holds them: the observation has built them already) can say: True when
    one is an input method's window; False when the dump holds every window (System UI's bars
    beside the app's, as uiautomator2 dumps) and none is a keyboard; None for a dump of the active
    window alone (plain ``uiautomator dump`` on a phone), which never shows the keyboard either way.
    Windows added from the window manager (:mod:`~artemis_cli.perception.wm_windows`) do not count:
    the device's ``dumpsys input_method`` says it for such a dump."""
    windows = [w for w in windows if not w.synthetic]
    if any(w.layer == Layer.IME for w in windows):
        return True
    if len(windows) > 1 and any(w.package == SYSTEM_UI for w in windows):
        return False
    return None
