"""Write stage: whose files a package holds (toolgen's, the user's zone, foreign ones) and writing it all or nothing.

A build stages every new file beside the package, then renames the staging tree to `.<package>.commit`: that
rename is the commit point. Applying a commit deletes the files the old manifest listed and the new one does not,
moves each new file over its old one (os.replace) and the manifest last, then removes the commit tree. Applying
is idempotent, so `recover` finishes a commit a kill interrupted, and before the commit point the old package is
untouched. The user zone (`ext/` and `keep:` paths) is never read, moved, written or deleted.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from toolgen.config import USER_DIR, Config, display_path
from toolgen.diagnostics import Diagnostic, Severity
from toolgen.errors import ForeignFilesError, ForeignOutputError
from toolgen.manifest import MANIFEST_NAME, read_manifest, text_digest

_PLAN = "plan.json"
_TREE = "tree"
_BYTECODE = "__pycache__"


def _reached(step: str) -> None:
    """A named point of the write; tests stop a build at each one to prove a kill there is recoverable."""


def _commit_dir(package_dir: Path) -> Path:
    return package_dir.parent / f".{package_dir.name}.commit"


def _previous(package_dir: Path) -> Path:
    """Where toolgen before per-file writes kept the old package while swapping directories."""
    return package_dir.parent / f".{package_dir.name}.previous"


def _removing(package_dir: Path) -> Path:
    return package_dir.parent / f".{package_dir.name}.removing"


def in_zone(name: str, zone: Iterable[str]) -> bool:
    """True when package-relative `name` is a zone path or lies under one."""
    return any(name == path or name.startswith(path + "/") for path in zone)


def recover(package_dir: Path) -> None:
    """Finish a commit a kill interrupted; drop staging trees of builds killed before their commit point."""
    commit = _commit_dir(package_dir)
    if (commit / _PLAN).is_file():
        _apply(commit, package_dir)
    elif commit.exists():  # pragma: no cover - the plan is written before the rename that makes a commit
        shutil.rmtree(commit)
    previous = _previous(package_dir)
    if previous.exists():
        if package_dir.exists():
            shutil.rmtree(previous)
        else:
            os.rename(previous, package_dir)
    for stale in package_dir.parent.glob(f".{package_dir.name}.staging-*"):
        shutil.rmtree(stale, ignore_errors=True)
    removing = _removing(package_dir)
    if removing.exists():
        shutil.rmtree(removing)


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        descriptor = os.open(path, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


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


def remove_package(package_dir: Path) -> None:
    """Remove a package toolgen wrote (checked with `unowned_entries` first): rename it aside, then delete it,
    so a kill leaves either the whole package or a `.removing` tree that `recover` deletes."""
    removing = _removing(package_dir)
    os.rename(package_dir, removing)
    _fsync_dir(package_dir.parent)
    _reached("renamed old package aside")
    shutil.rmtree(removing)


class Written(NamedTuple):
    """What a write changed: files whose bytes differ (new ones included), files left as they were, deletions."""

    changed: tuple[str, ...]
    unchanged: tuple[str, ...]
    deleted: tuple[str, ...]


def _differs(path: Path, text: str) -> bool:
    try:
        return path.read_bytes() != text.encode("utf-8")
    except OSError:
        return True


def write_package(
    package_dir: Path, files: Mapping[str, str], manifest_name: str, manifest: str, zone: Sequence[str]
) -> Written:
    """Write `files` and then the manifest into `package_dir`: all of them or, if anything fails before the
    commit point, none. Files the old manifest lists and `files` lacks are deleted; `zone` is never touched.

    The caller has checked `foreign_entries` is empty; nothing else in the directory is overwritten or deleted.
    """
    every = {**files, manifest_name: manifest}
    changed = tuple(name for name in sorted(every) if _differs(package_dir / name, every[name]))
    package_dir.parent.mkdir(parents=True, exist_ok=True)
    recover(package_dir)
    stale = sorted(
        name
        for name in recorded_files(package_dir)
        if name not in files and name != manifest_name and not in_zone(name, zone)
    )
    staging = Path(tempfile.mkdtemp(prefix=f".{package_dir.name}.staging-", dir=package_dir.parent))
    commit = _commit_dir(package_dir)
    try:
        os.chmod(staging, 0o755)
        for name in sorted(files):
            _write_file(staging / _TREE / name, files[name])
        _write_file(staging / _TREE / manifest_name, manifest)
        plan = {"delete": stale, "write": [*sorted(files), manifest_name]}
        _write_file(staging / _PLAN, json.dumps(plan, indent=1) + "\n")  # last: a plan means the tree is whole
        _fsync_dir(staging)
        _reached("staged")
        os.rename(staging, commit)
        _fsync_dir(package_dir.parent)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    _reached("committed")
    try:
        _apply(commit, package_dir)
    except KeyboardInterrupt:
        _apply(commit, package_dir)  # past the commit point the new package is finished, never left half done
        raise
    return Written(changed, tuple(name for name in sorted(every) if name not in changed), tuple(stale))


def _apply(commit: Path, package_dir: Path) -> None:
    """Make `package_dir` what the commit says; safe to repeat after a kill at any point."""
    plan = json.loads((commit / _PLAN).read_text(encoding="utf-8"))
    tree = commit / _TREE
    package_dir.mkdir(exist_ok=True)
    for name in plan["delete"]:  # first, so an old file can give way to a new folder of the same name
        target = package_dir / name
        # Repeated after a kill, a deleted name may already be that new folder, or lie under a new file.
        if target.is_symlink() or not target.is_dir():
            with contextlib.suppress(FileNotFoundError, NotADirectoryError):
                target.unlink()
        _prune(target, package_dir)
        _reached(f"deleted {name}")
    touched = {package_dir}
    for name in plan["write"]:
        source, target = tree / name, package_dir / name
        if source.is_file():  # gone when an earlier, killed apply already moved it
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(source, target)
            _reached(f"wrote {name}")
        touched.add(target.parent)
    for folder in sorted(touched):
        # bytecode keyed on a source's mtime and size could outlive a same-size rewrite within one second
        shutil.rmtree(folder / _BYTECODE, ignore_errors=True)
        _fsync_dir(folder)
    _reached("applied")
    shutil.rmtree(commit)
    _fsync_dir(package_dir.parent)


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


def _write_file(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
