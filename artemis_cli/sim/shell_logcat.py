"""Shell commands about processes and logs: ``logcat``, ``ps``, ``pidof`` (Android 14's formats).

``logcat`` prints lines the way liblog's ``android_log_formatLogLine`` does (``-v threadtime``
by default: ``06-03 09:00:01.234  2345  2345 E AndroidRuntime: FATAL EXCEPTION: main``, the tag
padded to 8), with the ``--------- beginning of BUFFER`` divider before a buffer's first line.
``logcat`` without ``-d`` streams over the served adbd (:class:`LogFollower`) until the host
closes the stream; in process (``SimPhone.shell``) it prints what the buffers hold and ends.  ``ps`` is toybox's (``ps -A``, ``-o``, ``-p``), ``pidof`` exits 1
silently when nothing runs under that name.
"""

from __future__ import annotations

import calendar
import re
import time
from typing import TYPE_CHECKING

from artemis_cli.sim.logbuf import BUFFERS, DEFAULT_BUFFERS, PRIORITIES, LogBuffers, LogEntry
from artemis_cli.sim.shell import Command, ShellResult, err, out

if TYPE_CHECKING:
    from artemis_cli.sim.phone import SimPhone

FORMATS = ("brief", "process", "tag", "thread", "raw", "time", "threadtime", "long")
MODIFIERS = ("epoch", "year", "uid", "printable", "color", "usec", "nsec", "UTC", "zone", "monotonic",
             "descriptive", "colour")
_USAGE = ("Usage: logcat [options] [filterspecs]\n\nGeneral options:\n"
          "  -b, --buffer=<buffer>       Request alternate ring buffer(s):\n"
          "                                main system radio events crash default all\n"
          "  -c, --clear                 Clear (flush) the entire log and exit.\n"
          "  -d                          Dump the log and then exit (don't block).\n"
          "  -g, --buffer-size           Get the size of the ring buffers within logd.\n"
          "  -s                          Set default filter to silent. Equivalent to filterspec '*:S'\n"
          "  -t <count>                  Print only the most recent <count> lines (implies -d).\n"
          "  -t '<time>'                 Print the lines since specified time (implies -d).\n"
          "  -T <count>                  Print only the most recent <count> lines (does not imply -d).\n"
          "  -v, --format=<format>       Sets log print format verb and adverbs, where <format> is one of:\n"
          "                                brief help long process raw tag thread threadtime time\n")
_PS_FIELDS = {"USER": (-12, "user"), "PID": (6, "pid"), "PPID": (6, "ppid"), "VSZ": (10, "vsz"),
              "RSS": (6, "rss"), "WCHAN": (-16, "wchan"), "ADDR": (4, "addr"), "S": (1, "state"),
              "NAME": (0, "name"), "CMD": (0, "name"), "ARGS": (0, "name"), "UID": (5, "uid")}
_PS_DEFAULT = ("USER", "PID", "PPID", "VSZ", "RSS", "WCHAN", "ADDR", "S", "NAME")


class LogCommands:
    def __init__(self, phone: SimPhone) -> None:
        self.phone = phone

    def table(self) -> dict[str, Command]:
        return {"logcat": self.logcat, "ps": self.ps, "pidof": self.pidof}

    # -- processes ---------------------------------------------------------------------------
    def pidof(self, args: list[str], _: bytes) -> ShellResult:
        names = [a for a in args if not a.startswith("-")]
        if not names:
            return out("", 1)
        procs = self.phone.am.table.listing()
        pids = [str(p.pid) for n in names for p in reversed(procs) if p.name == n]
        return out(" ".join(pids) + "\n", 0) if pids else out("", 1)

    def ps(self, args: list[str], _: bytes) -> ShellResult:
        cols = list(_PS_DEFAULT)
        everyone = False
        pids: set[int] | None = None
        names: list[str] = []
        i = 0
        while i < len(args):
            a = args[i]
            if a in ("-A", "-e", "-a", "-ef"):
                everyone = True
            elif a == "-o" and i + 1 < len(args):
                cols = [c.strip().split("=")[0].upper() for c in args[i + 1].split(",") if c.strip()]
                bad = [c for c in cols if c not in _PS_FIELDS]
                if bad:
                    return err(f"ps: bad -o {bad[0]}\n", 1)
                i += 1
            elif a == "-p" and i + 1 < len(args):
                try:
                    pids = {int(x) for x in args[i + 1].split(",") if x}
                except ValueError:
                    return err(f"ps: bad -p '{args[i + 1]}'\n", 1)
                i += 1
            elif a.startswith("-"):
                pass  # -T, -w, -Z ...: accepted, no effect in the sim
            else:
                names.append(a)
            i += 1
        procs = self.phone.am.table.listing()
        if pids is not None:
            procs = [p for p in procs if p.pid in pids]
        elif names:
            procs = [p for p in procs if p.name in names]
        elif not everyone:
            procs = []  # plain `ps`: the shell's own session only (sh, ps; below)
        rows = [_ps_row(cols, {c: c for c in cols}, header=True)]
        for p in procs:
            vals = {"user": p.user, "pid": p.pid, "ppid": p.ppid, "vsz": p.vsz, "rss": p.rss, "wchan": p.wchan,
                    "addr": 0, "state": p.state, "name": p.name, "uid": p.uid}
            rows.append(_ps_row(cols, {c: str(vals[_PS_FIELDS[c][1]]) for c in cols}))
        if not everyone and pids is None and not names:
            shell_pid = self.phone.am.table.next_pid + 9000
            for name, pid, ppid in (("sh", shell_pid, 702), ("ps", shell_pid + 1, shell_pid)):
                vals = {"user": "shell", "pid": pid, "ppid": ppid, "vsz": 10_800_000, "rss": 3_000,
                        "wchan": "0" if name == "ps" else "do_wait", "addr": 0, "state": "R" if name == "ps" else "S",
                        "name": name, "uid": 2000}
                rows.append(_ps_row(cols, {c: str(vals[_PS_FIELDS[c][1]]) for c in cols}))
        return out("".join(r + "\n" for r in rows), 0 if len(rows) > 1 or pids is None else 1)

    # -- logcat ------------------------------------------------------------------------------
    def logcat(self, args: list[str], _: bytes) -> ShellResult:
        try:
            opts = _parse(args)
        except _Bad as bad:
            return err(f"{bad}\n" if str(bad) else _USAGE, 1 if str(bad) else 0)
        logs = self.phone.logs
        if opts.clear:
            logs.clear(opts.buffers)
            return out("")
        if opts.sizes:
            lines = []
            for b in opts.buffers:
                used = logs.sizes[b]
                lines.append(f"{b}: ring buffer is {logs.capacity // 1024} KiB ({_kib(used)} consumed, "
                             f"{_kib(used)} readable), max entry is 5120 B, max payload is 4068 B\n")
            return out("".join(lines))
        entries = [e for e in logs.entries(opts.buffers, opts.since_ms) if _passes(e, opts)]
        if opts.tail is not None:
            entries = entries[-opts.tail:] if opts.tail > 0 else []
        if opts.max_count is not None:
            entries = entries[:opts.max_count]
        started: set[str] = set()
        last = ""
        chunks: list[str] = []
        for e in entries:
            if e.buffer != last:
                if e.buffer not in started:
                    chunks.append(f"--------- beginning of {e.buffer}\n")
                    started.add(e.buffer)
                last = e.buffer
            chunks.append(format_entry(e, opts.fmt, opts.mods))
        return out("".join(chunks))


def follow_args(command: str) -> list[str] | None:
    """The arguments of a logcat that streams on a phone (no ``-d``, ``-t``, ``-c``, ``-g``, bad
    option or pipe): ``[export NAME=V ;] [exec] logcat ARGS`` (what ``adb logcat`` sends); else None."""
    from artemis_cli.sim.shell import tokenize

    try:
        words = tokenize(command)
    except ValueError:
        return None
    parts: list[list[str]] = [[]]
    for w in words:
        if w == ";" and type(w) is not str:
            parts.append([])
        elif type(w) is not str:
            return None  # && || | or a redirection: not a plain stream
        else:
            parts[-1].append(w)
    parts = [p for p in parts if p]
    if not parts or any(p[0] != "export" for p in parts[:-1]):
        return None
    argv = parts[-1][1:] if parts[-1][:1] == ["exec"] else parts[-1]
    if argv[:1] != ["logcat"]:
        return None
    try:
        opts = _parse(argv[1:])
    except _Bad:
        return None
    return None if opts.dump or opts.clear or opts.sizes else argv[1:]


class LogFollower:
    """``logcat`` without ``-d`` over the served adbd: what the buffers hold, then each new line as
    it is written, until the host closes the stream (``poll()`` once per tick)."""

    def __init__(self, args: list[str]) -> None:
        self.opts = _parse(args)
        self.after_ms: int | None = None
        self.started: set[str] = set()
        self.last = ""

    def poll(self, logs: LogBuffers) -> str:
        o = self.opts
        entries = [e for e in logs.entries(o.buffers) if _passes(e, o)]
        if self.after_ms is None:  # the first look: like a dump, -T N / -T TIME apply
            if o.since_ms is not None:
                entries = [e for e in entries if e.ms >= o.since_ms]
            if o.tail is not None:
                entries = entries[-o.tail:] if o.tail > 0 else []
        else:
            entries = [e for e in entries if e.ms > self.after_ms]
        self.after_ms = max(self.after_ms or 0, logs.last_ms)
        chunks: list[str] = []
        for e in entries:
            if e.buffer != self.last:
                if e.buffer not in self.started:
                    chunks.append(f"--------- beginning of {e.buffer}\n")
                    self.started.add(e.buffer)
                self.last = e.buffer
            chunks.append(format_entry(e, o.fmt, o.mods))
        return "".join(chunks)


class _Bad(ValueError):
    """A bad logcat option: the message goes to stderr ("" prints the usage)."""


class _Opts:
    def __init__(self) -> None:
        self.dump = self.clear = self.sizes = self.silent = False
        self.fmt = "threadtime"
        self.mods: set[str] = set()
        self.buffers: list[str] = []
        self.tail: int | None = None
        self.since_ms: int | None = None
        self.max_count: int | None = None
        self.pid: int | None = None
        self.regex: re.Pattern[str] | None = None
        self.filters: list[tuple[str, str]] = []


def _parse(args: list[str]) -> _Opts:
    o = _Opts()
    it = list(args)
    i = 0

    def value(flag: str) -> str:
        nonlocal i
        a = it[i]
        if a.startswith("--") and "=" in a:
            return a.split("=", 1)[1]
        if not a.startswith("--") and len(a) > 2:
            return a[2:]
        if i + 1 >= len(it):
            raise _Bad(f"logcat: option requires an argument -- '{flag.lstrip('-')[:1]}'")
        i += 1
        return it[i]

    while i < len(it):
        a = it[i]
        name = a.split("=", 1)[0] if a.startswith("--") else a[:2]
        if name == "-d":
            o.dump = True
            rest = a[2:]
            if rest:  # -dv threadtime etc.: not supported as one cluster; keep simple
                raise _Bad(f"logcat: invalid option -- '{rest[0]}'")
        elif name in ("-c", "--clear"):
            o.clear = True
        elif name in ("-g", "--buffer-size"):
            o.sizes = True
        elif name == "-s":
            o.silent = True
        elif name in ("-v", "--format"):
            for word in re.split(r"[,:; \t\n\r\f]+", value("-v")):  # logcat.cpp splits -v on these
                if word in FORMATS:
                    o.fmt = word
                elif word in MODIFIERS:
                    o.mods.add(word)
                elif word:
                    raise _Bad(f"logcat: Invalid parameter \"{word}\" to -v")
        elif name in ("-b", "--buffer"):
            for b in value("-b").split(","):
                b = b.strip()
                if b == "all":
                    o.buffers += list(BUFFERS)
                elif b == "default":
                    o.buffers += list(DEFAULT_BUFFERS)
                elif b in BUFFERS:
                    o.buffers.append(b)
                elif b in ("kernel", "security", "stats"):
                    continue  # exist on a phone, empty for the shell user
                else:
                    raise _Bad(f"logcat: unknown buffer {b}")
        elif name in ("-t", "-T"):
            word = value(name)
            if re.fullmatch(r"\d+", word):
                o.tail = int(word)
            else:
                o.since_ms = _parse_time(word)
            if name == "-t":
                o.dump = True
        elif name in ("-m", "--max-count"):
            word = value("-m")
            if not word.isdigit():
                raise _Bad(f"logcat: -m \"{word}\" isn't an integer greater than zero")
            o.max_count = int(word)
        elif name == "--pid":
            word = value("--pid")
            if not word.isdigit():
                raise _Bad(f"logcat: --pid \"{word}\" isn't an integer greater than zero")
            o.pid = int(word)
        elif name in ("-e", "--regex"):
            try:
                o.regex = re.compile(value("-e"))
            except re.error as e:
                raise _Bad(f"logcat: invalid regex: {e}") from None
        elif name in ("-D", "--dividers", "-B", "--binary"):
            pass
        elif name in ("-h", "--help"):
            raise _Bad("")
        elif a.startswith("-"):
            raise _Bad(f"logcat: invalid option -- '{a.lstrip('-')[:1]}'\n" + _USAGE.rstrip("\n"))
        else:
            tag, _, prio = a.rpartition(":") if ":" in a else (a, "", "V")
            prio = (prio or "V").upper()
            if prio not in PRIORITIES + "S" + "*":
                raise _Bad(f"logcat: Invalid filter expression '{a}'")
            o.filters.append((tag, "V" if prio == "*" else prio))
        i += 1
    if not o.buffers:
        o.buffers = list(DEFAULT_BUFFERS)
    o.buffers = list(dict.fromkeys(o.buffers))
    return o


def _parse_time(word: str) -> int:
    """``MM-DD hh:mm:ss.mmm``, ``YYYY-MM-DD hh:mm:ss.mmm`` or ``sssss.mmm`` -> epoch ms (UTC)."""
    m = re.fullmatch(r"(\d+)(?:\.(\d{1,9}))?", word)
    if m:
        return int(m.group(1)) * 1000 + int((m.group(2) or "0")[:3].ljust(3, "0"))
    m = re.fullmatch(r"(?:(\d{4})-)?(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?", word.strip())
    if not m:
        raise _Bad(f"logcat: -t \"{word}\" not in time format")
    year = int(m.group(1)) if m.group(1) else 2024
    try:
        secs = calendar.timegm((year, int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5)),
                                int(m.group(6)), 0, 0, 0))
    except (ValueError, OverflowError):
        raise _Bad(f"logcat: -t \"{word}\" not in time format") from None
    return secs * 1000 + int((m.group(7) or "0")[:3].ljust(3, "0"))


def _passes(e: LogEntry, o: _Opts) -> bool:
    if o.pid is not None and e.pid != o.pid:
        return False
    if o.regex is not None and not o.regex.search(e.msg):
        return False
    if o.filters or o.silent:
        floor = "S" if o.silent else "V"
        for tag, prio in o.filters:
            if tag == "*":
                floor = prio
        rule = next((p for t, p in o.filters if t == e.tag), floor)
        if rule == "S" or PRIORITIES.index(e.prio) < PRIORITIES.index(rule):
            return False
    return True


def _kib(n: int) -> str:
    return f"{n / 1024:.0f} KiB" if n >= 1024 else f"{n} B"


def _time(e: LogEntry, mods: set[str]) -> str:
    secs, ms = divmod(e.ms, 1000)
    if "epoch" in mods:
        return f"{secs:5d}.{ms:03d}"
    fmt = "%Y-%m-%d %H:%M:%S" if "year" in mods else "%m-%d %H:%M:%S"
    return time.strftime(fmt, time.gmtime(secs)) + f".{ms:03d}"


def format_entry(e: LogEntry, fmt: str = "threadtime", mods: set[str] | frozenset[str] = frozenset()) -> str:
    """One entry as logcat ``-v fmt`` prints it (a prefix before each line of the message)."""
    uid = f"{e.uid:5d}:" if "uid" in mods else ""
    t = _time(e, set(mods))
    tag = f"{e.tag:<8}"
    if fmt == "long":
        return f"[ {t} {uid}{e.pid:5d}:{e.tid:5d} {e.prio}/{tag} ]\n{e.msg}\n\n"
    prefix, suffix = {
        "brief": (f"{e.prio}/{tag}({uid}{e.pid:5d}): ", ""),
        "process": (f"{e.prio}({uid}{e.pid:5d}) ", f"  ({e.tag})"),
        "tag": (f"{e.prio}/{tag}: ", ""),
        "thread": (f"{e.prio}({uid}{e.pid:5d}:{e.tid:5d}) ", ""),
        "raw": ("", ""),
        "time": (f"{t} {e.prio}/{tag}({uid}{e.pid:5d}): ", ""),
    }.get(fmt, (f"{t} {uid}{e.pid:5d} {e.tid:5d} {e.prio} {tag}: ", ""))
    lines = e.msg.split("\n")
    if "printable" in mods:
        lines = [ln.encode("ascii", "backslashreplace").decode("ascii") for ln in lines]
    return "".join(f"{prefix}{ln}{suffix}\n" for ln in lines)


def _ps_row(cols: list[str], vals: dict[str, str], header: bool = False) -> str:
    cells = []
    for c in cols:
        width = _PS_FIELDS[c][0]
        v = vals[c]
        cells.append(v if width == 0 else (f"{v:<{-width}}" if width < 0 else f"{v:>{width}}"))
    return " ".join(cells).rstrip() if header else " ".join(cells)
