"""Names a build gives that are not the ones written: each is said in a `name-collision` warning naming what to
write instead, and a property spelled as its attribute keeps it, whatever the order of the properties."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

from support.projects import Project

TOOL = "  - name: {name}\n    description: The {name} tool.\n    inputSchema: {{type: object}}\n"


def _run(project: Project, script: str) -> str:
    ran = subprocess.run(
        [sys.executable, "-c", script], cwd=project.root / "generated", capture_output=True, text=True, check=False
    )
    assert ran.returncode == 0, ran.stderr
    return ran.stdout


def _attributes(project: Project) -> list[str]:
    """`<tool name> <Tools() attribute>` for each tool."""
    script = (
        "import sdk\n"
        "tools = sdk.Tools()\n"
        "for attribute in sorted(a for a in dir(tools) if not a.startswith('_')):\n"
        "    spec = getattr(getattr(tools, attribute), 'spec', None)\n"
        "    if spec is not None:\n"
        "        print(spec.name, attribute)\n"
    )
    return sorted(_run(project, script).splitlines())


def _warnings(stdout: str) -> list[str]:
    """The warning lines, sorted: the order findings are printed in is the printer's."""
    return sorted(line for line in stdout.splitlines() if ": warning " in line)


def test_tool_names_that_differ_in_case_warn_naming_the_numbered_attribute(
    make_project: Callable[..., Project],
) -> None:
    project = make_project()
    project.write("schemas/extra.yaml", "tools:\n" + TOOL.format(name="getweather") + TOOL.format(name="GETWEATHER"))
    built = project.cli("build")
    assert built.returncode == 0, built.stderr
    assert _warnings(built.stdout) == [
        "schemas/extra.yaml:5:11: warning name-collision tool 'GETWEATHER' gets the attribute tools.getweather2 "
        "because tool 'getweather' has tools.getweather"
    ]
    assert _attributes(project) == ["GETWEATHER getweather2", "getweather getweather"]


def test_tool_names_the_registry_or_python_keeps_warn_naming_the_attribute(
    make_project: Callable[..., Project],
) -> None:
    project = make_project()
    names = ("dispatch", "entry", "require_bound", "__init__", "class", "get_weather")
    project.write("schemas/extra.yaml", "tools:\n" + "".join(TOOL.format(name=name) for name in names))
    built = project.cli("build")
    assert built.returncode == 0, built.stderr
    assert _warnings(built.stdout) == sorted(
        [
            "schemas/extra.yaml:2:11: warning name-collision tool 'dispatch' gets the attribute tools.dispatch2 "
            "because tools.dispatch is the registry's own",
            "schemas/extra.yaml:5:11: warning name-collision tool 'entry' gets the attribute tools.entry2 "
            "because tools.entry is the registry's own",
            "schemas/extra.yaml:8:11: warning name-collision tool 'require_bound' gets the attribute "
            "tools.require_bound2 because tools.require_bound is the registry's own",
            "schemas/extra.yaml:11:11: warning name-collision tool '__init__' gets the attribute tools.init because "
            "an attribute is snake_case words, never a Python keyword or a name starting with `_`",
            "schemas/extra.yaml:14:11: warning name-collision tool 'class' gets the attribute tools.class_ because "
            "an attribute is snake_case words, never a Python keyword or a name starting with `_`",
        ]
    )
    script = (
        "import sdk\n"
        "tools = sdk.Tools()\n"
        "for attribute in ('dispatch2', 'entry2', 'require_bound2', 'init', 'class_', 'get_weather'):\n"
        "    print(attribute, getattr(tools, attribute).spec.name)\n"
    )
    assert _run(project, script).splitlines() == [
        "dispatch2 dispatch",
        "entry2 entry",
        "require_bound2 require_bound",
        "init __init__",
        "class_ class",
        "get_weather get_weather",
    ]


def test_a_class_and_an_attribute_taken_are_said_in_one_warning(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("schemas/extra.yaml", "tools:\n" + TOOL.format(name="get_weather") + TOOL.format(name="getWeather"))
    built = project.cli("build")
    assert built.returncode == 0, built.stderr
    assert _warnings(built.stdout) == [
        "schemas/extra.yaml:5:11: warning name-collision tool 'getWeather' gets the class GetWeatherArgs2 because "
        "GetWeatherArgs is already taken, and the attribute tools.get_weather2 because tool 'get_weather' has "
        "tools.get_weather"
    ]


def test_camel_case_and_dashed_tool_names_alone_build_without_a_warning(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("schemas/extra.yaml", "tools:\n" + TOOL.format(name="getWeather") + TOOL.format(name="list-files"))
    built = project.cli("build")
    assert built.returncode == 0, built.stderr
    assert _warnings(built.stdout) == []


# `a_b` holds an integer, `a-b` a string, written in either order, at the top and in a nested object.
TYPES = {"a_b": "integer", "a-b": "string"}
CLASH = (
    "tools:\n"
    "  - name: clash\n"
    "    description: Clash.\n"
    "    inputSchema:\n"
    "      type: object\n"
    "      properties:\n"
    "        {first}: {{type: {first_type}}}\n"
    "        {second}: {{type: {second_type}}}\n"
    "        nested:\n"
    "          type: object\n"
    "          properties:\n"
    "            {second}: {{type: {second_type}}}\n"
    "            {first}: {{type: {first_type}}}\n"
)
READ = (
    "import sdk\n"
    "args = sdk.validate_tool_arguments('clash', {'a_b': 1, 'a-b': 'dash', 'nested': {'a_b': 2, 'a-b': 'd'}})\n"
    "print(repr(args.a_b), repr(args.a_b_1), repr(args.nested.a_b), repr(args.nested.a_b_1))\n"
    "print(sorted(sdk.validate_tool_arguments('clash', {'a_b': 1}).model_dump(by_alias=True, exclude_none=True)))\n"
)


def test_the_property_spelled_as_the_attribute_keeps_it_in_either_order_with_a_warning(
    make_project: Callable[..., Project],
) -> None:
    for first, second in (("a-b", "a_b"), ("a_b", "a-b")):
        project = make_project()
        types = {"first_type": TYPES[first], "second_type": TYPES[second]}
        project.write("schemas/clash.yaml", CLASH.format(first=first, second=second, **types))
        built = project.cli("build")
        assert built.returncode == 0, built.stderr
        dash_line, nested_dash_line = (7, 13) if first == "a-b" else (8, 12)
        assert _warnings(built.stdout) == sorted(
            [
                f"schemas/clash.yaml:{dash_line}:9: warning name-collision property 'a-b' gets the attribute a_b_1 "
                "because property 'a_b' has a_b",
                f"schemas/clash.yaml:{nested_dash_line}:13: warning name-collision property 'a-b' gets the "
                "attribute a_b_1 because property 'a_b' has a_b",
            ]
        ), first
        assert _run(project, READ).splitlines() == ["1 'dash' 2 'd'", "['a_b']"]


def test_properties_that_do_not_clash_give_no_warning_and_keep_their_attributes(
    make_project: Callable[..., Project],
) -> None:
    project = make_project()
    project.write(
        "schemas/plain.yaml",
        "tools:\n  - name: plain\n    description: Plain.\n    inputSchema:\n      type: object\n"
        "      properties: {getWeather: {type: string}, a-b: {type: string}, fieldx: {type: string}, x: {}}\n",
    )
    built = project.cli("build")
    assert built.returncode == 0, built.stderr
    assert _warnings(built.stdout) == []
    script = "import sdk\nprint(sorted(sdk.TOOLS['plain'].args_model.model_fields))\n"
    assert _run(project, script).strip() == "['a_b', 'fieldx', 'get_weather', 'x']"
