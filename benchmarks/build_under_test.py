"""The toolgen under test (the working tree, or a git archive of a commit for --ref) and how its CLIs are run."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from build_inputs import REPO


def script(name: str) -> list[str]:
    """The command that starts console script `name`: beside this interpreter, else on PATH, else `python -m`."""
    local = Path(sys.executable).with_name(name)
    if local.exists():
        return [str(local)]
    found = shutil.which(name)
    if found:
        return [found]
    module = {"toolgen": "toolgen", "datamodel-codegen": "datamodel_code_generator"}[name]
    return [sys.executable, "-m", module]


@dataclass(frozen=True)
class UnderTest:
    """The toolgen one run measures: the working tree (the defaults), or a committed version swapped in by --ref."""

    label: str = ""  # how the report names it; empty: the report describes the working tree itself
    env: Mapping[str, str] | None = None  # the environment its CLIs run in; None: this process's


def use_ref(ref: str, scratch: Path) -> UnderTest:
    """Import toolgen (and run its CLI) from `git archive REF` instead of the working tree."""
    if "toolgen" in sys.modules:
        raise RuntimeError("toolgen was imported before --ref could take effect")
    commit = subprocess.run(
        ["git", "rev-parse", "--short", f"{ref}^{{commit}}"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.strip()
    archive = subprocess.run(
        ["git", "archive", "--format=tar", commit, "generator", "templates", "schemas"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout
    source = scratch / "toolgen-src"
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(source, filter="data") if hasattr(tarfile, "data_filter") else tar.extractall(source)
    sys.path.insert(0, str(source / "generator"))
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(source / "generator"), os.environ.get("PYTHONPATH")])),
    }
    import toolgen

    if not Path(toolgen.__file__).is_relative_to(source):
        raise RuntimeError(f"--ref: toolgen still imports from {toolgen.__file__}")
    label = f"commit {commit} (`--ref {ref}`: a git archive of generator/, templates/, schemas/, not the working tree)"
    return UnderTest(label, env)


def run(under: UnderTest, arguments: list[str], cwd: Path) -> None:
    """Run a CLI in the environment of the toolgen under test; raises with its stderr if it fails."""
    completed = subprocess.run(arguments, cwd=cwd, capture_output=True, text=True, check=False, env=under.env)
    if completed.returncode != 0:
        raise RuntimeError(f"{' '.join(arguments[:3])} ... exited {completed.returncode}: {completed.stderr[-2000:]}")
