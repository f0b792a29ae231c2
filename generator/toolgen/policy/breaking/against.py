"""What `breaking --against REF` compares with: a snapshot file, another checkout, or a git revision's tree."""

from __future__ import annotations

import os
import subprocess
import tarfile
import tempfile
from dataclasses import replace
from pathlib import Path

from toolgen.core.diagnostics import Diagnostic, Severity
from toolgen.core.errors import InvalidInputError, ToolgenError
from toolgen.policy.breaking.snapshots import ToolSnapshot, load_snapshot, snapshot
from toolgen.project.config import Config, load_config


def tools_against(against: str, config: Config) -> tuple[ToolSnapshot, ...] | None:
    """The tools `against` names: a file written by `breaking_snapshot`, the project directory of another
    checkout, or a git revision of the repository the project is in (unpacked into a temporary directory).

    None when `against` is a git revision whose tree has no project here (the pull request that adds toolgen to a
    repository): every tool is new. A directory without the project stays an error, being more likely a wrong path.
    """
    path = Path(against)
    if path.is_file():
        try:
            text = path.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as error:
            raise against_error(against, f"cannot be read ({error})") from None
        return load_snapshot(text, against)
    if path.is_dir():
        return tools_in(path.resolve(), config, against)
    with tempfile.TemporaryDirectory(prefix="toolgen-breaking-") as scratch:
        tree = git_tree(config, against, Path(scratch))
        if not (tree / config.display).is_file():
            return None
        return tools_in(tree, config, against)


def no_project_note(against: str, config: Config) -> Diagnostic:
    """What `breaking` says when revision `against` had no project: every tool counts as added."""
    message = (
        f"{against!r} has no {config.display}: the base had no project, so every tool counts as added (tool-added)"
    )
    return Diagnostic(config.display, 1, 1, Severity.WARNING, "against-no-project", message)


def against_error(against: str, problem: str) -> InvalidInputError:
    return InvalidInputError([Diagnostic("--against", 1, 1, Severity.ERROR, "against-ref", f"{against!r} {problem}")])


def tools_in(old_root: Path, config: Config, against: str) -> tuple[ToolSnapshot, ...]:
    """The tools of the project at `old_root`, read with its own toolgen.yaml; its errors are labeled `AGAINST:`."""
    from toolgen.ir.lower import lower

    config_file = old_root / config.display
    if not config_file.is_file():
        raise against_error(against, f"has no {config.display} for this project")
    try:
        return snapshot(lower(load_config(old_root, config_file.resolve())))
    except InvalidInputError as error:
        raise InvalidInputError(replace(d, path=f"{against}:{d.path}") for d in error.diagnostics) from None


def git_tree(config: Config, against: str, scratch: Path) -> Path:
    """Unpack the tree of git revision `against` into `scratch`; returns the project root inside it."""
    problem = "is not a file, a directory or a git revision"
    try:
        where = subprocess.run(
            ["git", "-C", str(config.root), "rev-parse", "--show-toplevel", "--show-prefix"],
            capture_output=True,
            check=False,
        )
    except OSError:
        raise against_error(against, f"{problem} (git is not available)") from None
    if where.returncode:
        raise against_error(against, f"{problem} (the project is not in a git repository)")
    toplevel, prefix = (os.fsdecode(where.stdout).splitlines() + ["", ""])[:2]
    revision = ["git", "-C", toplevel, "rev-parse", "--verify", "--quiet", f"{against}^{{commit}}"]
    commit = subprocess.run(revision, capture_output=True, check=False)
    if against.startswith("-") or commit.returncode:
        raise against_error(against, f"{problem} of the repository at {toplevel}")
    archive = scratch / "tree.tar"
    with archive.open("wb") as out:
        sha = os.fsdecode(commit.stdout).strip()
        done = subprocess.run(
            ["git", "-C", toplevel, "archive", "--format=tar", sha], stdout=out, stderr=subprocess.PIPE, check=False
        )
    if done.returncode:
        raise ToolgenError(f"git archive {against} failed: {os.fsdecode(done.stderr).strip()}")
    with tarfile.open(archive) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(scratch / "tree", filter="data")
        else:  # Python before 3.10.12 / 3.11.4: the tree comes from the user's own repository
            tar.extractall(scratch / "tree")
    return scratch / "tree" / prefix
