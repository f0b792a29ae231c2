"""Tool names that fold onto one identifier: the one spelled as that identifier keeps it, whatever is added beside."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

from support.projects import Project

TOOL = "- name: {name}\n  description: {description}\n  inputSchema: {{type: object, properties: {{{prop}: {{type: string}}}}}}\n"


def _tools(project: Project, *tools: tuple[str, str, str]) -> None:
    for file, name, prop in tools:
        project.write(f"schemas/{file}.yaml", TOOL.format(name=name, description=f"The {name} tool.", prop=prop))


def _names(project: Project) -> list[str]:
    """For each tool: its name, Tools() attribute, arguments class and that class's one field."""
    script = (
        "import sdk\n"
        "tools = sdk.Tools()\n"
        "for attribute in sorted(a for a in dir(tools) if not a.startswith('_')):\n"
        "    entry = getattr(tools, attribute)\n"
        "    spec = getattr(entry, 'spec', None)\n"
        "    if spec is not None:\n"
        "        print(spec.name, attribute, spec.args_model.__name__, *spec.args_model.model_fields)\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", script], cwd=project.root / "generated", capture_output=True, text=True, check=False
    )
    assert ran.returncode == 0, ran.stderr
    return sorted(ran.stdout.splitlines())


def test_a_tool_added_whose_name_sorts_first_takes_no_name_from_the_tool_spelled_as_it(
    make_project: Callable[..., Project],
) -> None:
    project = make_project()
    _tools(project, ("weather", "get_current_weather", "location"))
    assert project.cli("build").returncode == 0
    before = _names(project)
    assert before == ["get_current_weather get_current_weather GetCurrentWeatherArgs location"]
    # `GetCurrentWeather` and `get-current-weather` sort before `get_current_weather` and fold onto its names.
    _tools(project, ("added", "GetCurrentWeather", "other"), ("more", "get-current-weather", "third"))
    built = project.cli("build")
    assert built.returncode == 0, built.stderr
    after = _names(project)
    assert before[0] in after
    assert after == [
        "GetCurrentWeather get_current_weather2 GetCurrentWeatherArgs2 other",
        "get-current-weather get_current_weather3 GetCurrentWeatherArgs3 third",
        "get_current_weather get_current_weather GetCurrentWeatherArgs location",
    ]
    assert (
        "schemas/added.yaml:1:9: warning name-collision tool 'GetCurrentWeather' gets the class GetCurrentWeatherArgs2"
        in built.stdout
    )


def test_definitions_named_as_what_the_models_modules_import_take_other_names(
    make_project: Callable[..., Project],
) -> None:
    # Each is a name a models module imports or writes itself: a class of that name would hide it.
    names = ("TypeAlias", "DeferredRootModel", "FrozenList", "Field", "TYPE_CHECKING", "lazy_attributes")
    defs = "".join(f"      {name}: {{type: object, properties: {{v: {{type: integer}}}}}}\n" for name in names)
    props = "".join(f"      p{number}: {{$ref: '#/$defs/{name}'}}\n" for number, name in enumerate(names))
    project = make_project()
    project.write(
        "schemas/tools.yaml",
        "tools:\n- name: hold\n  description: Holds them.\n  inputSchema:\n    type: object\n"
        f"    $defs:\n{defs}    properties:\n{props}",
    )
    assert project.cli("build").returncode == 0
    script = (
        "import sdk\n"
        "args = sdk.validate_tool_arguments('hold', {'p0': {'v': 1}, 'p1': {'v': 2}, 'p2': {'v': 3}})\n"
        "print(sorted(type(getattr(args, f'p{n}')).__name__ for n in range(3)))\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", script], cwd=project.root / "generated", capture_output=True, text=True, check=False
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "['DeferredRootModel2', 'FrozenList2', 'TypeAlias2']"
