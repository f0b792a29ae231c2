"""A build that checks only the tools whose part changed must still never commit a package one of whose tools does
not import or has validators that raise: each test spoils a file the check of an unchanged tool reads, while another
tool is edited, and expects the build to fail with nothing written."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from support.projects import Project

import toolgen
import toolgen.codegen.render
from toolgen.core.errors import InvalidInputError
from toolgen.output.checked_packages import RECORD

TOOLS = """\
tools:
  - name: get_weather
    description: Get the current weather in a given location.
    inputSchema:
      type: object
      properties:
        location: {type: string, description: The city.}
        unit: {type: string, enum: [celsius, fahrenheit]}
      required: [location]
  - name: find_flight
    description: Find a flight.
    inputSchema:
      type: object
      properties:
        origin: {type: string}
        when: {type: object, properties: {day: {type: string}, flexible: {type: boolean}}}
      required: [origin]
    outputSchema:
      type: object
      properties:
        price: {type: number}
  - name: add_note
    description: Add a note.
    inputSchema:
      type: object
      properties:
        text: {type: string, minLength: 1}
      required: [text]
"""

# Appended to tools.py: find_flight's spec made ahead, from its definition but for a model that does not exist. The
# definitions as TOOLS holds them are untouched: only the code around them differs.
SPEC_MADE_AHEAD = """
from sdk._runtime.tools.catalog import spec_of as _spec_of

TOOLS._specs["find_flight"] = _spec_of(
    "sdk.models", "find_flight", {**TOOLS._definitions["find_flight"], "args_model": "NoSuchArgs"}
)
"""


# The same, from get_weather's own module when it is imported: its tool is the one edited.
SPEC_MADE_AHEAD_ELSEWHERE = SPEC_MADE_AHEAD.replace("TOOLS.", "_tools.TOOLS.").replace(
    "from sdk._runtime", "import sdk.tools as _tools\nfrom sdk._runtime"
)
SPOILS = {"tools.py": SPEC_MADE_AHEAD, "_tool_models/get_weather.py": SPEC_MADE_AHEAD_ELSEWHERE}


@pytest.fixture
def built(make_project: Callable[..., Project]) -> Project:
    project = make_project()
    project.write("schemas/tools.yaml", TOOLS)
    assert toolgen.build(project.root).written
    held = json.loads((project.root / ".toolgen-cache" / RECORD).read_text(encoding="utf-8"))
    assert len(held["packages"][0]["parts"]) == 3
    return project


def _edit_weather(project: Project) -> None:
    project.write("schemas/tools.yaml", TOOLS.replace("description: The city.", "description: The city's name."))


def _spoiled(monkeypatch: pytest.MonkeyPatch, name: str, appended: str) -> None:
    """Every render from now on appends `appended` to the package file `name`."""
    real = toolgen.codegen.render.render

    def spoiled(*args: object, **kwargs: object) -> dict[str, str]:
        files = real(*args, **kwargs)  # type: ignore[arg-type]
        files[name] += appended
        return files

    monkeypatch.setattr(toolgen.codegen.render, "render", spoiled)


def _fails_for_find_flight(project: Project) -> None:
    before = project.snapshot()
    with pytest.raises(InvalidInputError) as failed:
        toolgen.build(project.root)
    assert [d.message for d in failed.value.diagnostics if "'find_flight'" in d.message]
    assert project.snapshot() == before


@pytest.mark.parametrize("spoiled", sorted(SPOILS))
def test_a_spoiled_find_flight_fails_a_whole_check(
    built: Project, monkeypatch: pytest.MonkeyPatch, spoiled: str
) -> None:
    """The control: with no record of parts that passed, each spoiling below fails the build."""
    (built.root / ".toolgen-cache" / RECORD).unlink()
    _spoiled(monkeypatch, spoiled, SPOILS[spoiled])
    _edit_weather(built)
    _fails_for_find_flight(built)


def test_code_around_the_definitions_spoiling_an_unchanged_tool_is_caught(
    built: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tools.py's code around the definitions is read by every tool's validators, yet is in no tool's part key: a
    tools.py whose code makes find_flight's spec wrongly (a fault of the build that made it) must fail the build
    even though only get_weather's schema was edited."""
    _spoiled(monkeypatch, "tools.py", SPOILS["tools.py"])
    _edit_weather(built)
    _fails_for_find_flight(built)


def test_an_edited_tools_module_that_spoils_an_unchanged_tool_is_caught(
    built: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tool's own module is no input of another tool's validators only while it does nothing but define models:
    get_weather's module (its tool edited, so checked) spoiling find_flight's spec when imported, as a program that
    uses get_weather and then find_flight imports it, must fail the build as the whole check (which imports every
    module before it runs any validator) does."""
    _spoiled(monkeypatch, "_tool_models/get_weather.py", SPOILS["_tool_models/get_weather.py"])
    _edit_weather(built)
    _fails_for_find_flight(built)
