"""Write stage: whose files a package holds (toolgen's, the user's zone, foreign ones) and writing it all or nothing.

A build stages every new file in the package's work folder (toolgen's own, outside the output folder and on its
file system: see `work_dir_for`) and the plan of its commit, lets the caller check the package while they are
flushed to disk (all at once: disk.syncing), then renames the staging tree to `commit` there: that rename is the
commit point. Applying a commit deletes the files the old manifest listed and the new one does not, moves each new
file over its old one (os.replace) and the manifest last, flushes that, then removes the commit tree. Applying is idempotent, so `recover` finishes a commit a kill interrupted, and before the commit point
nothing under the output folder has changed: a kill there leaves only a staging tree in the work folder, which
the next build or `recover` deletes. The user zone (`ext/` and `keep:` paths) is never read, moved, written or
deleted.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import signal
import stat
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple
from urllib.parse import quote

from toolgen.core.diagnostics import Diagnostic, Severity
from toolgen.core.disk import fsync_folder, fsync_folders, moved, named, remove_tree, syncing
from toolgen.core.errors import ForeignFilesError, ForeignOutputError, InterruptedAfterCommit
from toolgen.output.writable import refuse_unwritable
from toolgen.project.config import USER_DIR, Config, display_path
from toolgen.project.manifest import MANIFEST_NAME, read_manifest, text_digest

_PLAN = "plan.json"
_TREE = "tree"
_COMMIT = "commit"
_STAGING = "staging-"
_REMOVING = "removing"
_BESIDE = "beside"  # files of the output folder next to the package
_ASIDE = "replaced"  # in a commit being applied: links to the files it replaced
_BYTECODE = "__pycache__"
_WORK = "write"
# What toolgen before the work folder left beside the package in the output folder; `recover` still clears it.
_LEGACY = (".commit", ".previous", ".removing", ".staging-*")


class CommitPending(Exception):
    """An OSError past the commit point: the new package is committed and `recover` (the next build) finishes it.

    `new` holds the paths of the files the commit had changed (or deleted), `old` those it had not reached yet
    (still as before, not there yet, or still there for a file it deletes); both empty when not known.
    """

    def __init__(self, error: OSError, new: Sequence[str] = (), old: Sequence[str] = ()) -> None:
        super().__init__(str(error))
        self.error = error
        self.new = tuple(new)
        self.old = tuple(old)


def _reached(step: str) -> None:
    """A named point of the write; tests stop a build at each one to prove a kill there is recoverable."""


def work_dir_for(scratch: Path, root: Path, package_dir: Path) -> Path:
    """Where the build of `package_dir` stages and commits: under toolgen's `scratch` folder when that shares a
    file system with the output folder (renames cannot cross one), else beside the output folder, else (the
    output folder is a mount point) inside it."""
    key = quote(display_path(root, package_dir), safe="")
    output = package_dir.parent
    for candidate in (scratch / _WORK, output.parent / f".{output.name}.toolgen-write", output / ".toolgen-write"):
        if _device(candidate) == _device(output):
            return candidate / key
    return scratch / _WORK / key  # pragma: no cover - the last candidate is on the output's file system


def _device(path: Path) -> int:
    """The file system `path` is (or would be created) on: that of its nearest existing folder."""
    for folder in (path, *path.parents):
        with contextlib.suppress(OSError):
            return folder.stat().st_dev
    return -1  # pragma: no cover - the root folder always exists


def _legacy(package_dir: Path, suffix: str) -> Path:
    return package_dir.parent / f".{package_dir.name}{suffix}"


def in_zone(name: str, zone: Iterable[str]) -> bool:
    """True when package-relative `name` is a zone path or lies under one."""
    return any(name == path or name.startswith(path + "/") for path in zone)


def recover(package_dir: Path, work_dir: Path) -> None:
    """Finish a commit a kill interrupted; drop staging trees of builds killed before their commit point, and what
    toolgen before the work folder left beside the package."""
    for commit in (work_dir / _COMMIT, _legacy(package_dir, ".commit")):
        if (commit / _PLAN).is_file():
            try:
                _apply(commit, package_dir)
            except OSError as error:  # an earlier build's commit: its package is still half old, half new
                raise CommitPending(error) from error
        elif commit.exists():  # a plan is written before the rename that makes a commit: a staging tree
            remove_tree(commit)
    previous = _legacy(package_dir, ".previous")
    if previous.exists():
        if package_dir.exists():
            shutil.rmtree(previous)
        else:
            os.rename(previous, package_dir)
    stale = [*work_dir.glob(f"{_STAGING}*"), *package_dir.parent.glob(f".{package_dir.name}.staging-*")]
    for folder in [*stale, work_dir / _REMOVING, _legacy(package_dir, ".removing")]:
        if folder.exists():
            remove_tree(folder)
    with contextlib.suppress(OSError):  # an empty work folder is no leftover; a full one is someone's build
        work_dir.rmdir()


def leftovers(package_dir: Path, work_dir: Path) -> list[str]:
    """What a build killed past its commit point, or toolgen before the work folder, left to finish or clear:
    `check` reports them, the next build recovers them. A staging tree in the work folder is no leftover: nothing
    under the output folder depends on it."""
    found = [work_dir / _COMMIT] if (work_dir / _COMMIT / _PLAN).is_file() else []
    for suffix in _LEGACY:
        found.extend(sorted(package_dir.parent.glob(f".{package_dir.name}{suffix}")))
    return [str(path) for path in found]


@contextlib.contextmanager
def locked(lock_file: Path) -> Iterator[None]:
    """One build at a time per project: another build's staging tree is not stale."""
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_file, "a+b") as handle:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows has no flock; builds there are not serialized
            yield
            return
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def package_entries(package_dir: Path, zone: Iterable[str] = ()) -> list[str]:
    """Every file (or symlink, or other non-directory) under `package_dir` outside `zone` and `__pycache__`.

    Symlinked directories are entries, not followed: what they point to is not the package's.
    """
    zone = tuple(zone)
    found: list[str] = []
    if not package_dir.is_dir():
        return found
    for top, folders, names in os.walk(package_dir):
        base = Path(top).relative_to(package_dir).as_posix()
        prefix = "" if base == "." else base + "/"
        for folder in list(folders):
            name = prefix + folder
            if folder == _BYTECODE or in_zone(name, zone):
                folders.remove(folder)
            elif (Path(top) / folder).is_symlink():
                folders.remove(folder)
                found.append(name)
        found.extend(prefix + name for name in names if not in_zone(prefix + name, zone))
    return sorted(found)


def _same_text(path: Path, hashed: str) -> bool:
    try:
        return text_digest(path.read_text(encoding="utf-8")) == hashed
    except (OSError, UnicodeDecodeError):
        return False


def recorded_files(package_dir: Path) -> dict[str, str]:
    """The files (and their hashes) the package's manifest says toolgen wrote; none without a readable one."""
    files = (read_manifest(package_dir) or {}).get("files")
    if not isinstance(files, dict):
        return {}
    return {str(name): str(hashed) for name, hashed in files.items() if _safe_name(str(name))}


def _safe_name(name: str) -> bool:
    """A manifest is a file in the user's tree: a name in it that leaves the package must never be deleted."""
    parts = name.split("/")
    return bool(name) and not name.startswith("/") and "\\" not in name and not {"", ".", ".."} & set(parts)


def foreign_entries(package_dir: Path, files: Mapping[str, str], zone: Iterable[str]) -> list[str]:
    """What a build into `package_dir` would overwrite or delete that toolgen did not write: neither listed in
    the package's manifest, in the user zone, nor already exactly what the build writes there.

    A directory where a generated file goes counts too (`models.py/`), since os.replace cannot put a file there.
    """
    if package_dir.exists() and not package_dir.is_dir():
        raise ForeignOutputError(f"{package_dir} is a file, not a package directory; move it away, nothing was written")
    recorded = recorded_files(package_dir)
    foreign = []
    for name in package_entries(package_dir, zone):
        if name == MANIFEST_NAME or name in recorded:
            continue
        if name in files and _same_text(package_dir / name, text_digest(files[name])):
            continue
        foreign.append(name)
    foreign.extend(f"{name}/" for name in files if (package_dir / name).is_dir())
    return sorted(foreign)


def unowned_entries(package_dir: Path) -> list[str]:
    """Files of a package toolgen means to remove that are not exactly as its manifest records them."""
    recorded = recorded_files(package_dir)
    return [
        name
        for name in package_entries(package_dir)
        if name != MANIFEST_NAME and not (name in recorded and _same_text(package_dir / name, recorded[name]))
    ]


def foreign_findings(config: Config, names: Iterable[str]) -> list[Diagnostic]:
    """One error per `foreign_entries` name, saying where the user's files go instead."""
    prefix = display_path(config.root, config.package_dir)
    where = f"move it into {prefix}/{USER_DIR}/ or list it under `keep:` in {config.display}"
    if not (config.package_dir / MANIFEST_NAME).is_file():  # maybe no package at all: a folder of the user's
        where = f"choose another `package` or `output` in {config.display} if {prefix}/ is not the package, or {where}"
    return [
        Diagnostic(
            f"{prefix}/{name}",
            1,
            1,
            Severity.ERROR,
            "foreign-file",
            f"a folder where toolgen writes a file; {where}"
            if name.endswith("/")
            else f"toolgen did not write this file; {where} (build deletes and overwrites nothing until then)",
        )
        for name in names
    ]


def refuse_foreign(config: Config, files: Mapping[str, str], old_package: Path | None) -> None:
    """Stop a build before it writes anything when it would overwrite or delete what toolgen did not write:
    in the package, or in the old package (`old_package`) it is about to remove."""
    found = foreign_findings(config, foreign_entries(config.package_dir, files, config.user_zone))
    summary = None
    if found and not (config.package_dir / MANIFEST_NAME).is_file():
        shown = display_path(config.root, config.package_dir)
        summary = f"{shown}/ exists and was not generated by toolgen (it has no {MANIFEST_NAME})"
    if old_package is not None and (old_package / MANIFEST_NAME).is_file():
        old, new = display_path(config.root, old_package), display_path(config.root, config.package_dir)
        message = (
            f"the old package {old}/ ({config.display} now builds {new}/) holds this file, which toolgen did not "
            f"write or which changed since; move it (into {new}/{USER_DIR}/ if it is yours) so build can remove "
            "the old package"
        )
        found.extend(
            Diagnostic(f"{old}/{name}", 1, 1, Severity.ERROR, "foreign-file", message)
            for name in unowned_entries(old_package)
        )
    if found:
        raise ForeignFilesError(found, summary)


def stale_package_findings(config: Config, old_package: Path | None) -> list[Diagnostic]:
    """An error when the package an earlier build of this config wrote under another path is still there."""
    if old_package is None or not (old_package / MANIFEST_NAME).is_file():
        return []
    old, new = display_path(config.root, old_package), display_path(config.root, config.package_dir)
    message = f"{old}/ is the package an earlier build of {config.display} wrote; it now builds {new}/ and "
    message += "`toolgen build` removes the old one"
    return [Diagnostic(f"{old}/{MANIFEST_NAME}", 1, 1, Severity.ERROR, "stale-package", message)]


def remove_package(package_dir: Path, work_dir: Path) -> None:
    """Remove a package toolgen wrote (checked with `unowned_entries` first): rename it into its work folder, then
    delete it, so a kill leaves either the whole package or a `removing` tree there that `recover` deletes."""
    removing = work_dir / _REMOVING
    work_dir.mkdir(parents=True, exist_ok=True)
    os.rename(package_dir, removing)
    fsync_folder(package_dir.parent)
    _reached("renamed old package aside")
    remove_tree(removing)
    with contextlib.suppress(OSError):
        work_dir.rmdir()


class Written(NamedTuple):
    """What a write changed: files whose bytes differ (new ones included), files left as they were, deletions,
    and which of the changed or deleted files had been edited by hand since the build that wrote them."""

    changed: tuple[str, ...]
    unchanged: tuple[str, ...]
    deleted: tuple[str, ...]
    edited: tuple[str, ...] = ()


def _differs(path: str, text: str) -> bool:
    """Whether the file at `path` does not hold `text` (or is a symlink, or is not there)."""
    data = text.encode("utf-8")
    try:
        found = os.lstat(path)
        if not stat.S_ISREG(found.st_mode) or found.st_size != len(data):
            return True
        with open(path, "rb") as handle:
            return handle.read() != data
    except OSError:
        return True


def write_package(
    package_dir: Path,
    files: Mapping[str, str],
    manifest_name: str,
    manifest: str,
    zone: Sequence[str],
    work_dir: Path,
    verify: Callable[[Path, Mapping[str, str]], Callable[[], object]] | None = None,
    beside: Mapping[str, str] | None = None,
    beside_delete: Sequence[str] = (),
    rewrite_unchanged: bool = True,
    verify_reads_staged: bool = True,
) -> Written:
    """Write `files` and then the manifest into `package_dir`: all of them or, if anything fails before the
    commit point, none. Files the old manifest lists and `files` lacks are deleted; `zone` is never touched.
    `beside` (written) and `beside_delete` (deleted) are files of the output folder, next to the package, in
    the same commit (toolgen.output.beside decides which are toolgen's).

    `verify` is called before anything is staged, with the folder that is to hold the staged package (as
    `<folder>/<package_dir.name>/`) and the package's files (the manifest among them), so that it may check them
    while they are staged; it returns what waits for its verdict, called once they are staged, before the commit
    point: whatever either raises stops the write with nothing written. An OSError past the commit point
    is raised as CommitPending. The caller has checked `foreign_entries` is empty; nothing else in the
    directory is overwritten or deleted. Without `rewrite_unchanged`, a file already holding its new bytes is
    left as it is (a forced build rewrites every file). Without `verify_reads_staged` (a `verify` that reads the
    files it is given, not the staged tree), only the files the commit moves are staged.
    """
    beside = beside or {}
    every = {**files, manifest_name: manifest}
    recover(package_dir, work_dir)  # first: finishing an interrupted commit may change what differs
    base = str(package_dir)
    changed = tuple(name for name in sorted(every) if _differs(os.path.join(base, name), every[name]))
    recorded = recorded_files(package_dir)
    stale = sorted(name for name in recorded if name not in files and name != manifest_name and not in_zone(name, zone))
    # A file not as its build wrote it was edited by hand: the write replaces or deletes the edit, and says so.
    edited = tuple(
        name
        for name in sorted({*changed, *stale} - {manifest_name})
        if name in recorded
        and os.path.lexists(os.path.join(base, name))
        and not _same_text(package_dir / name, recorded[name])
    )
    # A check of the staged tree reads the whole package; the commit moves into it only what it rewrites.
    moved = [name for name in [*sorted(files), manifest_name] if rewrite_unchanged or name in changed]
    # Every folder the commit changes is writable, or the write stops here, before anything is staged.
    refuse_unwritable(package_dir, [*stale, *moved], [*beside, *beside_delete])
    work_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=_STAGING, dir=work_dir))
    commit = work_dir / _COMMIT
    tree = f"{_TREE}/{package_dir.name}"
    staged = {f"{tree}/{name}": every[name] for name in (every if verify_reads_staged else moved)}
    staged.update((f"{_BESIDE}/{name}", beside[name]) for name in beside)
    durable = [*(f"{tree}/{name}" for name in moved), *(f"{_BESIDE}/{name}" for name in sorted(beside))]
    plan = {"delete": stale, "tree": tree, "write": moved}
    if beside or beside_delete:
        plan.update(beside_delete=sorted(beside_delete), beside_write=sorted(beside))
    try:
        verdict = None if verify is None else verify(staging / _TREE, {**files, manifest_name: manifest})
        for folder in sorted(_folders(staged)):  # parents first; once each, not once a file
            (staging / folder).mkdir()
        for name in sorted(staged):
            _write_file(staging / name, staged[name])
        # Last: a plan means the tree is whole. A staging folder is no commit, plan or not, so the files and the
        # plan are flushed together, once, before the rename that makes them one.
        _write_file(staging / _PLAN, json.dumps(plan, indent=1) + "\n")
        with syncing(  # the disk flushes them while the check runs
            itertools.chain((staging / name for name in durable), [staging / _PLAN]),
            itertools.chain((staging / folder for folder in sorted(_folders(durable))), [staging]),
        ) as synced:
            if verdict is not None:
                verdict()
            synced()
        _reached("staged")
        package_dir.parent.mkdir(parents=True, exist_ok=True)
    except BaseException:
        _drop(staging, work_dir)
        raise
    # From just before the commit point to the package in place, Ctrl-C waits: the write ends whole either way.
    with _interrupts_held() as interrupted:
        try:
            os.rename(staging, commit)
        except BaseException:
            _drop(staging, work_dir)
            raise
        fsync_folder(work_dir)
        _reached("committed")
        done: set[str] = set()
        try:
            _apply(commit, package_dir, done)
        except KeyboardInterrupt:
            _finish(commit, package_dir)  # past the commit point the new package is finished, never left half done
            raise InterruptedAfterCommit from None
        except OSError as error:
            new = [os.path.join(base, name) for name in [*stale, *changed] if name in done]
            old = [os.path.join(base, name) for name in [*stale, *changed] if name not in done]
            raise CommitPending(error, new, old) from error
    if interrupted:
        raise InterruptedAfterCommit
    return Written(changed, tuple(name for name in sorted(every) if name not in changed), tuple(stale), edited)


def _drop(staging: Path, work_dir: Path) -> None:
    """Remove a staging tree the write gave up before its commit point."""
    try:
        remove_tree(staging)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
    with contextlib.suppress(OSError):
        work_dir.rmdir()


@contextlib.contextmanager
def _interrupts_held() -> Iterator[list[int]]:
    """Ctrl-C held while a commit is applied, so that the package is finished first; the list says it came.

    Held only where Python's own handler would raise KeyboardInterrupt (the main thread, no handler of the
    caller's), so a program that embeds builds keeps its own handling.
    """
    came: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield came
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous is not signal.default_int_handler:
        yield came
        return
    signal.signal(signal.SIGINT, lambda number, frame: came.append(number))
    try:
        yield came
    finally:
        signal.signal(signal.SIGINT, previous)


def _finish(commit: Path, package_dir: Path) -> None:
    """Apply a commit an interrupt stopped; one that had got as far as removing its own tree is applied already."""
    if (commit / _PLAN).is_file():
        _apply(commit, package_dir)
    elif commit.exists():
        remove_tree(commit)


def _apply(commit: Path, package_dir: Path, done: set[str] | None = None) -> None:
    """Make `package_dir` what the commit says; safe to repeat after a kill at any point. `done` gathers the
    package-relative names deleted and written so far, for the message of a write that fails part way."""
    done = set() if done is None else done
    plan = json.loads((commit / _PLAN).read_text(encoding="utf-8"))
    tree = commit / str(plan.get("tree", _TREE))  # toolgen before the work folder staged the files at `tree/`
    package_dir.mkdir(parents=True, exist_ok=True)
    for name in plan["delete"]:  # first, so an old file can give way to a new folder of the same name
        target = package_dir / name
        # Repeated after a kill, a deleted name may already be that new folder, or lie under a new file.
        if target.is_symlink() or not target.is_dir():
            with contextlib.suppress(FileNotFoundError, NotADirectoryError):
                target.unlink()
        done.add(name)
        _prune(target, package_dir)
        _reached(f"deleted {name}")
    # Before the package's files, so its manifest, which records these too, is still the last file written.
    for name in plan.get("beside_delete", []):
        with contextlib.suppress(FileNotFoundError):
            (package_dir.parent / name).unlink()
        _reached(f"deleted beside {name}")
    for name in plan.get("beside_write", []):
        if (commit / _BESIDE / name).is_file():
            moved(commit / _BESIDE / name, package_dir.parent / name)
            _reached(f"wrote beside {name}")
    aside = commit / _ASIDE
    aside.mkdir(exist_ok=True)
    # Paths as strings: a large package's thousands of files made Path objects a cost of their own.
    into, source_base, aside_base = str(package_dir), str(tree), str(aside)
    touched = {into}
    for index, name in enumerate(plan["write"]):
        source, target = os.path.join(source_base, name), os.path.join(into, name)
        folder = os.path.dirname(target)
        if os.path.isfile(source):  # gone when an earlier, killed apply already moved it
            if folder not in touched:
                os.makedirs(folder, exist_ok=True)
            # A link to the old file keeps the replace from freeing its blocks, which waits on the disk (3 ms a
            # file on ext4 with discard); removing the commit tree below frees them all, a few at once.
            with contextlib.suppress(OSError, NotImplementedError):  # no old file, or no hard links here
                os.link(target, os.path.join(aside_base, str(index)), follow_symlinks=False)
            moved(source, target)
            _reached(f"wrote {name}")
        done.add(name)
        touched.add(folder)
    folders = [Path(folder) for folder in sorted(touched)]
    for flushed in folders:
        # bytecode keyed on a source's mtime and size could outlive a same-size rewrite within one second
        shutil.rmtree(flushed / _BYTECODE, ignore_errors=True)
    fsync_folders(folders)
    _reached("applied")
    # What is left: links to the replaced files, staged files left out of the write. Not flushed: a kill that
    # leaves some of the commit on disk has the next build apply it again, which changes nothing.
    remove_tree(commit)
    with contextlib.suppress(OSError):
        commit.parent.rmdir()


def _prune(removed: Path, package_dir: Path) -> None:
    """Remove the folders a deleted file leaves empty (or holding only bytecode), up to the package itself."""
    folder = removed.parent
    while folder != package_dir and package_dir in folder.parents:
        try:
            left = [entry.name for entry in folder.iterdir()]
            if left == [_BYTECODE]:
                shutil.rmtree(folder / _BYTECODE)
            elif left:
                return
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def _folders(names: Iterable[str]) -> set[str]:
    """Every folder that relative POSIX `names` lie in, with the folders above it (the names' own root left out)."""
    found: set[str] = set()
    for name in names:
        cut = name.rfind("/")
        while cut > 0 and name[:cut] not in found:  # a folder found before came with its parents
            found.add(name[:cut])
            cut = name.rfind("/", 0, cut)
    return found


def _write_file(path: Path, text: str) -> None:
    """Stage one file (its folder exists); the files a commit moves are flushed to disk (disk.syncing) before the
    rename that commits them."""
    data = text.encode("utf-8")
    try:
        # os.open, not open(): the text layer cost more than the write on a large package's thousand files
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0), 0o666)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(descriptor, view) :]
        finally:
            os.close(descriptor)
    except OSError as error:
        raise named(error, path) from error
