"""Bytes of a UI dump to text: BOMs first, then the XML declaration's ``encoding``, then UTF-8.

What devices and tools write: UTF-8 (with or without a BOM), UTF-16/32 with a BOM (Windows
editors, PowerShell redirection), UTF-16 without one (recognised by the ``<`` of the document, as
XML 1.0 appendix F does), and legacy encodings named in the declaration (``Shift_JIS``, ``GBK``,
``EUC-KR``, ``ISO-8859-1`` …).  Bytes that do not decode are replaced with U+FFFD *and reported*
in a warning that says how many and where the first one is, never silently.
"""

from __future__ import annotations

import codecs
import re

__all__ = ["decode_dump"]

_BOMS = (  # longest first: the UTF-32-LE BOM starts with the UTF-16-LE one
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# First bytes of a document without a BOM that is not ASCII-compatible (XML 1.0 appendix F).
_NO_BOM = (
    (re.compile(rb"\A\x00\x00\x00[\x09\x0a\x0d\x20\x3c]"), "utf-32-be"),
    (re.compile(rb"\A[\x09\x0a\x0d\x20\x3c]\x00\x00\x00"), "utf-32-le"),
    (re.compile(rb"\A\x00[\x09\x0a\x0d\x20\x3c]"), "utf-16-be"),
    (re.compile(rb"\A[\x09\x0a\x0d\x20\x3c]\x00"), "utf-16-le"),
)
_DECLARED = re.compile(rb"\A\s*<\?xml[^>]*?\bencoding\s*=\s*[\"']([A-Za-z0-9._:-]{1,40})[\"']")
_WIDE = ("utf-16", "utf-32", "utf_16", "utf_32")


def _codec(name: str) -> str | None:
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def _strict(data: bytes, encoding: str) -> str | None:
    try:
        return data.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        return None


def _lenient(data: bytes, encoding: str, warnings: list[str]) -> str:
    """Decode, replacing bad bytes with U+FFFD, and say so."""
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        text = data.decode(encoding, errors="replace")
        bad = text.count("\ufffd") - data.decode(encoding, errors="ignore").count("\ufffd")
        warnings.append(
            f"input is not valid {encoding}: {max(bad, 1)} undecodable byte sequence(s) replaced with "
            f"U+FFFD (first at byte {exc.start})"
        )
        return text


def _declared(data: bytes, warnings: list[str]) -> str | None:
    match = _DECLARED.match(data[:400])
    if match is None:
        return None
    name = match.group(1).decode("ascii")
    codec = _codec(name)
    if codec is None:
        warnings.append(f"unknown encoding {name!r} in the XML declaration; decoding as UTF-8")
        return None
    if codec.startswith(_WIDE):
        # The declaration itself was readable as ASCII, so the bytes are not UTF-16/32.
        warnings.append(f"the XML declaration says {name!r} but the bytes are not; decoding as UTF-8")
        return None
    return codec


def decode_dump(data: bytes, warnings: list[str]) -> str:
    """Text of a dump given as bytes.  Never raises; problems are appended to ``warnings``."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return _lenient(data[len(bom) :], encoding, warnings)
    for pattern, encoding in _NO_BOM:
        if pattern.match(data):
            return _lenient(data, encoding, warnings)
    declared = _declared(data, warnings)
    if declared is not None and declared != "utf-8":
        text = _strict(data, declared)
        if text is not None:
            return text
        utf8 = _strict(data, "utf-8")
        if utf8 is not None:
            warnings.append(
                f"the XML declaration says {declared!r} but the bytes are UTF-8; decoded as UTF-8"
            )
            return utf8
        return _lenient(data, declared, warnings)
    return _lenient(data, "utf-8", warnings)
