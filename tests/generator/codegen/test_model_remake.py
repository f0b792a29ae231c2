"""After a schema edit, only the edited tools' models are made again, and the package is byte for byte what a build
with nothing kept writes; where that could differ (a shared definition, names outside ASCII, a new class name that
another tool mentions), every model is made again instead."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.projects import Project

import toolgen
import toolgen.codegen.targets.model_remake as model_remake

COMMON = """\
$defs:
  Address:
    type: object
    properties:
      street: {type: string}
      city: {type: string}
      kind: {type: string, enum: [GetWeatherArgsCloud, home]}
    required: [city]
"""
TOOLS = """\
tools:
  - name: book_trip
    description: Book a trip.
    inputSchema:
      type: object
      properties:
        legs:
          type: array
          items:
            type: object
            properties:
              origin: {type: string}
              stops: {type: array, items: {type: object, properties: {city: {type: string}}}}
        mode: {type: string, enum: [rail, air], default: rail}
      required: [legs]
    outputSchema:
      type: object
      properties:
        booking: {type: string}
        legs: {type: array, items: {type: object, properties: {price: {type: number}}}}
  - name: get_weather
    description: Get the weather.
    inputSchema:
      type: object
      properties:
        location: {type: string, description: The city.}
        unit: {type: string, enum: [celsius, fahrenheit]}
      required: [location]
  - name: send_parcel
    description: Send a parcel.
    inputSchema:
      type: object
      properties:
        to: {$ref: '../defs/common.yaml#/$defs/Address'}
        weight: {type: number, exclusiveMinimum: 0}
      required: [to]
  - name: find_office
    description: Find an office.
    inputSchema:
      type: object
      properties:
        near: {$ref: '../defs/common.yaml#/$defs/Address'}
  - name: tag_note
    description: Tag a note.
    inputSchema:
      type: object
      properties:
        tag: {type: string, enum: [GetWeatherArgsWind, plain]}
        tree:
          type: object
          properties:
            label: {type: string}
            children: {type: array, items: {type: object, properties: {label: {type: string}}}}
"""


@pytest.fixture(scope="module")
def built_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("remake") / "project"
    root.mkdir()
    project = Project(root)
    project.write("schemas/tools.yaml", TOOLS)
    project.write("defs/common.yaml", COMMON)
    assert toolgen.build(project.root).written
    return root


@pytest.fixture
def remakes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[set[str], bool]]:
    """Each call of remake_tools in the test: the tools it was asked to remake, and whether it did."""
    calls: list[tuple[set[str], bool]] = []
    real = model_remake.remake_tools

    def recorded(*args: Any, **kwargs: Any) -> Any:
        made = real(*args, **kwargs)
        calls.append((set(args[4]), made is not None))
        return made

    monkeypatch.setattr(model_remake, "remake_tools", recorded)
    return calls


def _built(built_once: Path, tmp_path: Path) -> Project:
    return Project.copy_of(built_once, tmp_path / "project")


def _fresh(project: Project, root: Path) -> dict[str, bytes]:
    """What a build of the same inputs writes with nothing kept."""
    copy = Project.copy_of(project.root, root)
    shutil.rmtree(copy.root / ".toolgen-cache")
    shutil.rmtree(copy.root / "generated")
    assert toolgen.build(copy.root).written
    return copy.snapshot()


def _edited_as_from_nothing(tmp_path: Path, before: str, after: str) -> Project:
    """A project built with `before` as its tools, then `after`: asserted to be what a build from nothing writes."""
    (tmp_path / "project").mkdir()
    project = Project(tmp_path / "project")
    project.write("schemas/tools.yaml", before)
    assert toolgen.build(project.root).written
    project.write("schemas/tools.yaml", after)
    assert toolgen.build(project.root).written
    assert project.snapshot() == _fresh(project, tmp_path / "fresh")
    return project


def _edit(project: Project, *pairs: tuple[str, str]) -> None:
    text = TOOLS
    for old, new in pairs:
        assert old in text, old
        text = text.replace(old, new, 1)
    project.write("schemas/tools.yaml", text)


NEW_OBJECT = (
    "        unit: {type: string, enum: [celsius, fahrenheit]}\n",
    "        unit: {type: string, enum: [celsius, fahrenheit]}\n"
    "        wind:\n"
    "          type: object\n"
    "          properties:\n"
    "            speed: {type: number}\n"
    "            gusts: {type: array, items: {type: object, properties: {peak: {type: number}}}}\n",
)
REMADE: dict[str, tuple[tuple[tuple[str, str], ...], set[str]]] = {
    "a description": ((("description: The city.", "description: The city's name."),), {"get_weather"}),
    "a new nested object": (((NEW_OBJECT[0], NEW_OBJECT[1].replace("wind", "sky")),), {"get_weather"}),
    "nested objects removed": (
        (("              stops: {type: array, items: {type: object, properties: {city: {type: string}}}}\n", ""),),
        {"book_trip"},
    ),
    "an output schema": ((("booking: {type: string}", "booking: {type: integer}"),), {"book_trip"}),
    "two tools at once": (
        (
            ("description: The city.", "description: Where."),
            ("origin: {type: string}", "origin: {type: string, minLength: 3}"),
        ),
        {"get_weather", "book_trip"},
    ),
}


@pytest.mark.parametrize("name", REMADE)
def test_an_edited_tool_alone_is_remade_as_a_build_from_nothing_makes_it(
    built_once: Path, tmp_path: Path, remakes: list[tuple[set[str], bool]], name: str
) -> None:
    edits, tools = REMADE[name]
    project = _built(built_once, tmp_path)
    _edit(project, *edits)
    result = toolgen.build(project.root)
    assert result.written
    assert remakes == [(tools, True)]
    assert project.snapshot() == _fresh(project, tmp_path / "fresh")
    assert toolgen.check(project.root).ok and toolgen.check(project.root, full=True).ok


def test_a_remade_tool_that_takes_a_name_another_tool_mentions_makes_every_model(
    built_once: Path, tmp_path: Path, remakes: list[tuple[set[str], bool]]
) -> None:
    # tag_note's enum holds "GetWeatherArgsWind": a whole split counts that as a reference and shares the class.
    project = _built(built_once, tmp_path)
    _edit(project, NEW_OBJECT)
    assert toolgen.build(project.root).written
    assert remakes == [({"get_weather"}, False)], "the remake declined"
    fresh = _fresh(project, tmp_path / "fresh")
    assert project.snapshot() == fresh
    assert not any(
        name.endswith("get_weather.py") and b"class GetWeatherArgsWind(" in data for name, data in fresh.items()
    )


def test_a_remade_tool_that_takes_a_name_a_shared_module_mentions_makes_every_model(
    built_once: Path, tmp_path: Path, remakes: list[tuple[set[str], bool]]
) -> None:
    # The Address definition, shared by two tools, has "GetWeatherArgsCloud" among its enum's values.
    project = _built(built_once, tmp_path)
    _edit(project, (NEW_OBJECT[0], NEW_OBJECT[1].replace("wind", "cloud")))
    assert toolgen.build(project.root).written
    assert remakes == [({"get_weather"}, False)], "the remake declined"
    assert project.snapshot() == _fresh(project, tmp_path / "fresh")


REFUSED: dict[str, tuple[str, str]] = {
    "the shared definition": ("street: {type: string}", "street: {type: string, minLength: 1}"),
    "a tool beside the shared definition": ("weight: {type: number, exclusiveMinimum: 0}", "weight: {type: number}"),
    "a tool reaching the shared definition": (
        "near: {$ref: '../defs/common.yaml#/$defs/Address'}",
        "near: {$ref: '../defs/common.yaml#/$defs/Address', description: Near.}",
    ),
}


@pytest.mark.parametrize("name", REFUSED)
def test_an_edit_the_remake_cannot_vouch_for_makes_every_model(
    built_once: Path, tmp_path: Path, remakes: list[tuple[set[str], bool]], name: str
) -> None:
    old, new = REFUSED[name]
    project = _built(built_once, tmp_path)
    if name == "the shared definition":
        assert old in COMMON
        project.write("defs/common.yaml", COMMON.replace(old, new))
    else:
        _edit(project, (old, new))
    assert toolgen.build(project.root).written
    assert all(not made for _, made in remakes), remakes
    assert project.snapshot() == _fresh(project, tmp_path / "fresh")


def test_edits_one_after_another_stay_what_a_build_from_nothing_makes(
    built_once: Path, tmp_path: Path, remakes: list[tuple[set[str], bool]]
) -> None:
    project = _built(built_once, tmp_path)
    steps: list[Callable[[], None]] = [
        lambda: _edit(project, ("description: The city.", "description: One.")),
        lambda: _edit(
            project,
            ("description: The city.", "description: Two."),
            ("origin: {type: string}", "origin: {type: integer}"),
        ),
        lambda: _edit(project, ("legs:\n          type: array", "legs:\n          minItems: 1\n          type: array")),
        lambda: _edit(project),
    ]
    for number, step in enumerate(steps):
        step()
        assert toolgen.build(project.root).written
        assert project.snapshot() == _fresh(project, tmp_path / f"fresh{number}"), f"step {number}"
    assert remakes and all(made for _, made in remakes)


FOREIGN = """\
tools:
  - name: translate
    description: Translate a text.
    inputSchema:
      type: object
      properties:
        text: {type: string}
        größe: {type: integer}
  - name: measure
    description: Measure a parcel.
    inputSchema:
      type: object
      properties:
        unit: {type: string}
"""


@pytest.mark.parametrize(
    ("edit", "remade"),
    [
        (("unit: {type: string}", "unit: {type: string}\n        groe: {type: string}"), False),
        (("größe: {type: integer}", "größe: {type: integer, minimum: 1}"), True),
        (("unit: {type: string}", "unit: {type: string, minLength: 1}"), True),
    ],
    ids=["another tool takes its attribute name", "the tool itself", "another tool"],
)
def test_names_outside_ascii_keep_the_attribute_names_a_build_from_nothing_gives(
    tmp_path: Path, remakes: list[tuple[set[str], bool]], edit: tuple[str, str], remade: bool
) -> None:
    # Such a name's attribute is chosen clear of every ASCII property name of the schema (`größe` is `groe`, or
    # `groe2` once another tool has a `groe`): an edit that moves one makes every model again.
    project = _edited_as_from_nothing(tmp_path, FOREIGN, FOREIGN.replace(*edit))
    assert toolgen.check(project.root, full=True).ok
    assert len(remakes) == 1 and remakes[0][1] is remade, remakes


def _rewrite_entry(project: Project, change: Callable[[list[Any]], None]) -> None:
    """The models cache's entry with its parts changed by `change`, its hash made to match: read back whole."""
    path = project.root / ".toolgen-cache" / "models.json"
    head, body = path.read_bytes().split(b"\n", 1)
    parts = json.loads(body)
    change(parts)
    body = json.dumps(parts, sort_keys=True).encode()
    path.write_bytes(
        json.dumps({**json.loads(head), "check": hashlib.sha256(body).hexdigest()}).encode() + b"\n" + body
    )


def _set(parts: list[Any], index: int, key: str, value: str) -> None:
    parts[index][key] = value


MALFORMED: dict[str, Callable[[list[Any]], None]] = {
    "a definition too many": lambda parts: _set(
        parts, 3, "definitions", json.dumps([*json.loads(parts[3]["definitions"]), 5])
    ),
    "definitions not pairs": lambda parts: _set(
        parts, 3, "definitions", json.dumps([[] for _ in json.loads(parts[3]["definitions"])])
    ),
    "sole a number": lambda parts: _set(parts, 2, "sole", "5"),
    "mentions a list": lambda parts: _set(parts, 2, "mentions", "[1, 2]"),
    "mentions of numbers": lambda parts: _set(parts, 2, "mentions", json.dumps({"get_weather": [1]})),
    "core names a string": lambda parts: _set(parts, 2, "core_names", json.dumps("Message")),
    "no layout": lambda parts: parts[2].clear(),
}


@pytest.mark.parametrize("name", MALFORMED)
def test_an_entry_not_as_written_is_not_read(built_once: Path, tmp_path: Path, name: str) -> None:
    project = _built(built_once, tmp_path)
    _rewrite_entry(project, MALFORMED[name])
    _edit(project, ("description: The city.", "description: Where."))
    assert toolgen.build(project.root).written
    assert project.snapshot() == _fresh(project, tmp_path / "fresh")


SHADOWING = """\
tools:
  - name: a
    description: A field named like a builtin.
    inputSchema:
      type: object
      properties:
        x: {type: integer}
        int: {type: "null"}
  - name: b
    description: Another tool.
    inputSchema:
      type: object
      properties:
        n: {type: integer, description: One.}
"""


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (SHADOWING, SHADOWING.replace("description: One.", "description: Two.")),
        (SHADOWING, SHADOWING.replace('        int: {type: "null"}\n', "")),
        (SHADOWING.replace('        int: {type: "null"}\n', ""), SHADOWING),
    ],
    ids=["another tool edited", "the field removed", "the field added"],
)
def test_with_a_field_named_like_a_builtin_before_or_after_every_model_is_made(
    tmp_path: Path, remakes: list[tuple[set[str], bool]], before: str, after: str
) -> None:
    # A field `int` in tool a makes generate() import `int` as `int_aliased` for the whole module: tool b's module
    # then writes `int_aliased`, which generate() over b alone would not (and kept, goes on writing it).
    _edited_as_from_nothing(tmp_path, before, after)
    assert remakes and all(not made for _, made in remakes), remakes


UNREACHED = """\
tools:
  - name: keep_tree
    description: A tree.
    inputSchema:
      type: object
      properties:
        root: {$ref: '#/$defs/Node'}
      $defs:
        Node:
          type: object
          properties:
            label: {type: string}
            kids: {type: array, items: {$ref: '#/$defs/Node'}}
  - name: other
    description: Another tool.
    inputSchema:
      type: object
      properties:
        x: {type: string}
"""


def test_a_definition_the_tool_stops_reaching_makes_every_model(
    tmp_path: Path, remakes: list[tuple[set[str], bool]]
) -> None:
    # The tool's $defs still hold Node, which nothing reaches any more: a whole split puts it in models.py.
    _edited_as_from_nothing(
        tmp_path, UNREACHED, UNREACHED.replace("root: {$ref: '#/$defs/Node'}", "root: {type: string}")
    )
    assert remakes == [({"keep_tree"}, False)]
