"""What people call common Android apps, and the packages those names mean on each vendor's phones.

Read by ``device.apps.resolve_app``. Each entry maps one or more names (compared case- and
punctuation-insensitively) to an ordered list of packages; the first one installed on the phone
wins. The order follows one rule, the one a person holding that phone would apply:

1. **The vendor's own app first.** A vendor's package (``com.samsung.*``, ``com.sec.*``,
   ``com.miui.*``, ``com.coloros.*``, ``com.huawei.*``, …) only exists on that vendor's phones, and
   there it is the preinstalled app whose launcher label is the name asked for: on a Galaxy,
   "Messages" is Samsung Messages even when Google Messages is also installed.
2. **Then Google's app**: the default on Pixels and on vendors that ship Google's apps instead of
   their own (Xiaomi global ROMs, Motorola, recent OnePlus), and what is left when the vendor's app
   was removed.
3. **The AOSP package last**: vendors keep ``com.android.*`` packages as renamed or hidden back
   ends (``com.android.documentsui`` behind a vendor file manager, ``com.android.mms`` beside
   Google Messages), so it is only meant when nothing above is installed.

A name whose app is a different product on purpose (Photos vs Gallery, Keep vs Notes, Chrome vs
Browser) has its own entry; where a person would accept the other product when theirs is missing
(a Pixel has no "Gallery": Google Photos is it), it is listed after the vendor apps.
"""

from __future__ import annotations

# (names, packages in preference order)
_TABLE: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("messages", "messaging", "sms", "text messages", "google messages"), (
        "com.samsung.android.messaging", "com.google.android.apps.messaging", "com.oneplus.mms",
        "com.motorola.messaging", "com.sonyericsson.conversations", "com.android.mms")),
    (("phone", "dialer", "phone app", "calls", "call"), (
        "com.samsung.android.dialer", "com.oneplus.dialer", "com.huawei.contacts", "com.google.android.dialer",
        "com.android.dialer", "com.android.contacts")),
    (("contacts", "people", "address book"), (
        "com.samsung.android.app.contacts", "com.samsung.android.contacts", "com.oneplus.contacts",
        "com.huawei.contacts", "com.google.android.contacts", "com.android.contacts")),
    (("camera",), (
        "com.sec.android.app.camera", "com.oppo.camera", "com.oplus.camera", "com.oneplus.camera",
        "com.huawei.camera", "com.hihonor.camera", "com.motorola.camera3", "com.motorola.camera2",
        "com.sonyericsson.android.camera", "com.google.android.GoogleCamera", "org.codeaurora.snapcam",
        "com.android.camera", "com.android.camera2")),
    (("gallery", "album", "albums"), (
        "com.sec.android.gallery3d", "com.miui.gallery", "com.coloros.gallery3d", "com.oneplus.gallery",
        "com.huawei.photos", "com.hihonor.photos", "com.vivo.gallery", "com.motorola.gallery",
        "com.google.android.apps.photosgo", "com.android.gallery3d", "com.google.android.apps.photos")),
    (("photos", "google photos"), ("com.google.android.apps.photos", "com.google.android.apps.photosgo")),
    (("files", "file manager", "my files", "file explorer", "file browser", "files by google"), (
        "com.sec.android.app.myfiles", "com.mi.android.globalFileexplorer", "com.android.fileexplorer",
        "com.coloros.filemanager", "com.oneplus.filemanager", "com.huawei.hidisk", "com.hihonor.filemanager",
        "com.motorola.filemanager", "com.google.android.apps.nbu.files", "com.google.android.documentsui",
        "com.android.documentsui")),
    (("calendar", "google calendar"), (
        "com.samsung.android.calendar", "com.coloros.calendar", "com.oneplus.calendar", "com.huawei.calendar",
        "com.google.android.calendar", "com.android.calendar")),
    (("clock", "alarm", "alarms", "alarm clock", "timer", "stopwatch"), (
        "com.sec.android.app.clockpackage", "com.coloros.alarmclock", "com.oneplus.deskclock",
        "com.huawei.deskclock", "com.google.android.deskclock", "com.android.deskclock")),
    (("calculator",), (
        "com.sec.android.app.popupcalculator", "com.miui.calculator", "com.coloros.calculator",
        "com.oneplus.calculator", "com.huawei.calculator", "com.google.android.calculator",
        "com.android.calculator2")),
    (("settings", "system settings"), ("com.android.settings",)),
    (("play store", "google play", "google play store", "play", "store", "app store"), (
        "com.android.vending",)),
    (("galaxy store", "samsung apps"), ("com.sec.android.app.samsungapps",)),
    (("getapps", "mi store"), ("com.xiaomi.mipicks", "com.xiaomi.market")),
    (("appgallery",), ("com.huawei.appmarket",)),
    (("app market",), ("com.heytap.market", "com.oppo.market")),
    (("chrome", "google chrome"), ("com.android.chrome", "com.chrome.beta", "com.chrome.dev")),
    (("browser", "internet", "web browser", "samsung internet"), (
        "com.sec.android.app.sbrowser", "com.mi.globalbrowser", "com.heytap.browser", "com.huawei.browser",
        "com.android.browser", "com.android.chrome")),
    (("maps", "google maps"), ("com.google.android.apps.maps", "com.google.android.apps.mapslite",
                               "com.huawei.maps.app")),
    (("drive", "google drive"), ("com.google.android.apps.docs",)),
    (("docs", "google docs"), ("com.google.android.apps.docs.editors.docs",)),
    (("sheets", "google sheets"), ("com.google.android.apps.docs.editors.sheets",)),
    (("gmail",), ("com.google.android.gm", "com.google.android.gm.lite")),
    (("email", "mail", "e mail"), (
        "com.samsung.android.email.provider", "com.huawei.email", "com.android.email",
        "com.google.android.gm", "com.google.android.gm.lite")),
    (("youtube",), ("com.google.android.youtube", "com.google.android.apps.youtube.mango")),
    (("youtube music", "yt music"), ("com.google.android.apps.youtube.music",)),
    (("music", "music player"), (
        "com.sec.android.app.music", "com.miui.player", "com.heytap.music", "com.oppo.music",
        "com.huawei.music", "com.google.android.apps.youtube.music")),
    (("wallet", "google wallet", "pay", "google pay"), (
        "com.samsung.android.spay", "com.samsung.android.spaymini", "com.mipay.wallet", "com.huawei.wallet",
        "com.google.android.apps.walletnfcrel", "com.google.android.apps.nbu.paisa.user")),
    (("notes", "memo", "notepad", "samsung notes"), (
        "com.samsung.android.app.notes", "com.miui.notes", "com.coloros.note", "com.oneplus.note",
        "com.huawei.notepad", "com.google.android.keep")),
    (("keep", "google keep", "keep notes"), ("com.google.android.keep",)),
    (("recorder", "voice recorder", "sound recorder", "audio recorder"), (
        "com.sec.android.app.voicenote", "com.coloros.soundrecorder", "com.oneplus.soundrecorder",
        "com.huawei.soundrecorder", "com.google.android.apps.recorder", "com.android.soundrecorder")),
    (("weather",), (
        "com.sec.android.daemonapp", "com.miui.weather2", "com.coloros.weather2", "com.coloros.weather",
        "net.oneplus.weather", "com.huawei.android.totemweather", "com.google.android.apps.weather")),
    (("compass",), ("com.miui.compass", "com.coloros.compass", "com.huawei.compass",
                    "com.google.android.apps.compass")),
    (("themes", "theme store"), ("com.samsung.android.themestore", "com.android.thememanager",
                                 "com.heytap.themestore", "com.nearme.themespace",
                                 "com.huawei.android.thememanager")),
    (("security", "security center", "phone manager"), (
        "com.miui.securitycenter", "com.coloros.safecenter", "com.huawei.systemmanager")),
    (("downloads",), ("com.android.providers.downloads.ui", "com.coloros.providers.downloads.ui")),
    (("google", "google search", "search"), ("com.google.android.googlequicksearchbox",)),
    (("assistant", "google assistant"), ("com.google.android.apps.googleassistant",
                                          "com.google.android.googlequicksearchbox")),
    (("translate", "google translate"), ("com.google.android.apps.translate",)),
    (("meet", "google meet", "duo", "google duo"), ("com.google.android.apps.tachyon",
                                                    "com.google.android.apps.meetings")),
    (("fit", "google fit"), ("com.google.android.apps.fitness",)),
    (("health", "samsung health"), ("com.sec.android.app.shealth", "com.huawei.health",
                                    "com.google.android.apps.fitness")),
    (("google tv", "play movies"), ("com.google.android.videos",)),
    (("whatsapp",), ("com.whatsapp", "com.whatsapp.w4b")),
    (("wechat", "weixin"), ("com.tencent.mm",)),
    (("messenger", "facebook messenger"), ("com.facebook.orca",)),
    (("facebook",), ("com.facebook.katana", "com.facebook.lite")),
    (("instagram",), ("com.instagram.android",)),
    (("telegram",), ("org.telegram.messenger",)),
    (("tiktok",), ("com.zhiliaoapp.musically", "com.ss.android.ugc.trill")),
    (("x", "twitter"), ("com.twitter.android",)),
    (("netflix",), ("com.netflix.mediaclient",)),
    (("spotify",), ("com.spotify.music",)),
    (("outlook",), ("com.microsoft.office.outlook",)),
    (("onedrive",), ("com.microsoft.skydrive",)),
    (("zoom",), ("us.zoom.videomeetings",)),
    (("amazon", "amazon shopping"), ("com.amazon.mShop.android.shopping", "in.amazon.mShop.android.shopping")),
)

#: normalised name -> packages in preference order
ALIASES: dict[str, tuple[str, ...]] = {name: packages for names, packages in _TABLE for name in names}
