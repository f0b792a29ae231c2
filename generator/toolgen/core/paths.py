"""Paths as users see them: relative to the project root, and resolved without failing on a dangling link."""

from __future__ import annotations

import os
from pathlib import Path


def display_path(root: Path, path: Path) -> str:
    """A path as users see it: relative to the project root, even when it lies outside (`../shared/x.yaml`)."""
    return Path(os.path.relpath(resolved(path), resolved(root))).as_posix()


def resolved(path: Path) -> Path:
    """`path` resolved; only made absolute when it is a link that leads nowhere (dangling, or in a loop, where
    resolve() raises), so that it is named as the link the user gave, not as the file it misses."""
    try:
        if not (path.is_symlink() and not path.exists()):
            return path.resolve()
    except (OSError, RuntimeError):
        pass
    return Path(os.path.abspath(path))
