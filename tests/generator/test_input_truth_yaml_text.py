"""Characters of a YAML tool file as YAML 1.2 reads them: a control character is refused at its own line:col,
and U+0085, U+2028 and U+2029, line breaks to YAML 1.1 (PyYAML) but ordinary characters to YAML 1.2, stay the
characters they are, without moving the line:col of anything after them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.projects import Project

from toolgen.source.load import LoadError, parse_text

TOOL = (
    "# A tool.\n"
    "tools:\n"
    "  - name: get_current_weather\n"
    "    title: Current{char}weather\n"
    "    description: Get the current weather.\n"
    "    inputSchema: {{type: object, properties: {{location: {{type: string}}}}}}\n"
)


def _load(text: str) -> object:
    return parse_text(text, Path("tools.yaml"), "tools.yaml").data


def _refusal(text: str) -> str:
    with pytest.raises(LoadError) as caught:
        _load(text)
    return caught.value.diagnostic.format()


@pytest.mark.parametrize(
    ("char", "name"),
    [
        ("\x00", "control character U+0000"),
        ("\x07", "control character U+0007"),
        ("\x1b", "control character U+001B"),
        ("\x7f", "control character U+007F"),
        ("\x9b", "control character U+009B"),
        ("\ufffe", "character U+FFFE"),
    ],
)
def test_a_control_character_is_refused_at_its_line_and_column_by_its_code_point(char: str, name: str) -> None:
    code = f"{ord(char):04X}"
    assert _refusal(TOOL.format(char=char)) == (
        f"tools.yaml:4:19: error syntax invalid YAML: {name} cannot be written in a YAML file; "
        f"write it as \\u{code} inside a double-quoted string"
    )


def test_a_control_character_after_crlf_and_lone_cr_line_ends_is_placed_as_editors_count_lines() -> None:
    text = "a: 1\r\nb: 2\rc: x\x07y\n"
    assert _refusal(text) == (
        "tools.yaml:3:5: error syntax invalid YAML: control character U+0007 cannot be written in a YAML file; "
        "write it as \\u0007 inside a double-quoted string"
    )


def test_an_escaped_control_character_in_a_double_quoted_string_is_read() -> None:
    assert _load('a: "x\\u0007y\\ty"\n') == {"a": "x\x07y\ty"}


def test_build_prints_one_line_naming_the_character_and_nothing_of_pyyaml(make_project: object) -> None:
    project: Project = make_project()  # type: ignore[operator]
    (project.root / "schemas").mkdir()
    (project.root / "schemas" / "weather.yaml").write_bytes(TOOL.format(char="\x07").encode())
    built = project.cli("build", "--format", "json")
    assert built.returncode == 3
    assert json.loads(built.stdout) == [
        {
            "path": "schemas/weather.yaml",
            "line": 4,
            "col": 19,
            "severity": "error",
            "rule": "syntax",
            "message": "invalid YAML: control character U+0007 cannot be written in a YAML file; "
            "write it as \\u0007 inside a double-quoted string",
            "pointer": "",
        }
    ]


@pytest.mark.parametrize("char", ["\x85", "\u2028", "\u2029"])
def test_yaml_1_1_line_breaks_are_characters_of_plain_quoted_and_block_scalars_and_keys(char: str) -> None:
    text = (
        f"plain: Look up where{char}an order is.\n"
        f'double: "a{char}b"\n'
        f"single: 'a{char}b'\n"
        f"block: |\n  a{char}b\n"
        f"folded: >\n  a{char}b\n"
        f"key{char}name: 1\n"
        f"# a comment{char}with: more\n"
        f"flow: [a{char}b, {{k{char}: v}}]\n"
    )
    assert _load(text) == {
        "plain": f"Look up where{char}an order is.",
        "double": f"a{char}b",
        "single": f"a{char}b",
        "block": f"a{char}b\n",
        "folded": f"a{char}b\n",
        f"key{char}name": 1,
        "flow": [f"a{char}b", {f"k{char}": "v"}],
    }


def test_positions_after_a_yaml_1_1_line_break_are_those_of_yaml_1_2() -> None:
    text = (
        "tools:\n"
        "  - name: t\n"
        "    description: a\u2028b\x85c\u2029d\n"
        "    inputSchema:\n"
        "      type: object\n"
        "      properties:\n"
        "        x: {type: string}\n"
        "        x: {type: integer}\n"
    )
    assert _refusal(text) == (
        "tools.yaml:8:9: error duplicate-key key 'x' appears twice in the same mapping; loaders keep only the last"
    )
    # A syntax error after them is placed on its own line too, and its sentence shows no stand-in character.
    broken = "a: x\u2028y\nb: [1, 2\n"
    refused = _refusal(broken)
    assert refused.startswith("tools.yaml:3:1: error syntax invalid YAML: "), refused
    assert all(not "\ue000" <= char <= "\uf8ff" for char in refused)


def test_a_file_holding_the_stand_in_characters_keeps_them_as_they_are() -> None:
    # The stand-ins are private-use characters the file does not hold: those it holds are read as written.
    held = "".join(chr(code) for code in range(0xE000, 0xE010))
    assert _load(f"a: {held}\u2028{held}\nb: '\x85'\n") == {"a": f"{held}\u2028{held}", "b": "\x85"}


def test_the_package_carries_a_description_holding_u2028_as_written(make_project: object) -> None:
    project: Project = make_project()  # type: ignore[operator]
    project.write(
        "schemas/orders.yaml",
        "tools:\n  - name: order_status\n    description: Look up where\u2028an order is.\n"
        "    inputSchema: {type: object, properties: {order_id: {type: string}}}\n",
    )
    built = project.cli("build")
    assert built.returncode == 0, built.stdout + built.stderr
    script = "import sdk; print(ascii(sdk.TOOLS['order_status'].description))"
    ran = subprocess.run(
        [sys.executable, "-c", script], cwd=project.root / "generated", capture_output=True, text=True, check=False
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "'Look up where\\u2028an order is.'"
