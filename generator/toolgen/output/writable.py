"""Before a build's commit point: every folder its commit writes in, deletes from or creates is writable.

A commit that meets a read-only folder half way leaves old and new files mixed until the next build finishes it, so
the write asks the file system first (access(2), which knows permissions, ACLs and read-only mounts, and writes
nothing) and refuses with the error the commit would have met, before anything is staged.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from pathlib import Path

_WRITE = os.W_OK | os.X_OK


def refuse_unwritable(package_dir: Path, names: Iterable[str], beside: Iterable[str] = ()) -> None:
    """Raise the OSError (naming the folder or file) that replacing or deleting package-relative `names`, and the
    output folder's `beside` names, would meet; return when the commit can make every change it plans."""
    targets: dict[str, list[str]] = {}
    for base, relative in ((str(package_dir), names), (str(package_dir.parent), beside)):
        for name in relative:
            target = os.path.join(base, name)
            targets.setdefault(os.path.dirname(target), []).append(target)
    checked: set[str] = set()
    for folder in sorted(targets):
        existing = _nearest_folder(folder)
        if existing is None or existing in checked:
            continue
        checked.add(existing)
        if not _may_write(existing):
            code = errno.EROFS if _read_only(existing) else errno.EACCES
            raise OSError(code, os.strerror(code), existing)
        if existing == folder:
            _refuse_sticky(folder, targets[folder])


def _nearest_folder(folder: str) -> str | None:
    """`folder` or, when it is still to be made, the nearest folder above it (which the commit writes in); None
    when a file stands in the way, which the commit's own checks name."""
    while True:
        try:
            mode = os.stat(folder).st_mode
        except FileNotFoundError:
            parent = os.path.dirname(folder)
            if parent == folder:
                return None
            folder = parent
            continue
        except OSError:
            return None
        return folder if stat.S_ISDIR(mode) else None


def _may_write(folder: str) -> bool:
    effective = os.access in os.supports_effective_ids
    return os.access(folder, _WRITE, effective_ids=effective)


def _read_only(folder: str) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # pragma: no cover - no statvfs (Windows)
        return False


def _refuse_sticky(folder: str, targets: list[str]) -> None:
    """In a sticky folder (mode +t, such as /tmp) only a file's owner, the folder's owner or root may replace or
    delete the file: one another user owns stops the commit as EPERM."""
    geteuid = getattr(os, "geteuid", None)
    if geteuid is None:  # pragma: no cover - Windows has no sticky folders
        return
    user = geteuid()
    info = os.stat(folder)
    if user == 0 or info.st_uid == user or not info.st_mode & stat.S_ISVTX:
        return
    for target in targets:
        try:
            owner = os.lstat(target).st_uid
        except OSError:
            continue
        if owner != user:
            raise OSError(errno.EPERM, os.strerror(errno.EPERM), target)
