"""Content-addressed blob store: ``root/ab/<sha256>`` where ``ab`` are the hash's first two hex digits.

Writes are crash-safe: bytes go to a temp file in the destination directory and are then renamed
into place with ``os.replace`` (atomic on POSIX and Windows), so a blob file is either absent or
complete, whenever the process dies. ``fsync`` (durability across power loss, like SQLite's
``synchronous=FULL``) costs milliseconds per blob on the per-step path, so it is opt-in:
``BlobStore(root, fsync=True)`` or ``ARTEMIS_FSYNC=1``. Identical bytes are stored once (the write is skipped when the file exists).
Leftover ``.tmp-*`` files from a crash are never referenced and can be deleted at any time.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

from .errors import BlobMissing

_SHA_RE = re.compile(r"^[0-9a-f]{64}$")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def is_sha256(value: object) -> bool:
    return isinstance(value, str) and bool(_SHA_RE.match(value))


class BlobStore:
    def __init__(self, root: Path, *, fsync: bool | None = None, create: bool = True) -> None:
        self.root = Path(root)
        if create:
            self.root.mkdir(parents=True, exist_ok=True)
        self.fsync = bool(os.environ.get("ARTEMIS_FSYNC")) if fsync is None else fsync

    def path(self, sha: str) -> Path:
        if not is_sha256(sha):
            raise BlobMissing(f"not a SHA-256 blob reference: {sha!r}")
        return self.root / sha[:2] / sha

    def exists(self, sha: str) -> bool:
        return is_sha256(sha) and self.path(sha).is_file()

    def put(self, data: bytes) -> str:
        """Store ``data`` (once) and return its SHA-256 hex digest."""
        if not isinstance(data, bytes | bytearray | memoryview):
            raise TypeError(f"blob data must be bytes, not {type(data).__name__}")
        data = bytes(data)
        sha = sha256_hex(data)
        final = self.path(sha)
        if final.is_file():
            return sha
        final.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=".tmp-", dir=final.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                if self.fsync:
                    handle.flush()
                    os.fsync(handle.fileno())
            os.chmod(tmp_name, 0o644)
            os.replace(tmp_name, final)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)
            raise
        if self.fsync:
            _fsync_dir(final.parent)
        return sha

    def get(self, sha: str) -> bytes:
        path = self.path(sha)
        try:
            return path.read_bytes()
        except FileNotFoundError:
            raise BlobMissing(
                f"blob {sha[:12]}… is missing from {self.root}",
                hint="the data dir is incomplete; `artemis doctor` checks it",
            ) from None

    def verify(self, sha: str) -> bool:
        """True when the blob exists and its content still hashes to ``sha``."""
        return self.exists(sha) and sha256_hex(self.path(sha).read_bytes()) == sha

    def __iter__(self) -> Iterator[str]:
        """Every stored blob hash (temp files excluded)."""
        if not self.root.is_dir():
            return
        for shard in sorted(self.root.iterdir()):
            if shard.is_dir() and len(shard.name) == 2:
                for item in sorted(shard.iterdir()):
                    if is_sha256(item.name):
                        yield item.name


def _fsync_dir(directory: Path) -> None:
    """Make the rename durable. Not possible on Windows; harmless to skip there."""
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
