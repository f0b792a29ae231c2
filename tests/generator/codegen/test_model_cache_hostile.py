"""What a build keeps for the next one, attacked: no config change that reaches the models is served the old
models, and no kept file edited since reaches the package, however well it still reads.

Each change is built once over what the build before it kept, and once in a copy with nothing kept: the two
packages must be the same bytes.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from support.projects import Project

import toolgen

SCRATCH = ".toolgen-cache"
EXTENSION = "properties:\n  trace_id: {type: string, description: The caller's trace.}\n"
SHARED = """\
tools:
  - name: get_forecast
    description: The forecast for a city.
    inputSchema:
      type: object
      properties:
        city: {type: string}
        days: {type: integer, minimum: 1}
      required: [city]
"""


def _fresh(project: Project, root: Path) -> dict[str, bytes]:
    """What a build writes with nothing kept, in a copy of the project at `root`."""
    copy = Project.copy_of(project.root, root)
    shutil.rmtree(copy.root / SCRATCH, ignore_errors=True)
    shutil.rmtree(copy.root / "generated", ignore_errors=True)
    assert toolgen.build(copy.root).written
    return copy.snapshot()


def _config(project: Project, edit: Callable[[str], str]) -> None:
    path = project.root / "toolgen.yaml"
    path.write_text(edit(path.read_text(encoding="utf-8")), encoding="utf-8")


def _message_extension(project: Project) -> None:
    project.write("ext_message.yaml", EXTENSION)
    _config(project, lambda text: text + "extend:\n  message: ext_message.yaml\n")


def _another_input(project: Project) -> None:
    project.write("more/forecast.yaml", SHARED)
    _config(project, lambda text: text + "  - more/*.yaml\n")


CHANGES: dict[str, Callable[[Project], None]] = {
    "package": lambda project: _config(project, lambda text: text.replace("package: sdk", "package: other_sdk")),
    "message-extension": _message_extension,
    "another-input-pattern": _another_input,  # the header names the inputs
    "normalize": lambda project: _config(project, lambda text: text + "normalize: [types, shapes]\n"),
    "fewer-features": lambda project: _config(project, lambda text: text + "features: []\n"),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_config_change_builds_what_a_build_with_nothing_kept_builds(
    project: Project, tmp_path: Path, change: str
) -> None:
    assert toolgen.build(project.root, force=True).written  # keeps the models, the runtime and the templates
    CHANGES[change](project)
    toolgen.build(project.root)
    assert project.snapshot() == _fresh(project, tmp_path / "fresh")
    assert toolgen.check(project.root, full=True).changed == ()


def test_a_compiled_template_edited_since_is_compiled_again(project: Project) -> None:
    # A literal of the compiled code changed in place: the file still loads, and jinja checks only the template's
    # text, so only a hash of the code itself tells it from what the build compiled.
    literal, edited = b"the tool registry generated", b"the tool regiztry generated"
    touched = 0
    for path in (project.root / SCRATCH / "templates").iterdir():
        data = path.read_bytes()
        if literal in data:
            path.write_bytes(data.replace(literal, edited))
            touched += 1
    assert touched, "a compiled template holds the literal"
    assert toolgen.build(project.root, force=True).written
    assert edited.decode() not in (project.package_dir / "__init__.py").read_text(encoding="utf-8")
    assert toolgen.check(project.root, full=True).changed == ()
