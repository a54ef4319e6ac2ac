"""The ``sync:`` service: STAT/STA2/LST2, LIST, SEND, RECV, QUIT over the phone's virtual files.

Requests are ``ID(4) LENGTH(u32 LE) PAYLOAD``; the stream is a byte stream, so a request may
span WRTE packets and a packet may hold several requests.  SEND data arrives as
``DATA len bytes`` chunks of at most 64 KiB and ends with ``DONE mtime``; the reply is
``OKAY 0`` or ``FAIL len message``.
"""

from __future__ import annotations

import posixpath
import struct
from typing import TYPE_CHECKING

from artemis_cli.sim.adbd.stream import Stream
from artemis_cli.sim.vfs import FsError

if TYPE_CHECKING:
    from artemis_cli.sim.adbd.device_shell import DeviceSide

SYNC_DATA_MAX = 64 * 1024
MAX_PATH = 1024
S_IFREG = 0o100000
S_IFDIR = 0o040000
FILE_MODE = S_IFREG | 0o660
DIR_MODE = S_IFDIR | 0o771
_REQ = struct.Struct("<4sI")


class SyncError(Exception):
    pass


def serve_sync(stream: Stream, device: DeviceSide) -> None:
    while True:
        raw = stream.read_exact(8)
        ident, length = _REQ.unpack(raw)
        if ident == b"QUIT":
            return
        if ident in (b"STAT", b"STA2", b"LST2", b"LIST", b"SEND", b"RECV"):
            if length > MAX_PATH:
                _fail(stream, f"path too long ({length} bytes)")
                return
            path = stream.read_exact(length).decode("utf-8", "replace")
            if ident == b"STAT":
                stream.write(b"STAT" + struct.pack("<III", *_stat(device, path)))
            elif ident in (b"STA2", b"LST2"):
                stream.write(_stat2(ident, device, path))
            elif ident == b"LIST":
                _list(stream, device, path)
            elif ident == b"SEND":
                if not _send(stream, device, path):
                    return
            else:
                _recv(stream, device, path)
        else:
            _fail(stream, f"unknown sync command {ident!r}")
            return


def _stat(device: DeviceSide, path: str) -> tuple[int, int, int]:
    with device.lock:
        try:
            kind, size, mtime = device.phone.fs.stat(path)
        except FsError:
            return 0, 0, 0
    return (DIR_MODE if kind == "dir" else FILE_MODE), size, mtime


def _stat2(ident: bytes, device: DeviceSide, path: str) -> bytes:
    mode, size, mtime = _stat(device, path)
    error = 0 if mode else 2  # ENOENT
    # error, dev, ino, mode, nlink, uid, gid, size, atime, mtime, ctime
    return ident + struct.pack("<IQQIIIIQqqq", error, 0, 0, mode, 1 if mode else 0, 2000, 2000, size,
                               mtime, mtime, mtime)


def _list(stream: Stream, device: DeviceSide, path: str) -> None:
    with device.lock:
        fs = device.phone.fs
        try:
            names = fs.listdir(path) if fs.is_dir(path) else []
        except FsError:
            names = []
        entries = [(".", *_stat(device, path)), ("..", *_stat(device, posixpath.dirname(fs.norm(path)) or "/"))]
        for name in names:
            entries.append((name, *_stat(device, posixpath.join(fs.norm(path), name))))
    out = bytearray()
    for name, mode, size, mtime in entries:
        raw = name.encode("utf-8")
        out += b"DENT" + struct.pack("<IIII", mode, size, mtime, len(raw)) + raw
    out += b"DONE" + struct.pack("<IIII", 0, 0, 0, 0)
    stream.write(bytes(out))


def _send(stream: Stream, device: DeviceSide, spec: str) -> bool:
    path, _, _mode = spec.rpartition(",")
    if not path:
        path = spec
    data = bytearray()
    error: str | None = None
    while True:
        ident, length = _REQ.unpack(stream.read_exact(8))
        if ident == b"DATA":
            if length > SYNC_DATA_MAX:
                _fail(stream, f"data chunk of {length} bytes exceeds {SYNC_DATA_MAX}")
                return False
            data += stream.read_exact(length)
        elif ident == b"DONE":
            mtime = length
            break
        else:
            _fail(stream, f"unexpected {ident!r} in SEND")
            return False
    with device.lock:
        fs = device.phone.fs
        try:
            parent = posixpath.dirname(fs.norm(path))
            if not fs.exists(parent) and fs.writable(parent):
                fs.mkdir(parent, parents=True)
            device.phone.write_file(path, bytes(data))
            fs.mtimes[fs.norm(path)] = mtime
        except FsError as e:
            error = f"couldn't create file: {e.reason}"
    if error is not None:
        _fail(stream, error)
        return True
    stream.write(b"OKAY" + struct.pack("<I", 0))
    return True


def _recv(stream: Stream, device: DeviceSide, path: str) -> None:
    with device.lock:
        try:
            data = device.phone.read_file(path)
        except FsError as e:
            data = None
            reason = e.reason
    if data is None:
        _fail(stream, reason)
        return
    out = bytearray()
    for start in range(0, len(data), SYNC_DATA_MAX):
        chunk = data[start:start + SYNC_DATA_MAX]
        out += b"DATA" + struct.pack("<I", len(chunk)) + chunk
        if len(out) >= 4 * SYNC_DATA_MAX:
            stream.write(bytes(out))
            out.clear()
    out += b"DONE" + struct.pack("<I", 0)
    stream.write(bytes(out))


def _fail(stream: Stream, message: str) -> None:
    raw = message.encode("utf-8")
    stream.write(b"FAIL" + struct.pack("<I", len(raw)) + raw)
