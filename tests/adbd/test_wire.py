"""The adbd at the packet level: handshake, OKAY/WRTE flow control, payload limit, refusals,
malformed input, concurrent streams, sync framing across packets, drop and clean stop."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator

import pytest
from adbd_support import free_port
from wire_client import WireClient

from artemis_cli.errors import UsageError
from artemis_cli.sim.adbd import SimAdbd
from artemis_cli.sim.adbd.packets import A_CLSE, A_OKAY, A_WRTE, HEADER, MAX_PAYLOAD, Packet
from artemis_cli.sim.phone import SimPhone


@pytest.fixture
def adbd() -> Iterator[SimAdbd]:
    with SimAdbd(SimPhone(popups=False), port=0) as server:
        yield server


def test_cnxn_reply_carries_version_max_payload_and_a_shell_v2_banner(adbd: SimAdbd) -> None:
    c = WireClient(adbd.port)
    reply = c.connect()
    assert reply.arg0 == 0x01000001 and reply.arg1 == MAX_PAYLOAD
    text = reply.data.decode()
    assert text.startswith("device::ro.product.name=artemis_sim;ro.product.model=Artemis Sim;")
    features = text.split("features=")[1].split(",")
    assert "shell_v2" in features and "cmd" not in features
    c.close()


def test_shell_output_respects_the_hosts_max_payload_and_waits_for_okay(adbd: SimAdbd) -> None:
    c = WireClient(adbd.port, max_payload=4096)
    c.connect()
    lid, rid = c.open("exec:screencap -p")
    first = c.recv()
    assert first is not None and first.command == A_WRTE and len(first.data) == 4096
    # without our OKAY the device must not send another WRTE
    c.sock.settimeout(0.3)
    with pytest.raises(TimeoutError):
        c.sock.recv(1)
    c.sock.settimeout(10)
    c.send(Packet(A_OKAY, lid, rid))
    rest = c.read_all(lid, rid)
    png = first.data + rest
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and png == adbd.phone.render_png()


def test_checksums_are_verified_for_old_hosts(adbd: SimAdbd) -> None:
    c = WireClient(adbd.port, version=0x01000000)
    c.connect()
    bad = bytearray(Packet(2 and 0x4E45504F, 5, 0, b"shell:echo hi\0").encode())
    bad[16:20] = struct.pack("<I", 1)  # wrong data_check
    c.sock.sendall(bytes(bad))
    assert c.recv() is None  # connection closed
    c2 = WireClient(adbd.port, version=0x01000000)
    c2.connect()
    lid, rid = c2.open("shell:echo hi")
    assert c2.read_all(lid, rid) == b"hi\n"


def test_unknown_services_are_refused_and_tcp_ports_without_listener_too(adbd: SimAdbd) -> None:
    c = WireClient(adbd.port)
    c.connect()
    for service in ("shellx:ls", "framebuffer:", "tcp:9008", "jdwp:12"):
        assert c.open(service)[1] == 0, service
    lid, rid = c.open("shell:echo still here")
    assert c.read_all(lid, rid) == b"still here\n"


@pytest.mark.parametrize("garbage", [
    b"\x00" * 24,
    HEADER.pack(0x4E584E43, 0x01000001, 4096, 5, 0, 0),  # CNXN with a bad magic
    HEADER.pack(0x45545257, 1, 1, MAX_PAYLOAD + 1, 0, 0x45545257 ^ 0xFFFFFFFF),  # oversized WRTE
])
def test_a_malformed_packet_closes_that_connection_only(adbd: SimAdbd, garbage: bytes) -> None:
    good = WireClient(adbd.port)
    good.connect()
    bad = WireClient(adbd.port)
    bad.connect()
    bad.sock.sendall(garbage)
    assert bad.recv() is None
    lid, rid = good.open("shell:getprop ro.product.model")
    assert good.read_all(lid, rid) == b"Artemis Sim\n"
    fresh = WireClient(adbd.port)
    fresh.connect()


def test_packets_before_cnxn_close_the_connection(adbd: SimAdbd) -> None:
    c = WireClient(adbd.port)
    c.send(Packet(0x4E45504F, 1, 0, b"shell:ls\0"))
    assert c.recv() is None


def test_many_concurrent_streams_on_many_connections(adbd: SimAdbd) -> None:
    errors: list[str] = []

    def worker(n: int) -> None:
        try:
            c = WireClient(adbd.port, max_payload=1024)
            c.connect()
            lids = list(range(10, 14))
            for i, lid in enumerate(lids):  # all OPENs first: replies interleave, routed by our id
                c.send(Packet(0x4E45504F, lid, 0, f"shell:echo stream-{n}-{i}".encode() + b"\0"))
            got: dict[int, bytes] = {lid: b"" for lid in lids}
            streams = [(lid, 0) for lid in lids]
            open_ids = set(got)
            while open_ids:
                p = c.recv()
                assert p is not None
                if p.command == A_OKAY:
                    continue
                if p.command == A_WRTE:
                    got[p.arg1] += p.data
                    c.send(Packet(A_OKAY, p.arg1, p.arg0))
                elif p.command == A_CLSE:
                    open_ids.discard(p.arg1)
            for i, (lid, _) in enumerate(streams):
                assert got[lid] == f"stream-{n}-{i}\n".encode(), got
            c.close()
        except Exception as e:  # collected for the main thread
            errors.append(repr(e))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors, errors


def test_sync_requests_split_across_packets_and_several_in_one(adbd: SimAdbd) -> None:
    c = WireClient(adbd.port)
    c.connect()
    lid, rid = c.open("sync:")
    data = bytes(range(256)) * 600  # 153600 bytes: three DATA chunks
    path = b"/sdcard/Download/x.bin,33188"
    msg = b"SEND" + struct.pack("<I", len(path)) + path
    for off in range(0, len(data), 65536):
        chunk = data[off:off + 65536]
        msg += b"DATA" + struct.pack("<I", len(chunk)) + chunk
    msg += b"DONE" + struct.pack("<I", 1700000000)
    for off in range(0, len(msg), 1000):  # tiny WRTEs: requests straddle packets
        c.send(Packet(A_WRTE, lid, rid, msg[off:off + 1000]))
        ack = c.recv()
        assert ack is not None and ack.command == A_OKAY
    reply = c.recv()
    assert reply is not None and reply.data == b"OKAY\0\0\0\0"
    c.send(Packet(A_OKAY, lid, rid))
    target = b"/sdcard/Download/x.bin"
    stat = b"STAT" + struct.pack("<I", len(target)) + target
    c.send(Packet(A_WRTE, lid, rid, stat + b"QUIT" + struct.pack("<I", 0)))  # two requests, one packet
    seen = b""
    while True:
        p = c.recv()
        assert p is not None
        if p.command == A_WRTE:
            seen += p.data
            c.send(Packet(A_OKAY, lid, rid))
        elif p.command == A_CLSE:
            break
    mode, size, mtime = struct.unpack("<III", seen[4:16])
    assert seen[:4] == b"STAT" and size == len(data) and mtime == 1700000000 and mode & 0o100000
    assert adbd.phone.read_file("/sdcard/Download/x.bin") == data


def test_drop_closes_connections_and_refuses_then_accepts_again(adbd: SimAdbd) -> None:
    c = WireClient(adbd.port)
    c.connect()
    adbd.drop(0.5)
    assert c.recv() is None
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", adbd.port), timeout=1).recv(1) or (_ for _ in ()).throw(OSError())
    import time

    deadline = time.monotonic() + 5
    while True:
        try:
            again = WireClient(adbd.port)
            again.connect()
            break
        except OSError:
            assert time.monotonic() < deadline
            time.sleep(0.05)


def test_stop_closes_everything_and_frees_the_port() -> None:
    port = free_port()
    server = SimAdbd(SimPhone(popups=False), port=port).start()
    c = WireClient(port)
    c.connect()
    server.stop()
    assert c.recv() is None
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1)
    SimAdbd(SimPhone(popups=False), port=port).start().stop()  # the port can be reused at once


def test_emulator_ports_are_refused() -> None:
    with pytest.raises(UsageError, match="5555-5585"):
        SimAdbd(SimPhone(), port=5555)
