"""A minimal ADB host side for wire-level tests (no adb binary needed)."""

from __future__ import annotations

import socket

from artemis_cli.sim.adbd.packets import A_CLSE, A_CNXN, A_OKAY, A_OPEN, A_WRTE, HEADER, Header, Packet


class WireClient:
    def __init__(self, port: int, *, max_payload: int = 256 * 1024, version: int = 0x01000001) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.max_payload = max_payload
        self.version = version
        self.next_id = 100

    def send(self, p: Packet) -> None:
        self.sock.sendall(p.encode())

    def recv(self) -> Packet | None:
        raw = self._exact(HEADER.size)
        if raw is None:
            return None
        h = Header.parse(raw, 16 * 1024 * 1024)
        data = self._exact(h.length) if h.length else b""
        assert data is not None
        return h.packet(data, verify_checksum=True)

    def _exact(self, n: int) -> bytes | None:
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                return None
            buf += chunk
        return buf

    def connect(self) -> Packet:
        self.send(Packet(A_CNXN, self.version, self.max_payload, b"host::features=shell_v2,cmd\0"))
        reply = self.recv()
        assert reply is not None and reply.command == A_CNXN, reply
        return reply

    def open(self, service: str) -> tuple[int, int]:
        """OPEN; returns (our id, device id); device id 0 means refused (CLSE)."""
        lid = self.next_id
        self.next_id += 1
        self.send(Packet(A_OPEN, lid, 0, service.encode() + b"\0"))
        reply = self.recv()
        assert reply is not None
        if reply.command == A_CLSE:
            return lid, 0
        assert reply.command == A_OKAY and reply.arg1 == lid, reply
        return lid, reply.arg0

    def read_all(self, lid: int, rid: int) -> bytes:
        """Collect WRTEs (acknowledging each) until CLSE."""
        out = b""
        while True:
            p = self.recv()
            assert p is not None, "connection closed"
            if p.command == A_WRTE:
                assert p.arg1 == lid and p.arg0 == rid
                assert len(p.data) <= self.max_payload
                out += p.data
                self.send(Packet(A_OKAY, lid, rid))
            elif p.command == A_CLSE:
                return out

    def close(self) -> None:
        self.sock.close()
