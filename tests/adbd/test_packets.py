"""ADB message framing: header layout, magic, checksum, payload limit, banner."""

from __future__ import annotations

import struct

import pytest

from artemis_cli.sim.adbd.packets import (
    A_CNXN,
    A_OPEN,
    A_WRTE,
    HEADER,
    Header,
    Packet,
    PacketError,
    banner,
    checksum,
)


def test_encode_layout_is_little_endian_with_magic_and_byte_sum() -> None:
    raw = Packet(A_WRTE, 7, 9, b"\x01\x02\xff").encode()
    cmd, a0, a1, n, check, magic = struct.unpack("<6I", raw[:24])
    assert (cmd, a0, a1, n, check) == (A_WRTE, 7, 9, 3, 0x102)
    assert magic == A_WRTE ^ 0xFFFFFFFF
    assert raw[:4] == b"WRTE" and raw[24:] == b"\x01\x02\xff"


def test_parse_round_trip_and_checksum_verification() -> None:
    p = Packet(A_OPEN, 3, 0, b"shell:ls\0")
    raw = p.encode()
    h = Header.parse(raw[:24], 4096)
    assert h.packet(raw[24:], verify_checksum=True) == p
    with pytest.raises(PacketError, match="checksum"):
        h.packet(b"shell:lx\0", verify_checksum=True)


@pytest.mark.parametrize("raw,msg", [
    (HEADER.pack(A_CNXN, 0, 0, 0, 0, 0), "magic"),
    (HEADER.pack(0x12345678, 0, 0, 0, 0, 0x12345678 ^ 0xFFFFFFFF), "unknown command"),
    (HEADER.pack(A_WRTE, 1, 1, 10_000, 0, A_WRTE ^ 0xFFFFFFFF), "exceeds"),
    (b"CNXN", "short"),
])
def test_malformed_headers_are_rejected(raw: bytes, msg: str) -> None:
    with pytest.raises(PacketError, match=msg):
        Header.parse(raw, 4096)


def test_banner_names_product_model_device_and_features() -> None:
    b = banner({"ro.product.name": "n", "ro.product.model": "M 1", "ro.product.device": "d"}, ("a", "b"))
    assert b == b"device::ro.product.name=n;ro.product.model=M 1;ro.product.device=d;features=a,b"
    assert checksum(b"\xff" * 3) == 765
