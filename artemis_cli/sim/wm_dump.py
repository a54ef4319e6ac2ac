"""``dumpsys window`` as Android 14 prints it: every window of the display, top-most first.

One block per ``WindowState`` (``Window #N Window{hash u0 TITLE}:``), with the lines tools read:
``package=``, the window type (``ty=``), ``mViewVisibility=``, ``Frames: … frame=[l,t][r,b] …``,
``isOnScreen=`` / ``isVisible=``; then the policy lines (``KeyguardServiceDelegate … showing=``,
``mDreamingLockscreen=``), ``mCurrentFocus=`` and ``mFocusedApp=``.  As on a phone, windows that
are not on screen are listed too (the notification shade, a hidden keyboard: ``isVisible=false``),
and the wallpaper behind the launcher is a full-screen System UI window: a reader that takes every
block for something drawn over the app is wrong, as it would be on a phone.

Titles: an activity's window is ``PKG/CLASS``; a dialog has no title of its own, so WindowState
names it by its package (``Window{… u0 com.android.settings}``); the system windows are
``StatusBar``, ``NavigationBar0``, ``InputMethod``, ``NotificationShade``.

Types and flags (``ty=``, ``fl=``), as AOSP sets them: an app's ``AlertDialog`` is
``ty=APPLICATION fl=DIM_BEHIND …`` (touch-modal: neither ``NOT_FOCUSABLE`` nor ``NOT_TOUCH_MODAL``);
the permission prompt is the permission controller's ``GrantPermissionsActivity``, a dialog-themed
activity (``ty=BASE_APPLICATION fl=DIM_BEHIND …``); the app-error dialog is the framework's
``BaseErrorDialog`` (``ty=SYSTEM_ALERT`` — ``setType(TYPE_SYSTEM_ALERT)`` —, titled
``Application Error: PROCESS`` / ``Application Not Responding: PROCESS``, ``fl=DIM_BEHIND
ALT_FOCUSABLE_IM …``); a pop-up menu is a focusable ``PopupWindow`` (``PopupWindow:HASH``,
``ty=APPLICATION_PANEL``, no ``DIM_BEHIND``); the system bars and the keyboard are ``NOT_FOCUSABLE``.
The promotion pop-up is an overlay of its own app (``ty=APPLICATION_OVERLAY``) that takes the touch
as a dialog does (``DIM_BEHIND``, touch-modal); the sim leaves the input focus with the app under it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from artemis_cli.sim.app_errors import FRAMEWORK
from artemis_cli.sim.keyboard import keyboard_top
from artemis_cli.sim.permissions import CONTROLLER
from artemis_cli.sim.popup import PROMO_PACKAGE
from artemis_cli.sim.sysui import IME_PACKAGE, SYSTEMUI

if TYPE_CHECKING:
    from artemis_cli.sim.phone import SimPhone

Rect = tuple[int, int, int, int]
LAUNCHER = "com.android.launcher3"


@dataclass(frozen=True)
class WmWindow:
    title: str
    package: str
    type: str  # WindowManager.LayoutParams type, as dumpsys names it
    frame: Rect
    visible: bool
    focusable: bool = True
    flags: str = ""  # printed on the ``fl=`` line before the common ones ("NOT_FOCUSABLE " is added)


def _hash(text: str, salt: str = "") -> str:
    return hashlib.md5(f"{salt}{text}".encode()).hexdigest()[:7]


def activity_title(phone: SimPhone, package: str) -> str:
    """``PKG/full.Class`` of the activity ``package`` shows (a window's title names the full class)."""
    return phone.activity_of(package).replace("/.", f"/{package}.", 1)


def wm_windows(phone: SimPhone) -> list[WmWindow]:
    """The phone's windows as the window manager lists them, top-most first."""
    w, h = phone.width, phone.height
    drawn = phone.windows()  # bottom to top: screen, dialogs, pop-up, keyboard, status bar, nav bar
    pkg = phone.current_package()
    out: list[WmWindow] = []
    status_seen = False
    for k, win in enumerate(drawn):
        frame = win.root.bounds
        if k == 0:
            out.append(WmWindow(activity_title(phone, pkg), pkg, "BASE_APPLICATION", frame, True))
        elif win.package == PROMO_PACKAGE:
            out.append(WmWindow(PROMO_PACKAGE, PROMO_PACKAGE, "APPLICATION_OVERLAY", frame, True, focusable=False,
                                flags="DIM_BEHIND"))
        elif win.package == IME_PACKAGE:
            out.append(WmWindow("InputMethod", IME_PACKAGE, "INPUT_METHOD", frame, True, focusable=False))
        elif win.package == SYSTEMUI and not status_seen:
            status_seen = True
            out.append(WmWindow("StatusBar", SYSTEMUI, "STATUS_BAR", frame, True, focusable=False))
        elif win.package == SYSTEMUI:
            out.append(WmWindow("NavigationBar0", SYSTEMUI, "NAVIGATION_BAR", frame, True, focusable=False))
        else:
            out.append(_app_window(phone, win.package, frame, menu=win.dismiss is not None))
    if not phone.keyboard_visible():  # the IME window stays, hidden
        top = keyboard_top(w, phone.app_height)
        out.append(WmWindow("InputMethod", IME_PACKAGE, "INPUT_METHOD", (0, top, w, phone.app_height), False,
                            focusable=False))
    shade = bool(getattr(phone, "locked", False)) or phone.shade.open  # the keyguard or the pulled-down shade
    out.append(WmWindow("NotificationShade", SYSTEMUI, "NOTIFICATION_SHADE", (0, 0, w, h), shade, focusable=shade))
    if pkg == LAUNCHER:
        out.append(WmWindow("com.android.systemui.wallpapers.ImageWallpaper", SYSTEMUI, "WALLPAPER", (0, 0, w, h),
                            True, focusable=False))
    # the window manager's z-order: system layers by type; app windows keep their drawing order
    layer = {"NAVIGATION_BAR": 0, "NOTIFICATION_SHADE": 1, "STATUS_BAR": 2, "INPUT_METHOD": 3, "WALLPAPER": 9}
    ranked = sorted(enumerate(out), key=lambda kw: (layer.get(kw[1].type, 4), -kw[0]))
    return [win for _, win in ranked]


def _app_window(phone: SimPhone, package: str, frame: Rect, *, menu: bool) -> WmWindow:
    """A window over the app's screen: its dialog, pop-up menu, the permission prompt or the
    framework's app-error dialog (module docstring)."""
    if menu:
        return WmWindow(f"PopupWindow:{_hash(package, 'popup')}", package, "APPLICATION_PANEL", frame, True,
                        flags="ALT_FOCUSABLE_IM SPLIT_TOUCH")
    if package == CONTROLLER:
        return WmWindow(f"{CONTROLLER}/com.android.permissioncontroller.permission.ui.GrantPermissionsActivity",
                        package, "BASE_APPLICATION", frame, True, flags="DIM_BEHIND ALT_FOCUSABLE_IM")
    err = phone.errors.current
    if package == FRAMEWORK and err is not None:
        what = "Application Error" if err.kind == "crash" else "Application Not Responding"
        return WmWindow(f"{what}: {err.package}", package, "SYSTEM_ALERT", frame, True,
                        flags="DIM_BEHIND ALT_FOCUSABLE_IM")
    return WmWindow(package, package, "APPLICATION", frame, True, flags="DIM_BEHIND SPLIT_TOUCH")


def _rect(r: Rect) -> str:
    return f"[{r[0]},{r[1]}][{r[2]},{r[3]}]"


def _block(n: int, win: WmWindow, width: int) -> str:
    wid = _hash(win.title, win.type)
    uid = 10123 if win.package not in (SYSTEMUI, IME_PACKAGE) else (10120 if win.package == SYSTEMUI else 10133)
    flags = ("NOT_FOCUSABLE " if not win.focusable and not win.flags else "") + (f"{win.flags} " if win.flags else "")
    vis = "0x0" if win.visible else ("0x4" if win.type == "NOTIFICATION_SHADE" else "0x8")
    r = win.frame
    on = str(win.visible).lower()
    return (
        f"  Window #{n} Window{{{wid} u0 {win.title}}}:\n"
        f"    mDisplayId=0 rootTaskId={12 if win.type.endswith('APPLICATION') else 1} "
        f"mSession=Session{{{_hash(win.package)} 2345:u0a{uid - 10000}}} mClient=android.os.BinderProxy@{wid[::-1]}\n"
        f"    mOwnerUid={uid} showForAllUsers={str(win.package == SYSTEMUI).lower()} package={win.package} appop=NONE\n"
        f"    mAttrs={{(0,0)({'wrapxwrap' if win.flags else 'fillxfill'}) sim={{adjust=pan}} ty={win.type} fmt=TRANSLUCENT\n"
        f"      fl={flags}LAYOUT_IN_SCREEN HARDWARE_ACCELERATED\n"
        "      pfl=USE_BLAST FIT_INSETS_CONTROLLED\n      bhv=DEFAULT\n      fitTypes=}\n"
        f"    Requested w={r[2] - r[0]} h={r[3] - r[1]} mLayoutSeq=412\n"
        f"    mViewVisibility={vis} mHaveFrame=true mObscured=false\n"
        "    mGivenContentInsets=[0,0][0,0] mGivenVisibleInsets=[0,0][0,0]\n"
        f"    mHasSurface={on} isReadyForDisplay()={on} mWindowRemovalAllowed=false\n"
        f"    Frames: parent=[0,0][{width},{r[3]}] display=[0,0][{width},{r[3]}] frame={_rect(r)} "
        f"last={_rect(r)} insetsChanged=false\n"
        "     surface=[0,0][0,0]\n"
        f"    WindowStateAnimator{{{wid[::-1]} {win.title}}}:\n"
        f"      mDrawState={'HAS_DRAWN' if win.visible else 'NO_SURFACE'}       mLastHidden={str(not win.visible).lower()}\n"
        "    mForceSeamlesslyRotate=false seamlesslyRotate: pending=null"
        f"    isOnScreen={on}\n    isVisible={on}\n"
        "    keepClearAreas: restricted=[], unrestricted=[]\n    mPrepareSyncSeqId=0\n"
    )


def window_dump(phone: SimPhone) -> str:
    """``dumpsys window`` (the policy lines, the windows, the focus)."""
    wins = wm_windows(phone)
    pkg = phone.current_package()
    locked = str(bool(getattr(phone, "locked", False))).lower()
    focus = next((w for w in wins if w.visible and w.focusable), wins[0])
    act = activity_title(phone, pkg)
    policy = ("WINDOW MANAGER POLICY STATE (dumpsys window policy)\n"
              f"    mShowingLockscreen={locked} mShowingDream=false mDreamingLockscreen={locked} "
              "mDreamingSleepToken=null\n"
              f"    isKeyguardShowing={locked}\n"
              f"    KeyguardServiceDelegate\n      showing={locked}\n      inputRestricted={locked}\n"
              "      occluded=false\n      secure=false\n      dreaming=false\n      systemIsReady=true\n"
              f"      deviceHasKeyguard=true\n      enabled=true\n      interactiveState="
              f"{'INTERACTIVE_STATE_AWAKE' if phone.screen_on else 'INTERACTIVE_STATE_SLEEP'}\n\n")
    body = "".join(_block(n, win, phone.width) for n, win in enumerate(wins))
    return (policy + "WINDOW MANAGER WINDOWS (dumpsys window windows)\n" + body + "\n"
            "  mGlobalConfiguration={1.0 ?mcc?mnc [en_US] ldltr sw411dp 420dpi nrml long port finger}\n"
            "  mHasPermanentDpad=false\n  mTopFocusedDisplayId=0\n  mInTouchMode=true\n"
            f"  mDisplayFrozen=false windows=0 client=false apps=0  mRotation={phone.rotation()}  mLastOrientation=-1\n"
            f"  mCurrentFocus=Window{{{_hash(focus.title, focus.type)} u0 {focus.title}}}\n"
            f"  mFocusedApp=ActivityRecord{{{_hash(pkg)[::-1]} u0 {act.replace(pkg + '/' + pkg, pkg + '/')} t12}}\n")
