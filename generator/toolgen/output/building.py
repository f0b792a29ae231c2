"""The build's disk half: its lock, its work folders, the check of the staged package before the commit point,
what `check` says about an interrupted build, and file-system refusals as errors that name the path."""

from __future__ import annotations

import contextlib
import errno
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType

from toolgen.core.diagnostics import Diagnostic, Severity
from toolgen.core.errors import EnvironmentProblem
from toolgen.output.beside import BesidePlan, remove_old_beside
from toolgen.output.sdk_check import Checker, Verdict, check_staged_package
from toolgen.output.write import (
    CommitPending,
    Written,
    leftovers,
    recover,
    refuse_foreign,
    remove_package,
    work_dir_for,
    write_package,
)
from toolgen.project.config import CACHE_DIR, Config, display_path
from toolgen.project.manifest import MANIFEST_NAME

SCRATCH_DIR = CACHE_DIR

_DENIED = "permission denied: make it writable for the user who builds, or build as its owner"
_FULL = "the disk is full: free some space and build again"
# What to do about each refusal of the file system; any other OSError is a bug in toolgen and stays one.
_ADVICE = MappingProxyType(
    {
        errno.EROFS: "the file system is read-only: build in a writable checkout, or set `output:` to a writable folder",
        errno.EACCES: _DENIED,
        errno.EPERM: _DENIED,
        errno.ENOSPC: _FULL,
        errno.EDQUOT: "the disk quota is used up: free some space and build again",
        errno.ENOTDIR: "a file stands where toolgen needs a folder: move the file away",
        errno.EISDIR: "a folder stands where toolgen writes a file: move the folder away",
        errno.EEXIST: "a file stands where toolgen needs a folder: move the file away",
        errno.ENAMETOOLONG: "the path is longer than the file system allows: choose a shorter `output:` or `package:`",
        errno.EMFILE: "too many files are open: raise the limit (ulimit -n) and build again",
    }
)
_READ_ONLY = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})


def problem(
    error: OSError, root: Path, committed: bool = False, pending: CommitPending | None = None
) -> EnvironmentProblem | None:
    """The EnvironmentProblem an OSError of the file system means, or None when it is none toolgen expects.
    `committed`: it came past the commit point; `pending` then says which files were changed and which not."""
    advice = _ADVICE.get(error.errno or 0)
    if advice is None:
        return None
    named = [str(name) for name in (error.filename, error.filename2) if name is not None]
    where = " -> ".join(display_path(root, Path(name)) for name in named) or "the project"
    outcome = "nothing was written"
    if committed:
        outcome = "the new package is committed but not all in place"
        if pending is not None and (pending.new or pending.old):
            new = [display_path(root, Path(name)) for name in pending.new]
            old = [display_path(root, Path(name)) for name in pending.old]
            outcome += f" ({_listed('now new', new)}; {_listed('still old', old)})"
        outcome += ": `toolgen build` finishes it once this is fixed"
    return EnvironmentProblem(f"cannot write {where}: {error.strerror or error}; {advice}; {outcome}")


_LISTED = 20  # past this many names, a count: `toolgen check` names every file that differs


def _listed(what: str, names: list[str]) -> str:
    if not names:
        return f"{what}: none"
    shown = ", ".join(names[:_LISTED])
    more = f", and {len(names) - _LISTED} more (`toolgen check` names each)" if len(names) > _LISTED else ""
    return f"{what}: {len(names)} file(s), {shown}{more}"


@contextlib.contextmanager
def environment_errors(root: Path) -> Iterator[None]:
    """Turn the file system's refusals inside the block into EnvironmentProblem, naming the path (relative to
    `root`) and what to do; other errors pass unchanged."""
    try:
        yield
    except CommitPending as pending:
        translated = problem(pending.error, root, committed=True, pending=pending)
        if translated is None:
            raise pending.error from None
        raise translated from pending.error
    except OSError as error:
        translated = problem(error, root)
        if translated is None:
            raise
        raise translated from error


@contextlib.contextmanager
def build_lock(root: Path) -> Iterator[OSError | None]:
    """Hold the project's build lock (one build at a time: another build's staging tree is not stale).

    Yields None, or the refusal that kept toolgen from its scratch folder on a read-only checkout: the build
    may still answer "up to date", and raises the refusal when it has to write.
    """
    scratch = root / SCRATCH_DIR
    try:
        scratch.mkdir(exist_ok=True)
        ignore = scratch / ".gitignore"  # git ignores toolgen's scratch folder by itself
        if not ignore.is_file() or ignore.read_text(encoding="utf-8") != "*\n":
            ignore.write_text("*\n", encoding="utf-8")
        handle = open(scratch / "build.lock", "a+b")  # noqa: SIM115 - closed below, after the lock is released
    except OSError as error:
        if error.errno not in _READ_ONLY:
            raise
        yield error
        return
    with handle:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows has no flock; builds there are not serialized
            yield None
            return
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield None
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def work_dir(config: Config, package_dir: Path) -> Path:
    """The folder a build of `package_dir` stages and commits in: outside the output folder, on its file system."""
    return work_dir_for(config.root / SCRATCH_DIR, config.root, package_dir)


def recover_package(config: Config, package_dir: Path) -> None:
    """Finish or clear what a killed build of `package_dir` left."""
    recover(package_dir, work_dir(config, package_dir))


def commit_build(
    config: Config,
    files: Mapping[str, str],
    manifest: str,
    old_package: Path | None,
    beside: BesidePlan,
    checking: Checker | Verdict | None = None,
    rewrite_unchanged: bool = True,
    foreign_refused: bool = False,
) -> Written:
    """Check the staged package, write it (and the files `beside` it) all or nothing, then remove the old package
    `package:` moved away from. `checking` is a Checker started earlier, to check the files while they are staged,
    or the verdict of a check it has already been given `files` to (Checker.start); None checks the staged tree in
    a fresh interpreter. Without `rewrite_unchanged`, files already holding their new bytes are left as they are.
    `foreign_refused` says the caller has refused the build for foreign files already (under the build lock)."""
    if not foreign_refused:
        refuse_foreign(config, files, old_package)

    def place(tool: str) -> tuple[str, int, int]:
        return _tool_place(config, tool)

    def verify(folder: Path, staged: Mapping[str, str]) -> Callable[[], object]:
        if checking is None:  # a fresh interpreter, once the package is staged, reads it from there
            return lambda: check_staged_package(folder, config.package, place)
        # checks `staged` while they are written, or was given them already
        verdict = checking.start(folder, config.package, staged) if isinstance(checking, Checker) else checking
        return lambda: verdict(place)

    package_dir = config.package_dir
    written = write_package(
        package_dir,
        files,
        MANIFEST_NAME,
        manifest,
        config.user_zone,
        work_dir(config, package_dir),
        verify,
        beside.write,
        beside.delete,
        rewrite_unchanged,
        verify_reads_staged=checking is None,  # a Checker is sent the files, a verdict has them already
    )
    if old_package is not None and (old_package / MANIFEST_NAME).is_file():
        remove_old_beside(old_package, beside, config.output_dir)
        # after the new package is in place: a kill leaves one package at least
        remove_package(old_package, work_dir(config, old_package))
    return written


def _tool_place(config: Config, tool: str) -> tuple[str, int, int]:
    """Where tool `tool` is written (read again: only a failed check asks), or the config when it is not found."""
    from toolgen.ir.lower import lower

    for raw, _ in lower(config).sources:
        if raw.value("name") == tool:
            line, col = raw.document.locate(raw.pointer)
            return raw.document.display, line, col
    return config.display, 1, 1


def leftover_findings(config: Config, package_dir: Path) -> list[Diagnostic]:
    """An error for each thing a killed build left that the next build finishes or clears: a package with a
    commit pending may be half old, half new, so it is not up to date even where its files match."""
    message = "an interrupted build left this behind; `toolgen build` finishes its write (or clears it)"
    return [
        Diagnostic(display_path(config.root, Path(path)), 1, 1, Severity.ERROR, "interrupted-build", message)
        for path in leftovers(package_dir, work_dir(config, package_dir))
    ]
