"""File stamps: a file's size, modification and change times and inode, standing for its content while unchanged.

Reading and hashing every file of a large package costs `check` more than the rest of its start. As git's index
does, a result computed from files is kept with their stamps, and believed again only while every stamp is the
same. A write changes the change time (which no program can set back), so an edit is seen even when it keeps the
size and the modification time (not on Windows, whose st_ctime is the creation time: an edit there that sets the
modification time back is not seen; `check --full` trusts no stamp). A file written just before its stamp was
taken could change again within the same clock tick without its stamp changing: a result whose files were not
all older than a margin when it was computed is not kept (the next run computes it again, and keeps it then).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from toolgen.core.digests import digest

# Longer than any file system's timestamp granularity (FAT's 2 s) and the clock's steps between processes.
MARGIN_NS = 3_000_000_000

Stamp = tuple[int, int, int, int]


def stamp(path: str) -> Stamp | None:
    """(size, mtime_ns, ctime_ns, inode) of the file `path` leads to; None when there is none."""
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return None
    return (found.st_size, found.st_mtime_ns, found.st_ctime_ns, found.st_ino)


def settled(stamps: Iterable[Stamp | None], started_ns: int) -> bool:
    """Whether every file was last written well before `started_ns` (time.time_ns() before anything was read)."""
    limit = started_ns - MARGIN_NS
    return all(found is None or (found[1] < limit and found[2] < limit) for found in stamps)


def fingerprint(parts: Any) -> str:
    """One digest of JSON data (stamps and whatever else a kept result depends on)."""
    return digest(json.dumps(parts, separators=(",", ":")).encode())


def read_kept(file: Path) -> Any:
    """What `keep` wrote to `file`, or None."""
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def keep(file: Path, data: Any) -> None:
    """Write `data` as JSON, replacing `file` at once; a cache that cannot be written is only slower."""
    staged = file.with_name(f".{file.name}.{os.getpid()}")
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        staged.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
        os.replace(staged, file)
    except (OSError, TypeError, ValueError):
        with contextlib.suppress(OSError):
            staged.unlink(missing_ok=True)
