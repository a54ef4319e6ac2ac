"""Parsers of device output, with samples in the formats real Android versions print."""

from __future__ import annotations

import pytest

from artemis_cli.device.adb_output import (
    DumpKind,
    broadcast_result,
    classify_dump_output,
    input_command_failed,
    parse_current_app,
    parse_ime_list,
    parse_sdk,
    parse_wm_size,
)

# --- uiautomator dump -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "kind", "retryable"),
    [
        ("UI hierchary dumped to: /sdcard/window_dump.xml\n", DumpKind.OK, True),
        ("UI hierchary dumped to: /data/local/tmp/x.xml", DumpKind.OK, True),
        ("ERROR: could not get idle state.\n", DumpKind.IDLE_TIMEOUT, True),
        ("ERROR: null root node returned by UiTestAutomationBridge.\n", DumpKind.NULL_ROOT, True),
        (
            "java.lang.IllegalStateException: UiAutomationService "
            "android.accessibilityservice.IAccessibilityServiceClient$Stub$Proxy@5deffd5"
            "already registered!\n\tat android.app.UiAutomation.connect(UiAutomation.java:250)",
            DumpKind.AUTOMATION_BUSY,
            False,
        ),
        ("/system/bin/sh: uiautomator: inaccessible or not found\n", DumpKind.NOT_AVAILABLE, False),
        ("/system/bin/sh: uiautomator: not found\n", DumpKind.NOT_AVAILABLE, False),
        ("Killed\n", DumpKind.KILLED, True),
        ("", DumpKind.UNKNOWN, True),
        ("Error: something odd\n", DumpKind.UNKNOWN, True),
        # some builds print the error and a success line: the error wins
        ("ERROR: could not get idle state.\nUI hierchary dumped to: /sdcard/x.xml", DumpKind.IDLE_TIMEOUT, True),
    ],
)
def test_classify_dump_output(output: str, kind: DumpKind, retryable: bool) -> None:
    outcome = classify_dump_output(output)
    assert outcome.kind is kind
    assert outcome.retryable is retryable
    assert outcome.ok is (kind is DumpKind.OK)


def test_dump_detail_is_the_telling_line() -> None:
    out = "WARNING: linker: something\nERROR: could not get idle state.\n"
    assert classify_dump_output(out).detail == "ERROR: could not get idle state."


# --- dumpsys window: foreground app -------------------------------------------------------------

ANDROID_7 = """\
WINDOW MANAGER WINDOWS (dumpsys window windows)
  Window #5 Window{5f3c7b4 u0 com.android.systemui.ImageWallpaper}:
    mDisplayId=0 stackId=0 mSession=Session{c4a5e1a 1083:u0a10023} mClient=android.os.BinderProxy@9d1c2e8
  mCurrentFocus=Window{8d3a1f2 u0 com.android.chrome/org.chromium.chrome.browser.ChromeTabbedActivity}
  mFocusedApp=AppWindowToken{e8a7c51 token=Token{4cbd78 ActivityRecord{3e1a2db u0 com.android.chrome/org.chromium.chrome.browser.ChromeTabbedActivity t21}}}
  mInputMethodTarget=Window{8d3a1f2 u0 com.android.chrome/org.chromium.chrome.browser.ChromeTabbedActivity}
"""

ANDROID_9 = """\
  mGlobalConfiguration={1.0 310mcc260mnc [en_US] ldltr sw411dp w411dp h659dp 420dpi nrml port finger -keyb/v/h -nav/h winConfig={ mBounds=Rect(0, 0 - 1080, 1794) mAppBounds=Rect(0, 0 - 1080, 1794) mWindowingMode=fullscreen mActivityType=undefined} s.6}
  mHasPermanentDpad=false
  mCurrentFocus=Window{f6e9e3f u0 com.google.android.apps.nexuslauncher/com.google.android.apps.nexuslauncher.NexusLauncherActivity}
  mFocusedApp=AppWindowToken{5ec2c1e token=Token{c5b8659 ActivityRecord{3f1a1a0 u0 com.google.android.apps.nexuslauncher/.NexusLauncherActivity t2}}}
"""

ANDROID_12 = """\
WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)
  Display: mDisplayId=0 rootTasks=4
    init=1080x2400 420dpi cur=1080x2400 app=1080x2274 rng=1080x1017-2274x2211
  mCurrentFocus=Window{b1f4c8e u0 com.android.settings/com.android.settings.Settings}
  mFocusedApp=ActivityRecord{6e5a36d u0 com.android.settings/.Settings t20}
"""

# Keyguard / notification shade has focus: no package in the window title
ANDROID_13_SHADE = """\
  mCurrentFocus=Window{7a2d0b5 u0 NotificationShade}
  mFocusedApp=ActivityRecord{95c1a2e u0 com.example.shop/.MainActivity t33}
"""

POPUP = """\
  mCurrentFocus=Window{1c9e0f3 u0 PopupWindow:3a8b6c1}
  mFocusedApp=ActivityRecord{9b2f0e4 u0 org.mozilla.firefox/org.mozilla.fenix.HomeActivity t45}
"""

APP_DIALOG = """\
  mCurrentFocus=Window{42c2b780 u0 com.whatsapp}
  mFocusedApp=ActivityRecord{1aa2 u0 com.whatsapp/.HomeActivity t9}
"""

NULL_FOCUS = """\
  mCurrentFocus=null
  mFocusedApp=null
"""

ACTIVITY_ANDROID_10 = """\
ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)
Display #0 (activities from top to bottom):
  * Stack #25: type=standard mode=fullscreen
    ResumedActivity: ActivityRecord{7f0e8b1 u0 com.google.android.gm/.ConversationListActivityGmail t123}
 ResumedActivity: ActivityRecord{7f0e8b1 u0 com.google.android.gm/.ConversationListActivityGmail t123}
"""

ACTIVITY_ANDROID_6 = """\
    mResumedActivity: ActivityRecord{2ab8e3c u0 com.android.vending/com.google.android.finsky.activities.MainActivity t3}
  mFocusedActivity: ActivityRecord{2ab8e3c u0 com.android.vending/com.google.android.finsky.activities.MainActivity t3}
"""

ACTIVITY_ANDROID_14 = """\
  topResumedActivity=ActivityRecord{c1d9a22 u0 com.android.deskclock/.DeskClock t58}
"""


@pytest.mark.parametrize(
    ("sample", "package"),
    [
        (ANDROID_7, "com.android.chrome"),
        (ANDROID_9, "com.google.android.apps.nexuslauncher"),
        (ANDROID_12, "com.android.settings"),
        (ANDROID_13_SHADE, "com.example.shop"),
        (POPUP, "org.mozilla.firefox"),
        (APP_DIALOG, "com.whatsapp"),
        (NULL_FOCUS, None),
        (ACTIVITY_ANDROID_10, "com.google.android.gm"),
        (ACTIVITY_ANDROID_6, "com.android.vending"),
        (ACTIVITY_ANDROID_14, "com.android.deskclock"),
        ("", None),
        ("garbage { } / mCurrentFocus=Window{", None),
    ],
)
def test_parse_current_app(sample: str, package: str | None) -> None:
    assert parse_current_app(sample) == package


# --- wm size, getprop, ime, broadcast, input --------------------------------------------------


def test_wm_size_prefers_override() -> None:
    assert parse_wm_size("Physical size: 1080x2400\n") == (1080, 2400)
    assert parse_wm_size("Physical size: 1440x3120\nOverride size: 1080x2340\n") == (1080, 2340)
    assert parse_wm_size("Override size: 720x1600\nPhysical size: 1080x2400") == (720, 1600)
    assert parse_wm_size("wm: not found") is None


def test_parse_sdk() -> None:
    assert parse_sdk("34\n") == 34
    assert parse_sdk("") is None


def test_ime_list_and_broadcast_result() -> None:
    out = (
        "com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME\n"
        "com.github.uiautomator/.AdbKeyboard\n"
    )
    assert parse_ime_list(out)[1] == "com.github.uiautomator/.AdbKeyboard"
    assert broadcast_result('Broadcasting: Intent { act=ADB_KEYBOARD_INPUT_TEXT flg=0x400000 (has extras) }\n'
                            'Broadcast completed: result=-1, data="success"') == -1
    assert broadcast_result("Broadcast completed: result=0") == 0
    assert broadcast_result("") is None


def test_input_command_failed() -> None:
    assert not input_command_failed("")
    assert input_command_failed(
        "Exception occurred while executing 'text':\njava.lang.NullPointerException: Attempt to get length of null array"
    )
    assert input_command_failed(
        "java.lang.SecurityException: Injecting input events requires the caller (or the source of the "
        "instrumentation, if any) to have the INJECT_EVENTS permission."
    )
    assert input_command_failed("Error: Unknown command: tapp\nUsage: input [<source>] <command> [<arg>...]")
