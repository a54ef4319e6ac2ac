"""Turning what a person calls an app into the package they mean on this phone (pure, no I/O).

``resolve_app`` tries, in order: the exact installed package name; the built-in alias table
(``device.app_aliases``: common apps across vendors, the first installed candidate wins); the
apps' labels when the caller can read them (``{package: label}``, e.g. from uiautomator2); and
fuzzy matching of the name's words against the words of every installed package name
(``com.simplemobiletools.calendar.pro`` -> simple, mobile, tools, calendar, pro). A miss, or a fuzzy
tie, comes back with ``package=None`` and ``candidates`` the model (or the user) can choose from
by package: apps a person can open (``launchable``, the packages with a launcher activity, when
the caller knows them), never the launcher or system plumbing, whose name is like the one asked
for (the tied matches, else difflib's ratio at least ``CLOSE_RATIO`` against a word of the package
or its label, and nearly as high as the most alike app's); when none is, the launchable apps
themselves (``listing``, at most ``MAX_LISTED``).

``parse_package_list`` (``perception.packages``) reads ``pm list packages`` output.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from artemis_cli.device.app_aliases import ALIASES
from artemis_cli.perception.packages import PACKAGE_RE as _PACKAGE_RE
from artemis_cli.perception.packages import parse_package_list

How = Literal["package", "alias", "label", "fuzzy", "none"]
#: candidates returned with a resolution (alternatives on a hit, closest apps on a miss)
MAX_CANDIDATES = 8
#: how alike (difflib's ratio) a name and a word of an app's package or label must be for the app
#: to be offered on a miss, and how much less alike than the most alike app it may be
CLOSE_RATIO = 0.6
CLOSE_MARGIN = 0.15
#: apps listed on a miss when none has a name like the one asked for
MAX_LISTED = 20

# Words of a package name that say nothing about what the app is: top-level domains and the
# platform. Vendor names stay words (a query may say "Samsung Notes") but are not enough alone.
_DOMAIN = frozenset({"com", "org", "net", "io", "de", "cn", "in", "co", "me", "us", "android", "app", "apps"})
_VENDOR = frozenset({
    "google", "samsung", "sec", "miui", "xiaomi", "mi", "huawei", "hihonor", "honor", "oppo", "coloros",
    "oplus", "heytap", "oneplus", "nearme", "vivo", "bbk", "motorola", "moto", "lge", "lg", "sony",
    "sonyericsson", "realme", "qualcomm", "qti", "mediatek", "nothing", "asus", "zte", "nubia",
})
# Query words that qualify a name rather than name an app ("Simple Calendar Pro"): they must
# still match for an app to count as found, but never find one alone.
_QUALIFIER = frozenset({"pro", "simple", "lite", "free", "plus", "go", "my", "the", "new", "mobile", "by"})
# Words of a request around the app's name.
_FILLER = frozenset({"the", "app", "my", "application"})
# Packages with these words are parts of the system, not apps a person opens, unless asked for.
_PLUMBING = frozenset({
    "provider", "providers", "overlay", "service", "services", "resources", "rro", "auto", "generated",
    "theme", "icon", "config", "configupdater", "sync", "syncadapters", "plugin", "stub", "test", "module",
    "ext", "shared", "permission", "permissioncontroller", "engine", "sdk", "widget", "agent", "framework",
    "navbar", "cutout", "emulation", "internal", "server", "daemon", "backup", "receiver", "proxy",
    "packageinstaller", "setupwizard", "oobconfig", "partnersetup", "tethering", "networkstack", "telephony",
    "ims", "overlays", "systemui", "keyguard", "inputmethod", "webview", "tts", "gms", "gsf", "factory",
    "role", "enabled", "location", "font", "fonts", "payload", "extension", "ctsshim", "res",
})
# Package words of home screens: the launcher is where an app is opened from, never an app offered.
_HOME = ("launcher", "trebuchet", "quickstep")


@dataclass(frozen=True)
class AppResolution:
    """How ``query`` resolved on this phone.

    ``package`` is None when nothing matched (``how == "none"``) or several apps matched equally
    well; ``candidates`` are the alternatives to a hit or the apps offered on a miss, best first,
    at most MAX_CANDIDATES (``listing``: no app's name was alike, these are the launchable apps, at
    most MAX_LISTED).
    """

    query: str
    package: str | None
    how: How
    candidates: list[str] = field(default_factory=list)
    #: labels of the package and candidates, when the caller gave labels
    labels: dict[str, str] = field(default_factory=dict)
    #: on a miss: no app has a name like ``query``; ``candidates`` are the apps there are
    listing: bool = False

    @property
    def found(self) -> bool:
        return self.package is not None

    def as_dict(self) -> dict[str, Any]:
        return {"query": self.query, "package": self.package, "how": self.how,
                "candidates": list(self.candidates), "labels": dict(self.labels), "listing": self.listing}

    def miss_message(self) -> str:
        """What the model is told when nothing installed is ``query``."""
        head = f"no installed app matches {self.query!r}"
        if not self.candidates:
            return head + "; give its package name"
        apps = ", ".join(f"{p} ({self.labels[p]})" if p in self.labels else p for p in self.candidates)
        if self.listing:
            return (f"{head}, and no app's name is like it; the apps on this phone are {apps}; call launch_app "
                    "again with one of these package names if one is the app you mean")
        return (f"{head}; apps with a similar name: {apps}; call launch_app again with one of these package "
                "names if it is the app you mean")


def normalise(name: str) -> str:
    """``"  Simple-Calendar PRO "`` -> ``"simple calendar pro"``: casefolded words."""
    text = name.casefold().replace("&", " and ").replace("'", "")
    return " ".join(re.findall(r"[^\W_]+", text))


def package_words(package: str) -> list[str]:
    """``"com.simplemobiletools.calendar.pro"`` -> ``["com", "simplemobiletools", "calendar", "pro"]``
    plus the camel-case and digit pieces of each part (``globalFileexplorer`` -> global, fileexplorer)."""
    words: list[str] = []
    for part in re.split(r"[._]+", package):
        if not part:
            continue
        words.append(part.casefold())
        pieces = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", part)
        if len(pieces) > 1:
            words.extend(p.casefold() for p in pieces)
    return list(dict.fromkeys(words))


def resolve_app(query: str, packages: Iterable[str], labels: Mapping[str, str] | None = None, *,
                limit: int = MAX_CANDIDATES, launchable: Iterable[str] | None = None) -> AppResolution:
    """The package ``query`` means among ``packages`` (see the module docstring for the order);
    ``launchable``: those with a launcher activity (None: unknown), the only ones a miss offers."""
    installed = list(dict.fromkeys(packages))
    present = set(installed)
    labels = dict(labels or {})
    q = query.strip()
    if q in present or (not installed and "." in q and _PACKAGE_RE.fullmatch(q)):
        return _result(q, q, "package", [], labels)  # no list to check against: taken as given
    key = normalise(q)
    offered = _offered(installed, launchable, key.split())
    if "." in q and " " not in q and _PACKAGE_RE.fullmatch(q):  # a package that is not installed
        words = " ".join(w for w in package_words(q) if w not in _DOMAIN)
        return _miss(q, words, [r[-1] for r in _fuzzy(words, installed)], offered, labels, limit)
    if not key:
        return _result(q, None, "none", [], labels)
    literal = _literal(key, installed)
    if literal:  # an app whose package spells the whole name ("Audio Recorder" -> …audiorecorder)
        return _result(q, literal, "fuzzy", [], labels)
    aliased = _alias(key)
    hits = [p for p in aliased if p in present]
    if hits:
        return _result(q, hits[0], "alias", hits[1:limit + 1], labels)
    by_label = _by_label(key, installed, labels, aliased)
    if by_label:
        return _result(q, by_label[0], "label", by_label[1:limit + 1], labels)
    ranked = _fuzzy(key, installed)
    if ranked:
        best = ranked[0]
        tied = [r for r in ranked if r[:2] == best[:2]]
        if best[3] and len(tied) == 1:
            return _result(q, best[-1], "fuzzy", [r[-1] for r in ranked[1:limit + 1]], labels)
    return _miss(q, key, [r[-1] for r in ranked], offered, labels, limit)


def _result(query: str, package: str | None, how: How, candidates: list[str],
            labels: dict[str, str], *, listing: bool = False) -> AppResolution:
    shown = {p: labels[p] for p in ([package] if package else []) + candidates if p in labels}
    return AppResolution(query, package, how, candidates, shown, listing)


def _home(package: str, words: list[str]) -> bool:
    return any(h in t and t not in words for t in package_words(package) for h in _HOME)


def _offered(installed: list[str], launchable: Iterable[str] | None, words: list[str]) -> list[str]:
    """The apps a miss may offer: the launchable ones (else every installed one), without the
    launcher and system plumbing (unless the name asks for them)."""
    present = set(installed)
    pool = installed if launchable is None else [p for p in dict.fromkeys(launchable) if p in present or not present]
    return [p for p in pool if not _plumbing(p, words) and not _home(p, words)]


def _miss(query: str, key: str, matched: list[str], offered: list[str], labels: dict[str, str],
          limit: int) -> AppResolution:
    """Nothing to launch: the offered apps whose words matched (a tie), then those whose name is
    like ``key`` (``_similar``); when there are none, the offered apps, at most MAX_LISTED."""
    allowed = set(offered)
    near = [p for p in matched if p in allowed]
    near += [p for p in _similar(key, offered, labels) if p not in near]
    if near:
        return _result(query, None, "none", near[:limit], labels)
    return _result(query, None, "none", offered[:MAX_LISTED], labels, listing=bool(offered))


def _literal(key: str, installed: list[str]) -> str | None:
    """The one app whose package has the several-word name run together as one of its words."""
    words = key.split()
    if len(words) < 2:
        return None
    joined = "".join(words)
    found = [p for p in installed if joined in package_words(p) and not _plumbing(p, words)]
    return found[0] if len(found) == 1 else None


def _plumbing(package: str, words: list[str]) -> bool:
    return any(t in _PLUMBING and t not in words for t in package_words(package))


def _alias(key: str) -> tuple[str, ...]:
    if key in ALIASES:
        return ALIASES[key]
    words = [w for w in key.split() if w not in _FILLER] or key.split()  # "the calendar app"
    if " ".join(words) in ALIASES:
        return ALIASES[" ".join(words)]
    if len(words) > 1 and words[0] in _VENDOR and " ".join(words[1:]) in ALIASES:
        return ALIASES[" ".join(words[1:])]  # "Samsung Calendar", "Google Calculator"
    return ()


def _by_label(key: str, installed: list[str], labels: dict[str, str], aliased: tuple[str, ...]) -> list[str]:
    """Installed packages whose label is ``key`` exactly, else whose label holds all its words;
    ties in the alias table's order, then shortest package."""
    if not labels:
        return []
    order = {p: i for i, p in enumerate(aliased)}
    named = {p: normalise(labels[p]) for p in installed if p in labels}
    exact = [p for p, label in named.items() if label == key]
    words = set(key.split())
    loose = [p for p, label in named.items() if words <= set(label.split())]
    for group in (exact, loose):
        if group:
            return sorted(group, key=lambda p: (order.get(p, len(order)), len(p), p))
    return []


def _strength(word: str, token: str) -> float:
    """How well a query word names a package word: the same word (or its plural) 3; an
    abbreviation of it ("calc" -> calculator) 2; a long word inside a compound
    ("calculator" in dlcalculator, "simple" in simplemobiletools) 1.5; else 0. A query word is
    never matched by a shorter package word it merely starts with ("facebook" is not "face")."""
    if token == word or token.rstrip("s") == word.rstrip("s"):
        return 3.0
    if len(word) >= 3 and token.startswith(word):
        return 2.0
    if len(word) >= 6 and word in token:
        return 1.5
    return 0.0


def _fuzzy(key: str, installed: list[str]) -> list[tuple[float, int, int, bool, str]]:
    """Installed packages matching ``key``'s words, best first, as
    ``(-score, extra words, length, accepted, package)``; ``accepted`` when the match is good
    enough to launch (every app-naming word matched, and at least half of all the words)."""
    words = key.split()
    joined = "".join(words)
    naming = [w for w in words if w not in _QUALIFIER and w not in _VENDOR] or words
    out: list[tuple[float, int, int, bool, str]] = []
    for package in installed:
        if _plumbing(package, words):
            continue
        tokens = [t for t in package_words(package) if t not in _DOMAIN]
        best = {w: max((_strength(w, t) for t in tokens), default=0.0) for w in words}
        if len(words) > 1 and joined in tokens:  # "Retro Music" -> retromusic, "File Manager" -> filemanager
            best = dict.fromkeys(words, 3.0)
        if not any(best[w] for w in naming):
            continue
        score = sum(s if w in naming else s / 2 for w, s in best.items())
        matched = sum(1 for s in best.values() if s)
        parts = [t for t in re.split(r"[._]+", package.casefold()) if t and t not in _DOMAIN and t not in _VENDOR]
        extra = sum(1 for t in parts if not any(_strength(w, t) for w in words))
        accepted = all(best[w] for w in naming) and matched * 2 >= len(words)
        out.append((-score, extra, len(package), accepted, package))
    out.sort()
    return out


def _similar(key: str, offered: list[str], labels: dict[str, str]) -> list[str]:
    """The ``offered`` apps whose name is like ``key`` (difflib's ratio at least CLOSE_RATIO, and
    within CLOSE_MARGIN of the most alike app's, between the name, or one of its app-naming words,
    and a telling word of the package or its label, or the whole label), most alike first."""
    from difflib import SequenceMatcher

    words = [w for w in key.split() if w not in _FILLER and w not in _QUALIFIER and w not in _VENDOR and len(w) >= 3]
    names = list(dict.fromkeys([key.replace(" ", ""), *words]))
    scored: list[tuple[float, int, str]] = []
    for package in offered:
        tokens = [t for t in package_words(package) if t not in _DOMAIN and t not in _VENDOR]
        if package in labels:
            label = normalise(labels[package])
            tokens += [label.replace(" ", ""), *label.split()]
        ratio = max((SequenceMatcher(None, n, t).ratio() for n in names for t in tokens if n and t), default=0.0)
        if ratio >= CLOSE_RATIO:
            scored.append((-ratio, len(package), package))
    scored.sort()
    return [p for r, _, p in scored if -r >= -scored[0][0] - CLOSE_MARGIN]


__all__ = ["CLOSE_MARGIN", "CLOSE_RATIO", "MAX_CANDIDATES", "MAX_LISTED", "AppResolution", "How", "normalise", "package_words",
           "parse_package_list", "resolve_app"]
