"""Rebuild the golden records under tests/golden/: `python tests/golden/regenerate.py`, then review `git diff`.

Each project in `<name>/project/` is built into a scratch copy; its package replaces `<name>/expected/`, without
`_runtime/` (the manifest keeps the runtime's hashes, and tests compare the runtime with toolgen's source).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

GOLDEN = Path(__file__).resolve().parent
RUNTIME = "_runtime"
MANIFEST = "toolgen-manifest.json"


def build(project: Path, scratch: Path) -> Path:
    """Build `project` in a copy under `scratch`; the package directory it wrote."""
    from toolgen.api import build as build_project
    from toolgen.project.config import load_config

    copy = scratch / project.parent.name
    shutil.copytree(project, copy)
    build_project(copy)
    config = load_config(copy)
    return config.package_dir


def expected_files(package_dir: Path) -> dict[str, bytes]:
    """The files of a built package a golden record keeps: everything but `_runtime/` and caches, and the
    manifest without what made it (toolgen's source hash changes with every edit; pydantic is not pinned)."""
    from toolgen.project.manifest import MAKER_KEYS

    files = {
        path.relative_to(package_dir).as_posix(): path.read_bytes()
        for path in sorted(package_dir.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts and path.relative_to(package_dir).parts[0] != RUNTIME
    }
    manifest = json.loads(files[MANIFEST])
    for maker in MAKER_KEYS:
        manifest.pop(maker, None)
    files[MANIFEST] = (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()
    return files


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="toolgen-golden-") as scratch:
        for project in sorted(GOLDEN.glob("*/project")):
            files = expected_files(build(project, Path(scratch)))
            expected = project.parent / "expected"
            shutil.rmtree(expected, ignore_errors=True)
            for name, data in files.items():
                target = expected / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            print(f"{expected.relative_to(GOLDEN.parents[1])}: {len(files)} files", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
