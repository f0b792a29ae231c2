"""A package like the last one that passed the staged check is checked only for the tools whose definition or own
model modules changed; any change elsewhere in the package, or in the environment, checks every tool again."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from support.projects import Project

import toolgen
import toolgen.codegen.render
from toolgen.core.errors import BrokenPackageError
from toolgen.output.checked_packages import RECORD, CheckedPackages, package_digest

CORRUPT = b"\x00 not marshal data"
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
  - name: add_note
    description: Add a note.
    inputSchema:
      type: object
      properties:
        text: {type: string, minLength: 1}
      required: [text]
"""


def _compiled(project: Project, module: str) -> Path:
    """The cached compiled code of the package's `module` (a path in the package) as the check keys it."""
    source = (project.package_dir / module).read_bytes()
    salt = importlib.util.MAGIC_NUMBER + bytes([sys.flags.optimize])
    return project.root / ".toolgen-cache" / "bytecode" / hashlib.blake2b(salt + source, digest_size=20).hexdigest()


def _imported(project: Project, module: str) -> bool:
    """Whether the last build's check imported `module`: it replaced the spoiled code it had compiled before."""
    return _compiled(project, module).read_bytes() != CORRUPT


def _spoil_compiled(project: Project) -> None:
    for path in (project.root / ".toolgen-cache" / "bytecode").iterdir():
        path.write_bytes(CORRUPT)


def _record(project: Project) -> dict[str, object]:
    held = json.loads((project.root / ".toolgen-cache" / RECORD).read_text(encoding="utf-8"))
    entry: dict[str, object] = held["packages"][0]
    return entry


@pytest.fixture
def built(make_project: Callable[..., Project]) -> Project:
    project = make_project()
    project.write("schemas/tools.yaml", TOOLS)
    assert toolgen.build(project.root).written
    return project


def _edit_weather(project: Project) -> None:
    project.write("schemas/tools.yaml", TOOLS.replace("description: The city.", "description: The city's name."))


def test_the_record_holds_a_part_for_each_tool(built: Project) -> None:
    parts = _record(built)["parts"]
    assert isinstance(parts, list) and len(parts) == 3 and len(set(parts)) == 3


def test_only_the_edited_tool_is_checked_again(built: Project) -> None:
    _spoil_compiled(built)
    _edit_weather(built)
    result = toolgen.build(built.root)
    assert result.written and "_tool_models/get_weather.py" in result.changed
    assert _imported(built, "_tool_models/get_weather.py")
    assert _imported(built, "models.py") and _imported(built, "tools.py"), "the shared modules are imported always"
    for unchanged in ("_tool_models/find_flight.py", "_tool_models/add_note.py"):
        assert not _imported(built, unchanged), f"{unchanged} passed as it is and is not imported again"
    # the next build's record still holds every tool, those taken as checked included
    parts = _record(built)["parts"]
    assert isinstance(parts, list) and len(parts) == 3


def test_a_tool_whose_models_take_new_names_is_checked_alone(built: Project) -> None:
    # models.py lists every tool's model names (its lazy table, __all__): a tool's own lines are in its part alone.
    _spoil_compiled(built)
    sky = "unit: {type: string, enum: [celsius, fahrenheit]}\n        sky: {type: object, properties: {clouds: {type: integer}}}"
    built.write("schemas/tools.yaml", TOOLS.replace("unit: {type: string, enum: [celsius, fahrenheit]}", sky))
    result = toolgen.build(built.root)
    assert {"models.py", "_tool_models/get_weather.py"} <= set(result.changed)
    assert b"GetWeatherArgsSky" in (built.package_dir / "models.py").read_bytes()
    assert _imported(built, "_tool_models/get_weather.py") and _imported(built, "models.py")
    for unchanged in ("_tool_models/find_flight.py", "_tool_models/add_note.py"):
        assert not _imported(built, unchanged), f"{unchanged} passed as it is and is not imported again"


LINE = '            "AddNoteArgs": "sdk._tool_models.add_note",\n'


@pytest.mark.parametrize(
    ("added", "checked"),
    [
        (LINE, {"get_weather", "add_note"}),  # add_note's own line again: add_note's part changed
        ("            # a line of no tool's\n", {"get_weather", "add_note", "find_flight"}),
    ],
    ids=["a tool's own line", "a line of no tool"],
)
def test_a_changed_line_in_models_py_checks_whose_it_is(
    built: Project, monkeypatch: pytest.MonkeyPatch, added: str, checked: set[str]
) -> None:
    real = toolgen.codegen.render.render

    def changed(*args: object, **kwargs: object) -> dict[str, str]:
        files = real(*args, **kwargs)  # type: ignore[arg-type]
        assert LINE in files["models.py"]
        files["models.py"] = files["models.py"].replace(LINE, LINE + added)
        return files

    monkeypatch.setattr(toolgen.codegen.render, "render", changed)
    _spoil_compiled(built)
    _edit_weather(built)
    assert toolgen.build(built.root).written
    for tool in ("get_weather", "add_note", "find_flight"):
        assert _imported(built, f"_tool_models/{tool}.py") == (tool in checked), tool


@pytest.mark.parametrize("force", [True, False], ids=["every tool checked", "the tool's part changed"])
def test_a_lazy_table_entry_its_module_does_not_define_is_refused(
    built: Project, monkeypatch: pytest.MonkeyPatch, force: bool
) -> None:
    real = toolgen.codegen.render.render

    def misrouted(*args: object, **kwargs: object) -> dict[str, str]:
        files = real(*args, **kwargs)  # type: ignore[arg-type]
        assert LINE in files["models.py"]
        files["models.py"] = files["models.py"].replace(LINE, LINE.replace("add_note", "find_flight"))
        return files

    monkeypatch.setattr(toolgen.codegen.render, "render", misrouted)
    if not force:
        _edit_weather(built)  # a build that renders: only get_weather's part changed, but for the line above
    before = built.snapshot()
    with pytest.raises(BrokenPackageError, match="models.py serves AddNoteArgs from _tool_models/find_flight.py"):
        toolgen.build(built.root, force=force)
    assert built.snapshot() == before


def test_an_unchanged_tool_is_checked_again_once_its_own_module_changes(
    built: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = toolgen.codegen.render.render

    def broken(*args: object, **kwargs: object) -> dict[str, str]:
        files = real(*args, **kwargs)  # type: ignore[arg-type]
        files["_tool_models/add_note.py"] += "\nraise RuntimeError('add_note is broken')\n"
        return files

    monkeypatch.setattr(toolgen.codegen.render, "render", broken)
    _edit_weather(built)
    before = built.snapshot()
    with pytest.raises(BrokenPackageError, match="add_note is broken"):
        toolgen.build(built.root)
    assert built.snapshot() == before


def test_a_change_outside_the_tools_own_modules_checks_every_tool(
    built: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = toolgen.codegen.render.render

    def changed(*args: object, **kwargs: object) -> dict[str, str]:
        files = real(*args, **kwargs)  # type: ignore[arg-type]
        files["validators.py"] += "\nCHANGED = True\n"
        return files

    monkeypatch.setattr(toolgen.codegen.render, "render", changed)
    _spoil_compiled(built)
    assert "validators.py" in toolgen.build(built.root, force=True).changed
    for module in ("_tool_models/get_weather.py", "_tool_models/find_flight.py", "_tool_models/add_note.py"):
        assert _imported(built, module)


def test_a_changed_environment_checks_every_tool(built: Project) -> None:
    record = built.root / ".toolgen-cache" / RECORD
    held = json.loads(record.read_text(encoding="utf-8"))
    held["packages"][0]["environment"] = [
        [p, mtime + 1, *rest] for p, mtime, *rest in held["packages"][0]["environment"]
    ]
    record.write_text(json.dumps(held), encoding="utf-8")
    _spoil_compiled(built)
    _edit_weather(built)
    assert toolgen.build(built.root).written
    for module in ("_tool_models/find_flight.py", "_tool_models/add_note.py"):
        assert _imported(built, module)


def test_parts_of_a_stranger_package_match_no_tool(built: Project) -> None:
    """Parts recorded for other bytes (another package, another toolgen) never stand for these tools."""
    record = built.root / ".toolgen-cache" / RECORD
    held = json.loads(record.read_text(encoding="utf-8"))
    held["packages"][0]["parts"] = ["0" * 32, "f" * 32]
    record.write_text(json.dumps(held), encoding="utf-8")
    _spoil_compiled(built)
    _edit_weather(built)
    assert toolgen.build(built.root).written
    for module in ("_tool_models/find_flight.py", "_tool_models/add_note.py"):
        assert _imported(built, module)


@pytest.mark.parametrize("parts", ["abc", [1, 2], {"a": 1}, [None]])
def test_a_record_with_malformed_parts_is_not_read(tmp_path: Path, parts: object) -> None:
    path = tmp_path / RECORD
    digest = package_digest("sdk", {"models.py": ""}, "checker")
    CheckedPackages(path).add(digest, 1, [], ["a" * 32])
    held = json.loads(path.read_text(encoding="utf-8"))
    held["packages"][0]["parts"] = parts
    path.write_text(json.dumps(held), encoding="utf-8")
    record = CheckedPackages(path)
    assert record.passed(digest) is None and record.reusable() is None


def test_the_parts_are_offered_only_in_the_environment_they_passed_in(tmp_path: Path) -> None:
    module = tmp_path / "module.py"
    module.write_text("x = 1\n", encoding="utf-8")
    from toolgen.core.stamps import stamp

    stat = stamp(str(module))
    assert stat is not None
    record = CheckedPackages(tmp_path / RECORD)
    assert record.reusable() is None
    record.add(package_digest("sdk", {}, "checker"), 2, [(str(module), *stat)], ["b" * 32, "a" * 32])
    assert record.reusable() == (["a" * 32, "b" * 32], [(str(module), *stat)])
    module.write_text("x = 22\n", encoding="utf-8")
    assert record.reusable() is None


def test_another_toolgen_checks_every_tool(built: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """Parts passed under one toolgen stand for nothing under another: it may write tools.py's code differently."""
    import toolgen.output.sdk_check

    monkeypatch.setattr(toolgen.output.sdk_check, "source_digest", lambda: "another toolgen")
    _spoil_compiled(built)
    _edit_weather(built)
    assert toolgen.build(built.root).written
    for module in ("_tool_models/find_flight.py", "_tool_models/add_note.py"):
        assert _imported(built, module)
