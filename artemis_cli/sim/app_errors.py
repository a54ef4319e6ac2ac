"""App crashes and ANRs (the ``crash:P`` / ``anr:P`` faults) and the framework's dialogs for them.

A crash writes what ``RuntimeInit``'s handler writes (``FATAL EXCEPTION: main``, ``Process: PKG,
PID: N``, the exception and its ``\\tat`` frames, tag AndroidRuntime, priority E, crash buffer),
then ActivityTaskManager's ``Force finishing activity`` and ActivityManager's ``Process PKG (pid N)
has died`` (system buffer); the process is gone, the launcher is in front and Android 14's
AppErrorDialog shows in its own window (package ``android``): "<App> keeps stopping" with
"App info" (``android:id/aerr_app_info``) and "Close app" (``android:id/aerr_close``).

An ANR leaves the app in front but frozen under "<App> isn't responding" with "Close app"
(``aerr_close``) and "Wait" (``aerr_wait``); the system log gets ``ANR in PKG (PKG/.MainActivity)``,
``PID: N``, ``Reason: Input dispatching timed out ...``.  While either dialog is up, touches
outside it are swallowed and keys do nothing except Back on the crash dialog (which closes it).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from artemis_cli.sim.activities import full_class, launch_activity
from artemis_cli.sim.layout import Ui, UiState
from artemis_cli.sim.widgets import Window

if TYPE_CHECKING:
    from artemis_cli.sim.phone import SimPhone

FRAMEWORK = "android"
_EXCEPTIONS = (
    ("java.lang.IllegalStateException", "Fragment MainFragment{4b1c2d0} not attached to a context."),
    ("java.lang.NullPointerException", "Attempt to invoke virtual method 'int java.lang.String.length()' "
                                       "on a null object reference"),
    ("java.lang.IndexOutOfBoundsException", "Index 3 out of bounds for length 3"),
    ("java.lang.IllegalStateException", "The specified child already has a parent. You must call "
                                        "removeView() on the child's parent first."),
)
_FRAMEWORK_FRAMES = (
    "android.view.View.performClick(View.java:7659)",
    "android.view.View.performClickInternal(View.java:7636)",
    "android.view.View.-$$Nest$mperformClickInternal(Unknown Source:0)",
    "android.view.View$PerformClick.run(View.java:30156)",
    "android.os.Handler.handleCallback(Handler.java:958)",
    "android.os.Handler.dispatchMessage(Handler.java:99)",
    "android.os.Looper.loopOnce(Looper.java:205)",
    "android.os.Looper.loop(Looper.java:294)",
    "android.app.ActivityThread.main(ActivityThread.java:8177)",
    "java.lang.reflect.Method.invoke(Native Method)",
    "com.android.internal.os.RuntimeInit$MethodAndArgsCaller.run(RuntimeInit.java:552)",
    "com.android.internal.os.ZygoteInit.main(ZygoteInit.java:971)",
)


@dataclass(frozen=True)
class AppError:
    kind: str  # "crash" | "anr"
    package: str
    label: str


class AppErrors:
    """The error dialog now up (at most one) and what its buttons do."""

    def __init__(self, phone: SimPhone) -> None:
        self.phone = phone
        self.current: AppError | None = None
        self.crashes = 0
        self.anrs = 0

    def label(self, pkg: str) -> str:
        app = self.phone.apps.get(pkg)
        return (app.label if app is not None and app.label else pkg.rsplit(".", 1)[-1].capitalize())

    def fault(self, kind: str, pkg: str) -> None:
        if kind == "crash":
            self.crash(pkg)
        else:
            self.anr(pkg)

    def crash(self, pkg: str) -> None:
        """``pkg`` throws on its main thread: logs, the process dies, the crash dialog shows."""
        ph = self.phone
        am = ph.am
        pid, _ = am.ensure_running(pkg)
        uid = am.table.app_uid(pkg)
        rng = ph.faults.exception_rng()
        exc, why = rng.choice(_EXCEPTIONS)
        cls = f"{pkg}.{rng.choice(('MainActivity', 'ui.ListFragment', 'ui.DetailFragment'))}"
        line = rng.randrange(40, 400)
        frames = [f"{cls}.onClick({cls.rsplit('.', 1)[-1]}.java:{line})", *_FRAMEWORK_FRAMES]
        ph.logs.write("main", "D", "AndroidRuntime", "Shutting down VM", pid, uid=uid)
        ph.logs.write("crash", "E", "AndroidRuntime", "FATAL EXCEPTION: main\n"
                      f"Process: {pkg}, PID: {pid}\n{exc}: {why}\n" + "\n".join(f"\tat {f}" for f in frames),
                      pid, uid=uid)
        ss = am.table.system_server
        ph.logs.write("system", "W", "ActivityTaskManager", f"  Force finishing activity {pkg}/{launch_activity(pkg)}", ss)
        ph.logs.write("events", "I", "am_crash", f"[{pid},0,{pkg},952745540,{exc},{why},"
                      f"{cls.rsplit('.', 1)[-1]}.java,{line}]", ss)
        am.died(pkg)
        self.crashes += 1
        self._leave(pkg)
        self.current = AppError("crash", pkg, self.label(pkg))
        ph.invalidate()

    def anr(self, pkg: str) -> None:
        ph = self.phone
        am = ph.am
        pid, _ = am.ensure_running(pkg)
        wid = hashlib.md5(pkg.encode()).hexdigest()[:7]
        cmp = f"{pkg}/{launch_activity(pkg)}"
        ph.logs.write("system", "E", "ActivityManager",
                      f"ANR in {pkg} ({cmp})\nPID: {pid}\nReason: Input dispatching timed out ({wid} {pkg}/"
                      f"{full_class(pkg, launch_activity(pkg))} (server) is not responding. Waited 5001ms for MotionEvent)\n"
                      f"Parent: {cmp}\nErrorId: 6d1e2f3a-0b4c-4d5e-8f60-{wid}12345\nFrequency of ANR: 1\n"
                      "Load: 2.45 / 1.88 / 1.02", am.table.system_server)
        ph.logs.write("events", "I", "am_anr", f"[0,{pid},{pkg},952745540,Input dispatching timed out]",
                      am.table.system_server)
        self.anrs += 1
        app = ph.apps.get(pkg)
        if app is not None:
            app.ui_state.focus = None
        ph.popup_visible = False
        self.current = AppError("anr", pkg, self.label(pkg))
        ph.invalidate()

    def _leave(self, pkg: str) -> None:
        ph = self.phone
        app = ph.apps.get(pkg)
        if app is not None:
            app.reset_ui()
        if ph.foreground == pkg:
            from artemis_cli.sim.worlds import LAUNCHER

            ph.foreground = LAUNCHER
            ph.popup_visible = False

    # -- the dialog's buttons ---------------------------------------------------------------
    def close_app(self) -> None:
        err = self.current
        self.current = None
        if err is not None and err.kind == "anr":
            am = self.phone.am
            pid = am.pid(err.package)
            if pid is not None:
                self.phone.logs.write("system", "I", "ActivityManager",
                                      f"Killing {pid}:{err.package}/u0a{am.table.app_uid(err.package) - 10000} "
                                      "(adj 0): user request after error", am.table.system_server)
            am.died(err.package)
            self._leave(err.package)
        self.phone.invalidate()

    def wait(self) -> None:
        self.current = None
        self.phone.invalidate()

    def app_info(self) -> None:
        self.current = None
        if self.phone.has_package("com.android.settings"):
            self.phone.switch_to("com.android.settings")
        self.phone.invalidate()

    def press(self, key: str) -> bool:
        """A key while a dialog is up: True when the dialog took it (Back closes a crash dialog)."""
        if self.current is None:
            return False
        if key == "back" and self.current.kind == "crash":
            self.close_app()
        else:
            self.phone.note_ignored(f"key {key}: the {self.current.label} {self.current.kind} dialog is up")
        return True

    def window(self) -> Window | None:
        err = self.current
        if err is None:
            return None
        ph = self.phone
        ui = Ui(FRAMEWORK, ph.width, ph.app_height, ph.opts, UiState())
        title = f"{err.label} keeps stopping" if err.kind == "crash" else f"{err.label} isn't responding"
        buttons = ([("App info", "aerr_app_info", self.app_info), ("Close app", "aerr_close", self.close_app)]
                   if err.kind == "crash" else
                   [("Close app", "aerr_close", self.close_app), ("Wait", "aerr_wait", self.wait)])
        r = ui.dialog_rect(170 + 140 * len(buttons), y_center=0.45)
        pad = ui.px(60)
        body = []
        top = r[1] + ui.px(160)
        for label, rid, cb in buttons:
            body.append(ui.button((r[0] + pad // 2, top, r[2] - pad // 2, top + ui.px(120)), label, cb,
                                  rid=rid, flat=True))
            top += ui.px(140)
        root = ui.dialog(r, title, body, [])
        return Window(FRAMEWORK, root, modal=True)
