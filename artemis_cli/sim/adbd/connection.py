"""One transport connection from an adb server: handshake, packet dispatch, stream table."""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from artemis_cli.sim.adbd.packets import (
    A_AUTH,
    A_CLSE,
    A_CNXN,
    A_OKAY,
    A_OPEN,
    A_STLS,
    A_SYNC,
    A_VERSION,
    A_VERSION_MIN,
    A_VERSION_SKIP_CHECKSUM,
    A_WRTE,
    HEADER,
    MAX_PAYLOAD,
    Header,
    Packet,
    PacketError,
)
from artemis_cli.sim.adbd.stream import Stream, StreamClosed

if TYPE_CHECKING:
    from artemis_cli.sim.adbd.server import SimAdbd

log = logging.getLogger(__name__)


class Connection:
    """Reads packets on its own thread; each OPENed service runs on a thread of its own."""

    def __init__(self, sock: socket.socket, server: SimAdbd) -> None:
        self.sock = sock
        self.server = server
        self.peer = "{}:{}".format(*sock.getpeername()[:2])
        self._send_lock = threading.Lock()
        self._streams: dict[int, Stream] = {}
        self._streams_lock = threading.Lock()
        self._next_id = 1
        self.online = False
        self.version = A_VERSION_MIN
        self.max_send = 4096
        self.alive = True
        self.thread = threading.Thread(target=self._serve, name=f"adbd-conn-{self.peer}", daemon=True)

    def start(self) -> None:
        self.thread.start()

    # --- sending --------------------------------------------------------------------------
    def send(self, packet: Packet) -> bool:
        if not self.alive:
            return False
        try:
            with self._send_lock:
                self.sock.sendall(packet.encode())
            return True
        except OSError:
            self.abort()
            return False

    # --- reading --------------------------------------------------------------------------
    def _read_exact(self, n: int) -> bytes | None:
        buf = bytearray()
        while len(buf) < n:
            try:
                chunk = self.sock.recv(n - len(buf))
            except OSError:
                return None
            if not chunk:
                return None
            buf += chunk
        return bytes(buf)

    def _serve(self) -> None:
        try:
            while self.alive:
                raw = self._read_exact(HEADER.size)
                if raw is None:
                    break
                header = Header.parse(raw, MAX_PAYLOAD)
                data = self._read_exact(header.length) if header.length else b""
                if data is None:
                    break
                verify = self.version < A_VERSION_SKIP_CHECKSUM and header.check != 0
                self._handle(header.packet(data, verify_checksum=verify))
        except PacketError as e:
            log.warning("adbd: closing %s: malformed packet: %s", self.peer, e)
        except Exception:  # never let one connection kill the server
            log.exception("adbd: connection %s failed", self.peer)
        finally:
            self.abort()

    def _handle(self, p: Packet) -> None:
        if p.command == A_CNXN:
            self._connect(p)
            return
        if not self.online:
            if p.command in (A_AUTH, A_STLS, A_SYNC):
                return
            raise PacketError(f"{p.name} before CNXN")
        if p.command == A_OPEN:
            self._open(p)
        elif p.command == A_OKAY:
            s = self._stream(p.arg1)
            if s is not None:
                s.peer_okay()
        elif p.command == A_WRTE:
            s = self._stream(p.arg1)
            if s is None:
                # unknown stream: tell the host it is gone
                self.send(Packet(A_CLSE, 0, p.arg0))
            else:
                s.peer_write(p.data)
        elif p.command == A_CLSE:
            s = self._stream(p.arg1)
            if s is not None and (p.arg0 in (0, s.remote_id)):
                s.peer_close()
        # A_AUTH / A_STLS / A_SYNC after the handshake: ignored (we never asked for them)

    def _connect(self, p: Packet) -> None:
        if p.arg0 < A_VERSION_MIN:
            raise PacketError(f"unsupported protocol version 0x{p.arg0:08x}")
        if not p.data.startswith(b"host:"):
            log.debug("adbd: CNXN from %s with banner %r", self.peer, p.data[:60])
        for s in self._all_streams():
            s.peer_close()
        self.version = min(p.arg0, A_VERSION)
        self.max_send = max(256, min(p.arg1 or 4096, MAX_PAYLOAD))
        self.online = True
        self.send(Packet(A_CNXN, self.version, MAX_PAYLOAD, self.server.banner()))

    def _open(self, p: Packet) -> None:
        name = p.data.split(b"\0", 1)[0].decode("utf-8", "replace")
        remote_id = p.arg0
        if remote_id == 0:
            raise PacketError("OPEN with remote id 0")
        service = self.server.services.resolve(name)
        log.debug("adbd: OPEN %r from %s: %s", name, self.peer, "refused" if service is None else "served")
        if service is None:
            self.send(Packet(A_CLSE, 0, remote_id))
            return
        with self._streams_lock:
            local_id = self._next_id
            self._next_id += 1
            stream = Stream(local_id, remote_id, name, self.send, self.max_send, self._forget)
            self._streams[local_id] = stream
        self.send(Packet(A_OKAY, local_id, remote_id))
        threading.Thread(target=self._run_service, args=(service, stream), name=f"adbd-{name[:24]}",
                         daemon=True).start()

    def _run_service(self, service: Callable[[Stream], None], stream: Stream) -> None:
        try:
            service(stream)
        except (StreamClosed, ConnectionAbortedError):
            pass
        except Exception:
            log.exception("adbd: service %r failed", stream.service)
        finally:
            stream.close()

    def _stream(self, local_id: int) -> Stream | None:
        with self._streams_lock:
            return self._streams.get(local_id)

    def _all_streams(self) -> list[Stream]:
        with self._streams_lock:
            return list(self._streams.values())

    def _forget(self, stream: Stream) -> None:
        with self._streams_lock:
            self._streams.pop(stream.local_id, None)

    @property
    def stream_count(self) -> int:
        with self._streams_lock:
            return len(self._streams)

    def abort(self) -> None:
        """Drop the connection: every stream sees it closed."""
        if not self.alive:
            return
        self.alive = False
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        for s in self._all_streams():
            s.peer_close()
        self.server.connection_closed(self)
