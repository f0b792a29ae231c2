"""Payload files as validate reads them: plain or gzip-compressed (`.jsonl.gz`), told apart by name alone.

A UTF-8 byte order mark that starts a file is skipped wherever the file is read (RFC 8259 section 8.1 lets a
parser ignore one; the build reads its inputs so), and line:col count from after it, as editors show them.
"""

from __future__ import annotations

import io
import zlib
from pathlib import Path
from typing import IO, cast

COMPRESSED = ".gz"
BOM = b"\xef\xbb\xbf"
# What reading a payload file can raise besides a bad record: the disk's refusals, text that is not UTF-8,
# and a compressed file that is cut short (EOFError) or corrupt (zlib.error, gzip.BadGzipFile).
UNREADABLE: tuple[type[Exception], ...] = (OSError, UnicodeDecodeError, EOFError, zlib.error)
# A compressed log is about this many times smaller than its records: it decides when to start workers.
_EXPECTED_RATIO = 8


def is_compressed(path: Path) -> bool:
    return path.suffix.lower() == COMPRESSED


def payload_suffix(path: Path) -> str:
    """The suffix that says what the file holds, lower-cased: `.jsonl` for both `a.jsonl` and `a.JSONL.gz`."""
    return Path(path.stem).suffix.lower() if is_compressed(path) else path.suffix.lower()


def open_binary(path: Path) -> IO[bytes]:
    """The file's bytes, from after a byte order mark that starts it."""
    if is_compressed(path):
        import gzip  # only for a compressed file

        handle = cast(IO[bytes], gzip.open(path, "rb"))  # noqa: SIM115 - the caller closes it
    else:
        handle = path.open("rb")  # noqa: SIM115 - the caller closes it
    try:
        if handle.read(len(BOM)) != BOM:
            handle.seek(0)
    except BaseException:
        handle.close()
        raise
    return handle


def open_text(path: Path) -> IO[str]:
    """UTF-8 text, strict, with line endings as they are (a record's column counts them)."""
    return io.TextIOWrapper(open_binary(path), encoding="utf-8", errors="strict", newline="")


def read_all(path: Path) -> bytes:
    with open_binary(path) as handle:
        return handle.read()


def expected_size(path: Path) -> int:
    """Bytes of records the file holds: its size, or a guess for a compressed one."""
    size = path.stat().st_size
    return size * _EXPECTED_RATIO if is_compressed(path) else size


def undecodable_at(path: Path) -> tuple[int, int, str] | None:
    """Line, column (in bytes, from 1) and reason of the first byte of `path` that starts no UTF-8 character."""
    with open_binary(path) as handle:
        for number, line in enumerate(handle, 1):  # a newline byte is never inside a UTF-8 character
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as error:
                return number, error.start + 1, unreadable_reason(error)
    return None


def unreadable_reason(error: Exception) -> str:
    if isinstance(error, UnicodeDecodeError):
        byte = bytes(error.object[error.start : error.start + 1]).hex()
        return f"not UTF-8 text: byte 0x{byte} starts no UTF-8 character (save the file as UTF-8)"
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    if isinstance(error, (EOFError, zlib.error)):
        return f"the compressed file is cut short or corrupt ({error})"
    return str(error)
