"""The file a command writes with -o/--output: whole or not at all, and the file system's refusal named."""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from pathlib import Path

from toolgen.api import EnvironmentProblem

_ADVICE = {
    errno.ENOENT: "its folder does not exist: create it first",
    errno.ENOTDIR: "a file stands where its folder goes",
    errno.EISDIR: "it is a folder: name a file",
    errno.EACCES: "permission denied: choose a folder you can write",
    errno.EPERM: "permission denied: choose a folder you can write",
    errno.EROFS: "the file system is read-only: choose a writable folder",
    errno.ENOSPC: "the disk is full: free some space",
}


def write_output(path: Path, text: str) -> None:
    """Write `text` to `path` through a file beside it, so a full disk or a kill never leaves half of it."""
    temporary: str | None = None
    try:
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.chmod(temporary, _mode_of(path))
        os.replace(temporary, path)
    except OSError as error:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        advice = _ADVICE.get(error.errno or 0, "check that its folder exists and is writable")
        raise EnvironmentProblem(f"cannot write {path}: {error.strerror or error}; {advice}") from None


def _mode_of(path: Path) -> int:
    """The mode the file keeps, or a new file's (mkstemp makes it private to its owner)."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0o22)
        os.umask(umask)
        return 0o666 & ~umask
