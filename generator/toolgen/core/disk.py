"""Many small file-system calls at once: each fsync, and each freeing of a file's blocks, waits on the disk,
and the disk serves waits that come together in one go (a journal commit, a batch of discards).

Where Linux can flush a whole file system in one call (syncfs, which reports write-back errors since Linux 5.8),
that one call stands for the fsync of each of many files and folders: one wait, and no thread per file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

# Enough waits in flight for the disk to batch them; more threads measured no faster.
THREADS = 8
# The first Linux whose syncfs reports the write-back errors an fsync would (a full disk, a failing device).
_SYNCFS_REPORTS = (5, 8)
# Local file systems whose syncfs writes back every file and commits their metadata, as an fsync of each would.
_SYNCFS_FLUSHES = frozenset({"ext3", "ext4", "xfs", "btrfs", "f2fs", "tmpfs"})


def named(error: OSError, path: Path) -> OSError:
    """`error`, naming `path` when it names no file (a full disk refuses a write, a flush or an fsync so)."""
    return error if error.filename is not None else OSError(error.errno, error.strerror, str(path))


def fsync_file(path: Path) -> None:
    """Flush the file at `path` to disk; an OSError names it."""
    try:
        descriptor = os.open(path, os.O_RDWR)  # Windows flushes only a handle open for writing
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
    except OSError as error:
        raise named(error, path) from error


def moved(source: Path | str, target: Path | str) -> None:
    """os.replace(source, target); across two mounts of one file system (a bind mount, a container volume), where
    a rename fails with EXDEV though both report the same device, a copy made beside the target replaces it.

    Either way the target is the old file or the whole new one, and repeating the move after a kill is safe: the
    source goes only once the target holds it.
    """
    try:
        os.replace(source, target)
    except OSError as error:
        if error.errno != errno.EXDEV:
            raise
        source, target = Path(source), Path(target)
        beside = target.with_name(f".{target.name}.toolgen-copy")
        shutil.copyfile(source, beside)
        shutil.copymode(source, beside)
        fsync_file(beside)
        os.replace(beside, target)
        source.unlink()


def fsync_folder(path: Path) -> None:
    """Flush a folder's entries to disk, where the platform can (Windows cannot open a folder)."""
    with contextlib.suppress(OSError):
        descriptor = os.open(path, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def _syncfs(path: Path) -> Callable[[int], int] | None:
    """libc's syncfs, where it reports write-back errors (Linux 5.8 on) and `path` is on a local file system that
    flushes for it; None elsewhere (a FUSE or network file system may take it for less than an fsync of each)."""
    if not sys.platform.startswith("linux") or _file_system(path) not in _SYNCFS_FLUSHES:
        return None
    try:
        release = tuple(int(part) for part in os.uname().release.split("-")[0].split(".")[:2])
        import ctypes

        function: Callable[[int], int] = ctypes.CDLL(None, use_errno=True).syncfs
    except (ValueError, OSError, AttributeError):
        return None
    return function if release >= _SYNCFS_REPORTS else None


def _file_system(path: Path) -> str:
    """The type of the file system `path` is on, from the mount table (the longest mount point above it); '' when
    it cannot be told."""
    try:
        mounts = Path("/proc/self/mounts").read_text(encoding="utf-8", errors="replace").splitlines()
        where = os.path.realpath(path)
    except (OSError, ValueError):
        return ""
    found, longest = "", -1
    for line in mounts:
        fields = line.split()
        if len(fields) < 3:
            continue
        # the table escapes spaces and the like in a mount point as octal: \040
        point = re.sub(r"\\([0-7]{3})", lambda escaped: chr(int(escaped.group(1), 8)), fields[1])
        inside = where == point or where.startswith(point.rstrip("/") + "/")
        if inside and len(point) > longest:
            found, longest = fields[2], len(point)
    return found


def sync_file_system(path: Path) -> bool:
    """Flush the whole file system `path` is on to disk: every file and folder written there so far is then as
    durable as an fsync of each would make it. False where the platform cannot (nothing was flushed); an OSError
    when the file system reports a failed write."""
    syncfs = _syncfs(path)
    if syncfs is None:
        return False
    import ctypes

    descriptor = os.open(path, os.O_RDONLY)
    try:
        if syncfs(descriptor) != 0:
            number = ctypes.get_errno()
            raise OSError(number, os.strerror(number), str(path))
    finally:
        os.close(descriptor)
    return True


def fsync_folders(folders: Iterable[Path]) -> None:
    """Flush the entries of `folders` (all on one file system): one syncfs where there is one, else each folder."""
    listed = list(folders)
    if len(listed) > 1 and sync_file_system(listed[0]):
        return
    for folder in listed:
        fsync_folder(folder)


@contextlib.contextmanager
def syncing(files: Iterable[Path], folders: Iterable[Path]) -> Iterator[Callable[[], None]]:
    """Flush `files` and `folders` (all on one file system) while the block runs; the block calls what it is given
    to wait for them and raise the first refusal. One fsync after another waits for the disk once per file (the
    163 files of a small package took 0.8 s so on a busy disk, 0.08 s at once): one syncfs where there is one, in a
    thread, else an fsync each, in a few threads."""
    files, folders = list(files), list(folders)
    anchor = folders[0] if folders else files[0].parent if files else None
    if anchor is not None and _syncfs(anchor) is not None:
        with _flushed_in_thread(anchor) as synced:
            yield synced
        return
    with ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="toolgen-fsync") as pool:
        pending = [pool.submit(fsync_file, path) for path in files]
        pending.extend(pool.submit(fsync_folder, folder) for folder in folders)

        def synced() -> None:
            for future in pending:
                future.result()

        try:
            yield synced
        finally:
            for future in pending:
                future.cancel()


@contextlib.contextmanager
def _flushed_in_thread(anchor: Path) -> Iterator[Callable[[], None]]:
    """sync_file_system(anchor) in a thread while the block runs; what the block is given waits for it."""
    failed: list[OSError] = []

    def flush() -> None:
        try:
            sync_file_system(anchor)
        except OSError as error:
            failed.append(named(error, anchor))

    worker = threading.Thread(target=flush, name="toolgen-syncfs", daemon=True)
    worker.start()

    def synced() -> None:
        worker.join()
        if failed:
            raise failed[0]

    try:
        yield synced
    finally:
        worker.join()  # a block that raised leaves no flush behind it


def remove_files(files: Sequence[Path | str]) -> None:
    """Unlink `files` a few at once (THREADS threads, each a share of them in turn: a task a file cost more than
    the unlink); one already gone is no error."""
    if len(files) == 1:
        _unlink(files[0])
    elif files:
        shares = [files[start::THREADS] for start in range(min(THREADS, len(files)))]
        with ThreadPoolExecutor(max_workers=len(shares), thread_name_prefix="toolgen-remove") as pool:
            for future in [pool.submit(_unlink_all, share) for share in shares]:
                future.result()


def remove_tree(folder: Path) -> None:
    """shutil.rmtree, with the files unlinked a few at once first; symlinks are removed, never followed."""
    remove_files([os.path.join(top, name) for top, _, names in os.walk(folder) for name in names])
    shutil.rmtree(folder)


def _unlink_all(paths: Sequence[Path | str]) -> None:
    for path in paths:
        _unlink(path)


def _unlink(path: Path | str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
