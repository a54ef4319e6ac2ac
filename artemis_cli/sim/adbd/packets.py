"""ADB transport framing: the 24-byte message header, commands, checksum and validation.

Every message is ``command, arg0, arg1, data_length, data_check, magic`` as little-endian
uint32 followed by ``data_length`` bytes of payload; ``magic == command ^ 0xffffffff``;
``data_check`` is the byte sum of the payload (still required below version 0x01000001).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

A_SYNC = 0x434E5953
A_CNXN = 0x4E584E43
A_OPEN = 0x4E45504F
A_OKAY = 0x59414B4F
A_CLSE = 0x45534C43
A_WRTE = 0x45545257
A_AUTH = 0x48545541
A_STLS = 0x534C5453

A_VERSION_MIN = 0x01000000
A_VERSION_SKIP_CHECKSUM = 0x01000001
A_VERSION = 0x01000001
MAX_PAYLOAD = 1024 * 1024  # what we accept; what we send is min(ours, the host's)
MAX_PAYLOAD_V1 = 4 * 1024

HEADER = struct.Struct("<6I")
NAMES = {A_SYNC: "SYNC", A_CNXN: "CNXN", A_OPEN: "OPEN", A_OKAY: "OKAY", A_CLSE: "CLSE",
         A_WRTE: "WRTE", A_AUTH: "AUTH", A_STLS: "STLS"}


class PacketError(Exception):
    """A malformed message: the connection that sent it is closed."""


@dataclass(frozen=True)
class Packet:
    command: int
    arg0: int
    arg1: int
    data: bytes = b""

    @property
    def name(self) -> str:
        return NAMES.get(self.command, f"0x{self.command:08x}")

    def encode(self) -> bytes:
        return HEADER.pack(self.command, self.arg0, self.arg1, len(self.data), checksum(self.data),
                           self.command ^ 0xFFFFFFFF) + self.data

    def __repr__(self) -> str:
        return f"Packet({self.name}, {self.arg0}, {self.arg1}, {self.data[:40]!r}{'…' if len(self.data) > 40 else ''})"


def checksum(data: bytes) -> int:
    return sum(data) & 0xFFFFFFFF


@dataclass(frozen=True)
class Header:
    command: int
    arg0: int
    arg1: int
    length: int
    check: int

    @classmethod
    def parse(cls, raw: bytes, max_payload: int) -> Header:
        if len(raw) != HEADER.size:
            raise PacketError(f"short header ({len(raw)} bytes)")
        command, arg0, arg1, length, check, magic = HEADER.unpack(raw)
        if command not in NAMES:
            raise PacketError(f"unknown command 0x{command:08x}")
        if magic != command ^ 0xFFFFFFFF:
            raise PacketError(f"bad magic for {NAMES[command]}: 0x{magic:08x}")
        if length > max_payload:
            raise PacketError(f"{NAMES[command]} payload of {length} bytes exceeds the limit {max_payload}")
        return cls(command, arg0, arg1, length, check)

    def packet(self, data: bytes, *, verify_checksum: bool) -> Packet:
        if verify_checksum and self.check != checksum(data):
            raise PacketError(f"bad checksum for {NAMES[self.command]}")
        return Packet(self.command, self.arg0, self.arg1, data)


def banner(props: dict[str, str], features: tuple[str, ...]) -> bytes:
    """``device::ro.product.name=…;ro.product.model=…;ro.product.device=…;features=…``."""
    keys = ("ro.product.name", "ro.product.model", "ro.product.device")
    parts = [f"{k}={props.get(k, '')}" for k in keys]
    parts.append("features=" + ",".join(features))
    return ("device::" + ";".join(parts)).encode()
