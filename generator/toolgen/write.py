"""Write stage: the whole package appears at once or not at all (staging directory, then rename)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path


def _previous(package_dir: Path) -> Path:
    return package_dir.parent / f".{package_dir.name}.previous"


def recover(package_dir: Path) -> None:
    """Finish or undo a write that was killed between its two renames."""
    previous = _previous(package_dir)
    if previous.exists():
        if package_dir.exists():
            shutil.rmtree(previous)
        else:
            os.rename(previous, package_dir)
    for stale in package_dir.parent.glob(f".{package_dir.name}.staging-*"):
        shutil.rmtree(stale, ignore_errors=True)


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        descriptor = os.open(path, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def write_package(package_dir: Path, files: Mapping[str, str], manifest_name: str, manifest: str) -> None:
    """Write `files` then the manifest into a staging directory and swap it in for `package_dir`."""
    package_dir.parent.mkdir(parents=True, exist_ok=True)
    recover(package_dir)
    staging = Path(tempfile.mkdtemp(prefix=f".{package_dir.name}.staging-", dir=package_dir.parent))
    previous = _previous(package_dir)
    try:
        os.chmod(staging, 0o755)
        for name in sorted(files):
            _write_file(staging / name, files[name])
        _write_file(staging / manifest_name, manifest)  # last: its presence means the tree is complete
        _fsync_dir(staging)
        if package_dir.exists():
            os.rename(package_dir, previous)
        os.rename(staging, package_dir)
        _fsync_dir(package_dir.parent)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if previous.exists() and not package_dir.exists():
            os.rename(previous, package_dir)
        raise
    shutil.rmtree(previous, ignore_errors=True)


def _write_file(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
