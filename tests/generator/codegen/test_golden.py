"""Golden records: three small projects built and compared with their committed packages as whole trees.

A difference means the generated code changed: review it, then run `python tests/golden/regenerate.py`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from support.projects import TESTS

GOLDEN = TESTS / "golden"
sys.path.insert(0, str(GOLDEN))
from regenerate import build, expected_files  # noqa: E402

PROJECTS = sorted(p.parent.name for p in GOLDEN.glob("*/project"))


def _recorded(expected: Path) -> dict[str, bytes]:
    return {p.relative_to(expected).as_posix(): p.read_bytes() for p in sorted(expected.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("name", PROJECTS)
def test_the_built_package_matches_its_golden_record(name: str, tmp_path: Path) -> None:
    built = expected_files(build(GOLDEN / name / "project", tmp_path))
    recorded = _recorded(GOLDEN / name / "expected")
    hint = "run `python tests/golden/regenerate.py` and review the diff"
    assert sorted(built) == sorted(recorded), f"{name}: the file list changed; {hint}"
    changed = [file for file in built if built[file] != recorded[file]]
    assert not changed, f"{name}: {', '.join(changed)} changed; {hint}"


def test_there_are_three_projects_and_one_speaks_only_anthropic() -> None:
    assert PROJECTS == ["anthropic", "features", "minimal"]
    manifest = (GOLDEN / "anthropic" / "expected" / "toolgen-manifest.json").read_text(encoding="utf-8")
    assert '"_runtime/wires/anthropic/codec.py"' in manifest and '"_runtime/wires/openai_chat/codec.py"' not in manifest
