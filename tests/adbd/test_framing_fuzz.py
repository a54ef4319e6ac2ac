"""Fuzz of the ADB transport framing: the packet codec, and a live SimAdbd fed garbage.

(a) Codec: any 24 bytes either parse into a header that satisfies the framing rules or raise
    PacketError -- never anything else; encode/decode round-trips.
(b) One SimAdbd for the module, fed random byte streams, malformed packets, and a valid CNXN
    followed by random OPEN/OKAY/WRTE/CLSE (unknown ids, odd services, garbage payloads), over
    many (also concurrent, also reset) connections.  Properties: what the server sends back is
    always well-formed framing; after the host half-closes, the server closes too (no hang); no
    exception escapes a server thread or is logged as unexpected (the server's own log records
    ``log.exception`` for anything it did not expect); and afterwards a proper client still
    runs ``shell:echo ok``.

Example counts come from the hypothesis profile (``--long`` for many more).
"""

from __future__ import annotations

import logging
import socket
import struct
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from adbd_support import AdbServer, attach
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from wire_client import WireClient

from artemis_cli.sim.adbd import SimAdbd
from artemis_cli.sim.adbd.packets import (
    A_AUTH,
    A_CLSE,
    A_CNXN,
    A_OKAY,
    A_OPEN,
    A_STLS,
    A_SYNC,
    A_VERSION,
    A_WRTE,
    HEADER,
    MAX_PAYLOAD,
    NAMES,
    Header,
    Packet,
    PacketError,
    checksum,
)
from artemis_cli.sim.phone import SimPhone

FUZZ = settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
COMMANDS = sorted(NAMES)
DEVICE_SENDS = {A_CNXN, A_OKAY, A_WRTE, A_CLSE}
u32 = st.integers(0, 2**32 - 1)

# --- (a) the codec ---------------------------------------------------------------------------


@FUZZ
@given(st.sampled_from(COMMANDS), u32, u32, st.binary(max_size=4096))
def test_encode_decode_round_trips(command: int, arg0: int, arg1: int, data: bytes) -> None:
    p = Packet(command, arg0, arg1, data)
    raw = p.encode()
    assert len(raw) == HEADER.size + len(data)
    header = Header.parse(raw[: HEADER.size], MAX_PAYLOAD)
    assert (header.command, header.arg0, header.arg1, header.length) == (command, arg0, arg1, len(data))
    assert header.packet(raw[HEADER.size :], verify_checksum=True) == p


fields = st.fixed_dictionaries({
    "command": st.sampled_from(COMMANDS) | u32,
    "arg0": u32,
    "arg1": u32,
    "length": st.sampled_from([0, 1, 4096, MAX_PAYLOAD, MAX_PAYLOAD + 1, 2**32 - 1]) | u32,
    "check": u32,
    "magic": st.none() | u32,  # None: the right magic
})


@FUZZ
@given(fields, st.sampled_from([4096, MAX_PAYLOAD]))
def test_any_header_parses_exactly_when_it_follows_the_rules(f: dict[str, int | None], limit: int) -> None:
    command = f["command"]
    assert command is not None
    magic = command ^ 0xFFFFFFFF if f["magic"] is None else f["magic"]
    raw = HEADER.pack(command, f["arg0"], f["arg1"], f["length"], f["check"], magic)
    valid = command in NAMES and magic == command ^ 0xFFFFFFFF and (f["length"] or 0) <= limit
    try:
        header = Header.parse(raw, limit)
    except PacketError as exc:
        assert not valid, exc
        assert str(exc)
    else:
        assert valid
        assert header.length == f["length"] and header.command == command


@FUZZ
@given(st.binary(max_size=48))
def test_random_bytes_as_header_raise_packet_error_only(raw: bytes) -> None:
    try:
        header = Header.parse(raw, MAX_PAYLOAD)
    except PacketError:
        return
    assert len(raw) == HEADER.size and header.command in NAMES


@FUZZ
@given(st.sampled_from(COMMANDS), st.binary(min_size=1, max_size=512), st.data())
def test_corrupted_payload_fails_the_checksum_when_the_sum_changes(
    command: int, data: bytes, draw: st.DataObject
) -> None:
    raw = Packet(command, 1, 2, data).encode()
    header = Header.parse(raw[: HEADER.size], MAX_PAYLOAD)
    i = draw.draw(st.integers(0, len(data) - 1))
    corrupted = bytearray(data)
    corrupted[i] = draw.draw(st.integers(0, 255).filter(lambda b: b != data[i]))
    with pytest.raises(PacketError, match="checksum"):
        header.packet(bytes(corrupted), verify_checksum=True)
    assert header.packet(bytes(corrupted), verify_checksum=False).data == bytes(corrupted)
    assert checksum(bytes(corrupted)) != checksum(data)


# --- (b) a live server -----------------------------------------------------------------------


@dataclass
class Problems:
    """Unexpected exceptions from server threads: escaped ones and ones the server logged."""

    escaped: list[str] = field(default_factory=list)
    logged: list[str] = field(default_factory=list)
    malformed: int = 0  # expected: "closing …: malformed packet" warnings

    def clear(self) -> None:
        self.escaped.clear()
        self.logged.clear()


class _Recorder(logging.Handler):
    def __init__(self, problems: Problems) -> None:
        super().__init__(level=logging.DEBUG)
        self.problems = problems

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info is not None or record.levelno >= logging.ERROR:
            self.problems.logged.append(self.format(record))
        elif "malformed packet" in record.getMessage():
            self.problems.malformed += 1


@dataclass
class Fuzzed:
    adbd: SimAdbd
    problems: Problems

    def assert_healthy(self) -> None:
        """Still accepting, still serving a proper client, nothing unexpected happened."""
        c = WireClient(self.adbd.port)
        try:
            c.connect()
            lid, rid = c.open("shell:echo ok")
            assert rid != 0
            assert c.read_all(lid, rid) == b"ok\n"
        finally:
            c.close()
        assert not self.problems.escaped, self.problems.escaped
        assert not self.problems.logged, self.problems.logged


@pytest.fixture(scope="module")
def fuzzed() -> Iterator[Fuzzed]:
    problems = Problems()
    recorder = _Recorder(problems)
    logger = logging.getLogger("artemis_cli.sim.adbd")
    old_level = logger.level
    logger.addHandler(recorder)
    logger.setLevel(logging.DEBUG)
    previous_hook = threading.excepthook

    def hook(args: threading.ExceptHookArgs) -> None:
        name = args.thread.name if args.thread is not None else "?"
        problems.escaped.append(f"{name}: {args.exc_type.__name__}: {args.exc_value}")
        previous_hook(args)

    threading.excepthook = hook
    try:
        with SimAdbd(SimPhone(popups=False), port=0) as adbd:
            yield Fuzzed(adbd, problems)
    finally:
        threading.excepthook = previous_hook
        logger.removeHandler(recorder)
        logger.setLevel(old_level)


def exchange(port: int, payload: bytes, *, patient: bool = False, timeout: float = 5.0) -> bytes:
    """Send ``payload``, half-close, and return everything the server sends until it closes.

    ``patient``: before half-closing, act as a live host for a moment -- OKAY every WRTE until
    the device has been quiet for 0.1 s -- so services get to run to the end.  Fails if the
    server neither closes nor stops talking within ``timeout`` after the half-close (a hang)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        out = bytearray()
        try:
            sock.sendall(payload)
            if patient:
                _serve_as_host(sock, out)
            sock.shutdown(socket.SHUT_WR)
        except OSError:  # the server may close first (malformed packet) and reset us
            pass
        sock.settimeout(timeout)
        while True:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                break
            except TimeoutError:
                raise AssertionError(f"server did not close after half-close; got {bytes(out[:80])!r}") from None
            if not chunk:
                break
            out += chunk
        return bytes(out)


def _serve_as_host(sock: socket.socket, out: bytearray) -> None:
    sock.settimeout(0.1)
    pos = 0
    while True:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            return
        if not chunk:
            return
        out += chunk
        while len(out) - pos >= HEADER.size:  # acknowledge each complete WRTE
            command, arg0, arg1, length = struct.unpack_from("<4I", out, pos)
            if len(out) - pos < HEADER.size + length:
                break
            if command == A_WRTE:
                sock.sendall(Packet(A_OKAY, arg1, arg0).encode())
            pos += HEADER.size + length


def assert_well_formed(stream: bytes) -> list[Packet]:
    """Everything the device sends is whole, checksummed packets of device-side commands."""
    packets: list[Packet] = []
    pos = 0
    while pos < len(stream):
        assert len(stream) - pos >= HEADER.size, f"torn header at {pos}: {stream[pos:pos + 24]!r}"
        header = Header.parse(stream[pos : pos + HEADER.size], MAX_PAYLOAD)
        pos += HEADER.size
        assert len(stream) - pos >= header.length, "torn payload"
        p = header.packet(stream[pos : pos + header.length], verify_checksum=True)
        pos += header.length
        assert p.command in DEVICE_SENDS, p
        packets.append(p)
    return packets


CNXN = Packet(A_CNXN, A_VERSION, 4096, b"host::features=shell_v2,cmd\0")
ids = st.sampled_from([0, 1, 2, 3, 100, 2**31, 2**32 - 1]) | u32
services = st.sampled_from([
    b"shell:echo fuzz\0", b"shell:\0", b"exec:cat /nonexistent\0", b"sync:\0", b"tcp:9008\0",
    b"tcp:abc\0", b"tcp:\0", b"root:\0", b"unroot:\0", b"framebuffer:\0", b"shell,v2,raw:ls\0",
    b"exec:getprop ro.product.model\0", b"shell:input tap 10 10\0", b"\0", b"", b"\xff\xfe\xfd\0",
    b"shell:" + b"x" * 3000 + b"\0", b"sync:",
])
sync_requests = st.sampled_from([
    b"STAT\x05\x00\x00\x00/data", b"LIST\x08\x00\x00\x00/sdcard/", b"QUIT\x00\x00\x00\x00",
    b"RECV\x0c\x00\x00\x00/nonexistent", b"SEND\xff\xff\xff\xff", b"SEND\x10\x00\x00\x00/sdcard/f.txt,420",
    b"DATA\x03\x00\x00\x00abc", b"DONE\x00\x00\x00\x00", b"STA2\x01\x00\x00\x00/", b"XXXX\x00\x00\x00\x00",
    b"DATA\xff\xff\x00\x00", b"LST2\x00\x00\x00\x00",
])
payloads = st.one_of(st.binary(max_size=64), services, sync_requests,
                     st.lists(sync_requests, min_size=1, max_size=4).map(b"".join))


@st.composite
def packet_bytes(draw: st.DrawFn) -> bytes:
    command = draw(st.sampled_from([A_OPEN, A_OPEN, A_WRTE, A_WRTE, A_OKAY, A_CLSE, A_CNXN, A_SYNC, A_AUTH,
                                    A_STLS]))
    p = Packet(command, draw(ids), draw(ids), draw(payloads))
    raw = bytearray(p.encode())
    corruption = draw(st.sampled_from(["none"] * 8 + ["magic", "length", "checksum", "truncate", "unknown"]))
    if corruption == "magic":
        raw[20:24] = struct.pack("<I", draw(u32))
    elif corruption == "length":
        raw[12:16] = struct.pack("<I", draw(st.sampled_from([MAX_PAYLOAD + 1, 2**32 - 1, len(p.data) + 7])))
    elif corruption == "checksum":
        raw[16:20] = struct.pack("<I", draw(u32))
    elif corruption == "truncate":
        raw = raw[: draw(st.integers(0, len(raw)))]
    elif corruption == "unknown":
        cmd = draw(u32)
        raw[0:4] = struct.pack("<I", cmd)
        raw[20:24] = struct.pack("<I", cmd ^ 0xFFFFFFFF)
    return bytes(raw)


@FUZZ
@given(st.binary(max_size=400))
@example(b"")
@example(b"\x00" * 24)
@example(HEADER.pack(A_CNXN, 0, 0, 0, 0, A_CNXN ^ 0xFFFFFFFF))  # version 0
def test_random_byte_streams(fuzzed: Fuzzed, stream: bytes) -> None:
    assert_well_formed(exchange(fuzzed.adbd.port, stream))
    fuzzed.assert_healthy()


@FUZZ
@given(st.booleans(), st.lists(packet_bytes(), min_size=1, max_size=8), st.binary(max_size=40), st.booleans())
@example(True, [Packet(A_WRTE, 5, 77, b"hi").encode(), Packet(A_CLSE, 9, 12345).encode(),
                Packet(A_OKAY, 0, 0).encode()], b"", True)  # traffic for streams that never existed
@example(True, [Packet(A_OPEN, 7, 0, b"sync:\0").encode(), Packet(A_WRTE, 7, 1, b"SEND\xff\xff\xff\xff").encode()],
         b"", True)
def test_cnxn_then_garbage_packets(
    fuzzed: Fuzzed, handshake: bool, packets: list[bytes], tail: bytes, patient: bool
) -> None:
    stream = (CNXN.encode() if handshake else b"") + b"".join(packets) + tail
    replies = assert_well_formed(exchange(fuzzed.adbd.port, stream, patient=patient))
    if handshake:
        assert replies and replies[0].command == A_CNXN  # the handshake is always answered first
    for p in replies:
        if p.command in (A_OKAY, A_WRTE):
            assert p.arg0 != 0  # the device's own id of an open stream
    fuzzed.assert_healthy()


def _interactive_session(port: int, lines: list[bytes]) -> bytes:
    """An interactive ``shell:`` the host feeds random data and stray OKAYs, then ``exit``."""
    c = WireClient(port, max_payload=4096)
    try:
        c.connect()
        lid, rid = c.open("shell:")
        assert rid != 0
        for line in lines:
            c.send(Packet(A_WRTE, lid, rid, line))
            c.send(Packet(A_OKAY, lid, rid))  # unsolicited: must not confuse flow control
        c.send(Packet(A_WRTE, lid, rid, b"\nexit\n"))
        return c.read_all(lid, rid)  # OKAYs every WRTE until the device's CLSE
    finally:
        c.close()


@FUZZ
@given(st.lists(st.binary(max_size=80) | st.sampled_from([b"echo hi\n", b"\n", b"exit", b"\xff\n",
                                                           b"input text x\n", b"ls /\n"]), max_size=6))
def test_interactive_shell_with_garbage_input(fuzzed: Fuzzed, lines: list[bytes]) -> None:
    out = _interactive_session(fuzzed.adbd.port, lines)
    assert out.startswith(b"artemis_sim:/ $ ")
    fuzzed.assert_healthy()


def test_many_concurrent_garbage_connections(fuzzed: Fuzzed) -> None:
    """Eight threads x twelve connections of mixed garbage at once, then a healthy server."""
    import random

    errors: list[str] = []

    def worker(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(12):
            try:
                kind = rng.randrange(3)
                if kind == 0:
                    data = bytes(rng.randrange(256) for _ in range(rng.randrange(200)))
                elif kind == 1:
                    data = CNXN.encode() + b"".join(
                        Packet(rng.choice([A_OPEN, A_WRTE, A_CLSE, A_OKAY]), rng.randrange(1, 2**32),
                               rng.randrange(2**32), rng.choice([b"shell:echo x\0", b"sync:\0", b"junk"])).encode()
                        for _ in range(rng.randrange(1, 6))
                    )
                else:
                    data = CNXN.encode() + Packet(A_OPEN, 5, 0, b"exec:screencap -p\0").encode()  # never OKAYed
                assert_well_formed(exchange(fuzzed.adbd.port, data))
            except Exception as exc:  # collected for the main thread
                errors.append(f"{seed}: {exc!r}")

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    fuzzed.assert_healthy()


def test_connections_reset_at_once_do_not_kill_the_accept_loop(fuzzed: Fuzzed) -> None:
    """Connect and reset (RST) before the server has even accepted: the server keeps accepting."""
    for _ in range(40):
        sock = socket.create_connection(("127.0.0.1", fuzzed.adbd.port), timeout=5)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
    fuzzed.assert_healthy()


def test_stream_ids_of_other_connections_are_not_reachable(fuzzed: Fuzzed) -> None:
    """A CLSE/WRTE naming another connection's stream id must not touch that stream."""
    victim = WireClient(fuzzed.adbd.port)
    victim.connect()
    lid, rid = victim.open("shell:")
    first = victim.recv()
    assert first is not None and first.command == A_WRTE  # the prompt
    victim.send(Packet(A_OKAY, lid, rid))
    attacker = WireClient(fuzzed.adbd.port)
    attacker.connect()
    attacker.send(Packet(A_WRTE, 99, rid, b"echo pwned\n"))
    attacker.send(Packet(A_CLSE, 0, rid))
    clse = attacker.recv()
    assert clse is not None and clse.command == A_CLSE and clse.arg1 == 99
    attacker.close()
    victim.send(Packet(A_WRTE, lid, rid, b"echo mine\n"))
    seen = b""
    while b"mine" not in seen:
        p = victim.recv()
        assert p is not None
        if p.command == A_WRTE:
            seen += p.data
            victim.send(Packet(A_OKAY, lid, rid))
    assert b"pwned" not in seen
    victim.close()
    fuzzed.assert_healthy()


def test_real_adb_still_works_after_the_fuzzing(fuzzed: Fuzzed, adb_server: AdbServer) -> None:
    """Runs last in this module: Debian's adb connects to the fuzzed server and runs a shell."""
    attach(adb_server, fuzzed.adbd)
    try:
        assert adb_server.text("shell", "echo ok", serial=fuzzed.adbd.serial) == "ok\n"
    finally:
        adb_server.run("disconnect", fuzzed.adbd.serial, check=False)
    fuzzed.assert_healthy()
