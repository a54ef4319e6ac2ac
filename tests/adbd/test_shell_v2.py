"""The shell protocol v2 (exit status, stdout/stderr apart, stdin EOF) and the legacy `shell:`.

Through Debian's real `adb` against `artemis sim serve` (typed as a user types it, in bash), through
adbutils (which speaks both `shell:` + its X4EXIT trick and `shell,v2:`), and at the packet level.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

import adbutils
import pytest
from adbd_support import ServedCli, SimDevice, needs_adb
from wire_client import WireClient

from artemis_cli.sim.adbd import SimAdbd
from artemis_cli.sim.adbd.packets import A_CLSE, A_OKAY, A_WRTE, Packet
from artemis_cli.sim.phone import SimPhone

V2 = struct.Struct("<BI")


# --- the real adb binary against `artemis sim serve` -------------------------------------------
@needs_adb
def test_adb_shell_false_then_echo_status_prints_1(cli: ServedCli) -> None:
    res = cli.sh("adb shell false; echo $?")
    assert res.stdout == b"1\n", res


@needs_adb
def test_adb_shell_exit_3_exits_3_and_true_exits_0(cli: ServedCli) -> None:
    assert cli.sh("adb shell 'exit 3'").returncode == 3
    assert cli.sh("adb shell 'exit 3; echo unreachable'").stdout == b""
    assert cli.sh("adb shell true").returncode == 0
    assert cli.sh("adb shell frobnicate").returncode == 127


@needs_adb
def test_piped_stdin_reaches_cat_and_the_command_ends(cli: ServedCli) -> None:
    res = cli.sh("echo x | adb shell cat", timeout=20)
    assert (res.returncode, res.stdout) == (0, b"x\n")
    res = cli.sh("printf 'b\\na\\nb\\n' | adb shell grep -c b", timeout=20)
    assert (res.returncode, res.stdout) == (0, b"2\n")


@needs_adb
def test_piped_stdin_to_a_bare_adb_shell_runs_it_as_a_script_and_ends(cli: ServedCli) -> None:
    res = cli.sh("printf 'echo one\\nx\\n' | adb shell", timeout=20)
    assert res.returncode == 127  # the status of the last line, like sh at the end of its input
    assert res.stdout == b"one\n"
    assert res.stderr == b"/system/bin/sh: x: inaccessible or not found\n"


@needs_adb
def test_stdout_and_stderr_are_separated(cli: ServedCli) -> None:
    res = cli.sh("adb shell cat /nonexistent")
    assert (res.returncode, res.stdout) == (1, b"")
    assert res.stderr == b"cat: /nonexistent: No such file or directory\n"
    res = cli.sh("adb shell 'echo out; echo err >&2'")
    assert (res.stdout, res.stderr) == (b"out\n", b"err\n")
    res = cli.sh("adb shell 'cat /nonexistent 2>&1'")  # merged on the device: all on stdout
    assert (res.stdout, res.stderr) == (b"cat: /nonexistent: No such file or directory\n", b"")


@needs_adb
def test_am_start_of_an_unknown_activity_says_error_type_3_on_stderr_with_status_0(cli: ServedCli) -> None:
    res = cli.sh("adb shell am start -n com.example/.Nope")
    assert res.returncode == 0  # ActivityManagerShellCommand.runStartActivity returns 0 regardless
    assert res.stdout == b"Starting: Intent { cmp=com.example/.Nope }\n"
    assert res.stderr == b"Error type 3\nError: Activity class {com.example/com.example.Nope} does not exist.\n"
    res = cli.sh("adb shell am start -n com.artemis.notes/.Nope; adb shell dumpsys window | grep mCurrentFocus")
    assert b"does not exist" in res.stderr  # an installed app, but no such activity: nothing started
    assert b"com.android.launcher3/" in res.stdout.splitlines()[-1]


# --- adbutils: legacy `shell:` with its exit-status trick, and `shell,v2:` ----------------------
@needs_adb
def test_adbutils_shell2_reports_exit_codes_over_legacy_and_v2(sim_device: SimDevice) -> None:
    dev = adbutils.AdbClient(port=sim_device.adb.port).device(sim_device.serial)
    assert dev.shell2("false").returncode == 1
    assert dev.shell2("false", v2=True).returncode == 1
    assert dev.shell2("exit 3", v2=True).returncode == 3
    v2 = dev.shell2("cat /nonexistent", v2=True)
    assert (v2.returncode, v2.stdout, v2.stderr) == (1, "", "cat: /nonexistent: No such file or directory\n")
    v1 = dev.shell2("cat /nonexistent")  # legacy: one stream, stdout and stderr mixed
    assert (v1.returncode, v1.output) == (1, "cat: /nonexistent: No such file or directory\n")
    assert dev.shell2("ime list; false").returncode == 1  # device-side commands chain like any other
    assert dev.shell("echo legacy") == "legacy"


# --- packet level ---------------------------------------------------------------------------------
@pytest.fixture
def adbd() -> Iterator[SimAdbd]:
    with SimAdbd(SimPhone(popups=False), port=0) as server:
        yield server


def _packets(data: bytes) -> list[tuple[int, bytes]]:
    out = []
    pos = 0
    while pos < len(data):
        kind, length = V2.unpack_from(data, pos)
        pos += V2.size
        out.append((kind, data[pos:pos + length]))
        pos += length
    assert pos == len(data), "torn v2 packet"
    return out


def _joined(packets: list[tuple[int, bytes]], kind: int) -> bytes:
    return b"".join(d for k, d in packets if k == kind)


def test_v2_frames_stdout_stderr_and_exit_across_small_wrtes(adbd: SimAdbd) -> None:
    adbd.phone.write_file("/data/local/tmp/big", b"z" * 1000)
    c = WireClient(adbd.port, max_payload=256)  # packets straddle WRTEs
    c.connect()
    lid, rid = c.open("shell,v2,TERM=xterm-256color,raw:cat /data/local/tmp/big; echo err >&2; exit 7")
    assert rid != 0
    got = _packets(c.read_all(lid, rid))
    assert _joined(got, 1) == b"z" * 1000 and _joined(got, 2) == b"err\n"
    assert got[-1] == (3, bytes([7]))  # the exit packet comes last, then the device closes


def test_v2_stdin_packets_split_anywhere_then_close_stdin_end_the_input(adbd: SimAdbd) -> None:
    c = WireClient(adbd.port)
    c.connect()
    lid, rid = c.open("shell,v2,raw:cat")
    stream = (V2.pack(5, 16) + bytes(16)  # window size: ignored
              + V2.pack(0, 6) + b"hello\n" + V2.pack(0, 3) + b"bye" + V2.pack(4, 0))  # close-stdin
    for i in range(0, len(stream), 3):  # 3-byte WRTEs: headers split between packets
        c.send(Packet(A_WRTE, lid, rid, stream[i:i + 3]))
    got = _packets(c.read_all(lid, rid))
    assert _joined(got, 1) == b"hello\nbye" and got[-1] == (3, b"\x00")


def test_v2_exit_status_wraps_like_a_byte_and_a_pty_turns_newlines_into_crlf(adbd: SimAdbd) -> None:
    c = WireClient(adbd.port)
    c.connect()
    lid, rid = c.open("shell,v2,raw:exit 300")
    assert _packets(c.read_all(lid, rid))[-1] == (3, bytes([300 & 255]))
    lid, rid = c.open("shell,v2,pty:echo a; echo b >&2")
    got = _packets(c.read_all(lid, rid))
    assert _joined(got, 1) == b"a\r\nb\r\n" and _joined(got, 2) == b""  # a tty has one output


def test_v2_interactive_pty_prompts_and_exit_n_ends_it(adbd: SimAdbd) -> None:
    c = WireClient(adbd.port)
    c.connect()
    lid, rid = c.open("shell,v2,pty:")
    keys = b"false\recho $?\rexit 5\r"  # a terminal in raw mode sends CR for Enter
    c.send(Packet(A_WRTE, lid, rid, V2.pack(0, len(keys)) + keys))
    got = _packets(c.read_all(lid, rid))
    assert _joined(got, 1) == b"artemis_sim:/ $ artemis_sim:/ $ 1\r\nartemis_sim:/ $ "
    assert got[-1] == (3, b"\x05")


def test_legacy_shell_reading_stdin_ends_when_the_host_closes_its_side(adbd: SimAdbd) -> None:
    c = WireClient(adbd.port)
    c.connect()
    lid, rid = c.open("shell:cat")
    c.send(Packet(A_WRTE, lid, rid, b"x\n"))
    ack = c.recv()
    assert ack is not None and ack.command == A_OKAY
    c.sock.settimeout(0.3)  # legacy stdin has no EOF of its own: the device keeps waiting ...
    with pytest.raises(TimeoutError):
        c.sock.recv(1)
    c.sock.settimeout(10)
    c.send(Packet(A_CLSE, lid, rid))  # ... until the host closes the stream
    lid2, rid2 = c.open("shell:echo $?")  # and the device is fine afterwards
    assert c.read_all(lid2, rid2) == b"0\n"
