"""Projects built once for a module whose tests add a schema and then kill or interrupt a build of it in a process."""

from __future__ import annotations

from pathlib import Path

import toolgen
from support.projects import WEATHER, Project


def weather_checked_with(root: Path, relative: str, text: str) -> Path:
    """The weather project at `root`, built as `built_root` builds it, after a build that also held `text` at
    `relative`: its cache records that bigger package as checked, so a build of it again (the same bytes, the same
    environment) is not checked again, which is the build's own rule (toolgen.output.checked_packages). Tests that
    kill such a build at a step of its write do not wait for a fresh interpreter to import it first."""
    project = Project(root)
    project.write("schemas/weather.yaml", WEATHER)
    added = project.write(relative, text)
    assert toolgen.build(project.root).written
    added.unlink()
    assert toolgen.build(project.root).written
    return root
