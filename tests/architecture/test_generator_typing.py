"""toolgen's own code passes mypy --strict, as the code it generates does."""

from __future__ import annotations

import subprocess
import sys

from support.projects import REPO_ROOT


def test_generator_passes_mypy_strict() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", str(REPO_ROOT / "generator" / "toolgen")],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
