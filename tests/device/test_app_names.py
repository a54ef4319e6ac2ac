"""The app-name resolver (device/apps.py) and the pm-list parser, over made-up lists and over
real phones' ``pm list packages`` outputs (fixtures/packages, see SOURCES.md there)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from artemis_cli.device.app_aliases import ALIASES
from artemis_cli.device.apps import MAX_CANDIDATES, MAX_LISTED, normalise, package_words, resolve_app
from artemis_cli.errors import ConfigError
from artemis_cli.perception.packages import parse_package_list, read_package_file

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "packages"
#: AndroidWorld's apps (their package names as published by each app), installed beside a real list
ANDROID_WORLD = {
    "Simple Calendar Pro": "com.simplemobiletools.calendar.pro",
    "Simple SMS Messenger": "com.simplemobiletools.smsmessenger",
    "Simple Gallery Pro": "com.simplemobiletools.gallery.pro",
    "Simple Draw Pro": "com.simplemobiletools.draw.pro",
    "Pro Expense": "com.arduia.expense",
    "Markor": "net.gsantner.markor",
    "Broccoli": "com.flauschcode.broccoli",
    "Retro Music": "code.name.monkey.retromusic",
    "Audio Recorder": "com.dimowner.audiorecorder",
    "OpenTracks": "de.dennisguse.opentracks",
    "Tasks": "org.tasks",
    "VLC": "org.videolan.vlc",
    "Joplin": "net.cozic.joplin",
    "OsmAnd": "net.osmand",
}


def test_exact_package_wins_and_is_reported_as_such() -> None:
    r = resolve_app("com.android.settings", ["com.android.settings", "com.example.settings"])
    assert (r.package, r.how, r.candidates) == ("com.android.settings", "package", [])


def test_alias_prefers_the_vendors_own_app_and_lists_the_others() -> None:
    galaxy = ["com.google.android.apps.messaging", "com.samsung.android.messaging", "com.android.mms"]
    r = resolve_app("messages", galaxy)
    assert (r.package, r.how) == ("com.samsung.android.messaging", "alias")
    assert r.candidates == ["com.google.android.apps.messaging", "com.android.mms"]
    # with the vendor's app gone, Google's is next; AOSP's back end only when nothing else is there
    assert resolve_app("Messages", galaxy[::2]).package == "com.google.android.apps.messaging"
    assert resolve_app("Messages", ["com.android.mms"]).package == "com.android.mms"


def test_names_are_compared_without_case_punctuation_or_a_vendor_prefix() -> None:
    pkgs = ["com.android.vending", "com.samsung.android.calendar"]
    assert normalise("  PLAY-store! ") == "play store"
    assert resolve_app("PLAY-store!", pkgs).package == "com.android.vending"
    assert resolve_app("Samsung Calendar", pkgs).package == "com.samsung.android.calendar"
    assert resolve_app("the calendar app", pkgs).package == "com.samsung.android.calendar"


def test_package_words_split_parts_camel_case_and_digits() -> None:
    assert package_words("com.mi.android.globalFileexplorer") == [
        "com", "mi", "android", "globalfileexplorer", "global", "fileexplorer"]
    assert package_words("com.miui.weather2") == ["com", "miui", "weather2", "weather", "2"]


@pytest.mark.parametrize("name", list(ANDROID_WORLD))
def test_fuzzy_matching_finds_android_worlds_apps_from_their_package_names(name: str) -> None:
    pkgs = [*read_package_file(FIXTURES / "google-pixel-8-pro.txt"), *ANDROID_WORLD.values()]
    r = resolve_app(name, pkgs)
    assert (r.package, r.how) == (ANDROID_WORLD[name], "fuzzy") or (name, r.how) == ("Audio Recorder", "alias")


def test_a_qualified_name_is_not_taken_for_a_plainer_app() -> None:
    """"Simple Calendar Pro" is a product: Google Calendar is offered, not launched."""
    r = resolve_app("Simple Calendar Pro", ["com.google.android.calendar", "com.android.providers.calendar"])
    assert (r.package, r.how) == (None, "none")
    assert r.candidates == ["com.google.android.calendar"]  # the provider is system plumbing


def test_a_missing_package_name_is_a_miss_with_near_packages() -> None:
    r = resolve_app("com.example.calendar", ["com.google.android.calendar", "com.android.settings"])
    assert (r.package, r.how, r.candidates) == (None, "none", ["com.google.android.calendar"])
    # without any list to check against (the device listed nothing) a package is taken as given
    assert resolve_app("com.example.calendar", []).how == "package"


def test_a_tie_is_not_guessed() -> None:
    r = resolve_app("Notes", ["org.one.notes", "org.two.notes"])
    assert (r.package, r.how) == (None, "none")
    assert sorted(r.candidates) == ["org.one.notes", "org.two.notes"]


def test_labels_are_used_when_the_caller_has_them() -> None:
    pkgs = ["com.example.x1", "com.example.x2"]
    r = resolve_app("My Banking", pkgs, {"com.example.x2": "My Banking", "com.example.x1": "Banking Lite"})
    assert (r.package, r.how, r.labels) == ("com.example.x2", "label", {"com.example.x2": "My Banking"})


def test_a_miss_names_at_most_eight_candidates_and_says_how_to_use_them() -> None:
    pkgs = [f"org.app{i}.calendar" for i in range(20)]
    r = resolve_app("Calendar Pro Max", pkgs)
    assert r.package is None and len(r.candidates) == MAX_CANDIDATES
    message = r.miss_message()
    assert message.startswith("no installed app matches 'Calendar Pro Max'; apps with a similar name: org.")
    assert "launch_app again with one of these package names" in message
    assert resolve_app("", pkgs).how == "none"


def test_every_alias_is_a_valid_package_list() -> None:
    for name, packages in ALIASES.items():
        assert name == normalise(name), name
        assert packages and len(set(packages)) == len(packages), name
        assert parse_package_list("".join(f"package:{p}\n" for p in packages), source="alias") == list(packages)


def test_the_pm_list_parser_tolerates_blank_lines_and_crlf_and_names_bad_lines() -> None:
    text = "package:com.a\r\n\r\npackage:com.b\r\npackage:com.a\r\n"
    assert parse_package_list(text, source="f.txt") == ["com.a", "com.b"]
    with pytest.raises(ConfigError, match=r"^f\.txt:3: 'pkg:com\.c' is not a package:NAME line"):
        parse_package_list("package:com.a\n\npkg:com.c\n", source="f.txt")
    with pytest.raises(ConfigError, match=r"^f\.txt:1: 'package:com\.\.x' has an invalid package name"):
        parse_package_list("package:com..x\n", source="f.txt")
    with pytest.raises(ConfigError, match=r"^f\.txt: no package:NAME lines"):
        parse_package_list("\n\n", source="f.txt")
    # a device's own output: warnings and the like are skipped, not errors
    assert parse_package_list("WARNING: linker: x\npackage:com.a\n") == ["com.a"]


def test_reading_a_package_file_reports_missing_and_binary_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such package list file"):
        read_package_file(tmp_path / "nope.txt")
    (tmp_path / "bin.txt").write_bytes(b"package:com.a\n\xff\xfe")
    with pytest.raises(ConfigError, match="is not UTF-8 text"):
        read_package_file(tmp_path / "bin.txt")


# -- real phones -----------------------------------------------------------------------------------
# What a person holding each phone means by each name, labelled by hand from the list alone
# (None: that app is not on the phone). Samsung's calculator on this J6 is ClevCalc
# (com.dencreak.dlcalculator, preloaded on Indian Galaxy phones); ColorOS keeps its dialer in
# com.android.contacts.
_LABELS = json.loads((FIXTURES / "expected-names.json").read_text())
#: the names the resolver was developed against, and those labelled before it ever saw them
EXPECTED: dict[str, dict[str, str | None]] = _LABELS["lists"]
HELD_OUT: dict[str, dict[str, str | None]] = _LABELS["held_out"]


def score(labels: dict[str, dict[str, str | None]]) -> tuple[int, int, list[str]]:
    right = total = 0
    misses = []
    for vendor_list, names in labels.items():
        packages = read_package_file(FIXTURES / vendor_list)
        for name, want in names.items():
            r = resolve_app(name, packages)
            total += 1
            if r.package == want:
                right += 1
            else:
                misses.append(f"{vendor_list}: {name!r} -> {r.package} ({r.how}), expected {want}")
    return right, total, misses


def test_the_fixtures_are_real_lists_of_four_vendors() -> None:
    lists = sorted(p.name for p in FIXTURES.glob("*.txt"))
    assert lists == sorted(EXPECTED)
    assert "SOURCES.md" in {p.name for p in FIXTURES.iterdir()}
    for name in lists:
        assert len(read_package_file(FIXTURES / name)) >= 170, name


def test_names_resolve_as_a_person_means_on_real_phones() -> None:
    right, total, misses = score(EXPECTED)
    held_right, held_total, held_misses = score(HELD_OUT)
    print(f"{right}/{total} right; held out: {held_right}/{held_total}", *misses, *held_misses, sep="\n")
    assert sorted(HELD_OUT) == sorted(EXPECTED)
    assert (right + held_right) / (total + held_total) >= 0.90, "\n".join(misses + held_misses)
    assert held_right / held_total >= 0.85, "\n".join(held_misses)


@pytest.mark.parametrize("vendor_list", sorted(EXPECTED))
def test_a_miss_on_a_real_phone_offers_installed_apps(vendor_list: str) -> None:
    packages = read_package_file(FIXTURES / vendor_list)
    r = resolve_app("Simple Calendar Pro", packages)
    assert r.package is None and r.candidates and set(r.candidates) <= set(packages)


LAUNCHABLE = ["com.android.settings", "org.telegram.messenger", "com.microsoft.teams", "com.dencreak.dlcalculator"]
INSTALLED = [*LAUNCHABLE, "com.android.launcher3", "org.telegram.messenger.provider", "com.example.telegraph.service",
             "org.telegram.plus"]


def test_a_miss_offers_only_launchable_apps_ranked_by_similarity() -> None:
    r = resolve_app("Calculater", INSTALLED, launchable=LAUNCHABLE)
    assert (r.package, r.candidates, r.listing) == (None, ["com.dencreak.dlcalculator"], False)
    # org.telegram.plus is installed and as alike, but has no launcher activity: not offered when that is known
    r = resolve_app("Telegarm", INSTALLED, launchable=LAUNCHABLE)
    assert r.candidates == ["org.telegram.messenger"]
    assert resolve_app("Telegarm", INSTALLED).candidates == ["org.telegram.plus", "org.telegram.messenger"]


def test_a_name_like_nothing_lists_the_launchable_apps_never_the_launcher_or_plumbing() -> None:
    r = resolve_app("Calendar", INSTALLED, launchable=[*LAUNCHABLE, "com.android.launcher3"])
    assert (r.candidates, r.listing) == (LAUNCHABLE, True)
    assert r.miss_message().startswith("no installed app matches 'Calendar', and no app's name is like it; the apps "
                                       "on this phone are com.android.settings, org.telegram.messenger, ")
    # without the launcher activities: the installed apps, less the launcher and system plumbing
    unknown = resolve_app("Calendar", INSTALLED)
    assert unknown.listing and "com.android.launcher3" not in unknown.candidates
    assert "com.example.telegraph.service" not in unknown.candidates and "org.telegram.messenger.provider" not in \
        unknown.candidates
    many = [f"org.example.app{i}" for i in range(30)]
    listed = resolve_app("Calendar", many, launchable=many)
    assert listed.candidates == many[:MAX_LISTED] and MAX_LISTED == 20
    assert resolve_app("Launcher", INSTALLED).package == "com.android.launcher3"  # asked for by name: found
