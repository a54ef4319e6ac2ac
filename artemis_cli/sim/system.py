"""Device-wide state shared by apps: the `settings` namespaces and the virtual clock."""

from __future__ import annotations

from dataclasses import dataclass, field

NAMESPACES = ("system", "secure", "global")
GBOARD = "com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME"  # the phone's IME

DEFAULT_SETTINGS: dict[str, dict[str, str]] = {
    "global": {
        "wifi_on": "1",
        "airplane_mode_on": "0",
        "bluetooth_on": "0",
        "mobile_data": "1",
        "device_name": "Artemis Sim",
        "adb_enabled": "1",
        "auto_time": "1",
    },
    "secure": {"ui_night_mode": "1", "android_id": "a17e5150c0ffee00", "location_mode": "3",
               "default_input_method": GBOARD, "enabled_input_methods": GBOARD},
    "system": {"screen_off_timeout": "30000", "screen_brightness": "128", "font_scale": "1.0",
               "user_rotation": "0", "accelerometer_rotation": "0"},
}


@dataclass
class SettingsStore:
    """`settings get|put NAMESPACE KEY` storage; values are strings like on Android."""

    values: dict[str, dict[str, str]] = field(
        default_factory=lambda: {ns: dict(kv) for ns, kv in DEFAULT_SETTINGS.items()}
    )

    def get(self, ns: str, key: str) -> str | None:
        return self.values.get(ns, {}).get(key)

    def put(self, ns: str, key: str, value: str) -> None:
        self.values.setdefault(ns, {})[key] = value

    def get_int(self, ns: str, key: str, default: int) -> int:
        v = self.get(ns, key)
        try:
            return int(float(v)) if v is not None else default
        except ValueError:
            return default

    def flag(self, ns: str, key: str) -> bool:
        return self.get_int(ns, key, 0) != 0


@dataclass
class VirtualClock:
    """Deterministic time: starts at 09:00 + (seed mod 120) minutes, +1 minute every 10 actions."""

    seed: int = 0
    actions: int = 0

    def minutes(self) -> int:
        return (9 * 60 + self.seed % 120 + self.actions // 10) % (24 * 60)

    def hhmm(self) -> str:
        m = self.minutes()
        return f"{m // 60}:{m % 60:02d}"

    def epoch_s(self) -> int:
        # 2024-06-03 00:00:00 UTC + virtual minutes, plus 6 s per action for variety
        return 1717372800 + self.minutes() * 60 + (self.actions % 10) * 6
