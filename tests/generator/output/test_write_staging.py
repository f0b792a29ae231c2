"""What the write stages and flushes: every file for a check that reads the staged tree, only the files it moves for
one that is given them; a file system flushed in one call where the platform can; removals a few at once."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from toolgen.core.disk import THREADS, _file_system, fsync_folders, remove_files, remove_tree, sync_file_system, syncing
from toolgen.output.write import write_package

MANIFEST = "manifest.json"
FILES = {"__init__.py": "", "models.py": "x = 1\n", "_runtime/base.py": "y = 2\n", "_runtime/deep/more.py": "z = 3\n"}


def _write(
    tmp_path: Path, files: Mapping[str, str], *, rewrite_unchanged: bool, reads_staged: bool
) -> tuple[list[str], tuple[str, ...]]:
    """Write `files` into tmp_path/out/pkg; what the staged tree held when the check's verdict was asked, and the
    files the write changed."""
    seen: list[str] = []

    def verify(folder: Path, given: Mapping[str, str]) -> Callable[[], object]:
        assert set(given) == {*files, MANIFEST}, "the check is given every file, staged or not"
        package = folder / "pkg"
        return lambda: seen.extend(sorted(p.relative_to(package).as_posix() for p in package.rglob("*.*")))

    written = write_package(
        tmp_path / "out" / "pkg",
        files,
        MANIFEST,
        '{"files": {}}\n',
        (),
        tmp_path / "work",
        verify,
        rewrite_unchanged=rewrite_unchanged,
        verify_reads_staged=reads_staged,
    )
    return seen, written.changed


def test_a_check_that_reads_the_staged_tree_sees_every_file_and_one_given_them_gets_only_the_moved_ones(
    tmp_path: Path,
) -> None:
    staged, changed = _write(tmp_path, FILES, rewrite_unchanged=False, reads_staged=True)
    assert staged == sorted([*FILES, MANIFEST]) and set(changed) == {*FILES, MANIFEST}
    edited = {**FILES, "models.py": "x = 2\n"}
    staged, changed = _write(tmp_path, edited, rewrite_unchanged=False, reads_staged=True)
    assert staged == sorted([*FILES, MANIFEST]), "the check reads the whole package from the staged tree"
    assert changed == ("models.py",)
    again = {**edited, "models.py": "x = 3\n"}
    staged, changed = _write(tmp_path, again, rewrite_unchanged=False, reads_staged=False)
    assert staged == ["models.py"], "only what the commit moves is staged"
    assert changed == ("models.py",)
    staged, _ = _write(tmp_path, again, rewrite_unchanged=True, reads_staged=False)
    assert staged == sorted([*FILES, MANIFEST]), "a forced write moves, so stages, every file"
    package = tmp_path / "out" / "pkg"
    assert {name: (package / name).read_text(encoding="utf-8") for name in again} == again
    assert not (tmp_path / "work").exists(), "the work folder is left empty and removed"


def test_the_syncs_flush_or_name_what_they_cannot(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    files = [folder / f"f{index}.txt" for index in range(3)]
    for path in files:
        path.write_text("data", encoding="utf-8")
    with syncing(iter(files), iter([folder])) as synced:
        synced()
    with syncing(iter(()), iter(())) as synced:  # nothing to flush
        synced()
    fsync_folders([folder, tmp_path])
    flushed = sync_file_system(folder)  # Linux, on a local file system that flushes for it; else no flush
    assert flushed in (True, False)
    if flushed:
        with pytest.raises(FileNotFoundError) as missing:
            sync_file_system(tmp_path / "absent")
        assert missing.value.filename == str(tmp_path / "absent")


def test_files_are_removed_a_few_at_once_and_a_missing_one_is_no_error(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "a" / "b").mkdir(parents=True)
    paths = [tree / "a" / f"{index}.txt" for index in range(THREADS * 3 + 1)] + [tree / "a" / "b" / "last.txt"]
    for path in paths:
        path.write_text("x", encoding="utf-8")
    remove_files([*paths[:5], tmp_path / "never-there.txt", str(paths[5])])
    assert not any(path.exists() for path in paths[:6])
    remove_tree(tree)
    assert not tree.exists()


@pytest.mark.skipif(not Path("/proc/self/mounts").is_file(), reason="Linux's mount table")
def test_a_file_system_that_may_not_flush_for_syncfs_gets_an_fsync_of_each_file() -> None:
    assert _file_system(Path("/proc/self/status")) == "proc", "the type of the longest mount point above the path"
    assert not sync_file_system(Path("/proc/self")), "no syncfs there: the callers fsync each file instead"
