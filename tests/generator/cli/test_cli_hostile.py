"""Hostile and careless input at the command line: every bad input is exit 3 with its place, never a made-up pass."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from support.cli_in_process import Ran, toolgen_in
from support.projects import Project, default_sigint

ANTHROPIC_RESPONSE = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude",
    "content": [{"type": "text", "text": "hi"}],
    "stop_reason": "end_turn",
    "usage": {"input_tokens": 1, "output_tokens": 1},
}


def toolgen(*args: str, stdin: str | None = None, cwd: Path | None = None) -> Ran:
    return toolgen_in(cwd, *args, stdin=stdin)


# --- decode / encode / convert -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content", "place", "expected"),
    [
        ("garbage.txt", "garbage", "1:1", "not a JSON body or a recorded stream"),
        ("empty.json", "", "1:1", "empty input: nothing to decode"),
        ("blank.sse", "\n\n", "1:1", "empty input: nothing to decode"),
        ("cut.json", '{"model": "x",\n "messages": [', "2:15", "not a JSON body"),
        ("cut.txt", '{"model": "x",\n "messages": [', "2:15", "not a JSON body"),
        ("numbers.json", "[1, 2]", "1:1", "not a JSON body or a recorded stream"),
        ("nan.json", '{"model": "x", "temperature": NaN}', "1:1", "/temperature: is NaN"),
        ("twice.json", '{"model": "x", "model": "y"}', "1:1", "/model: appears more than once"),
        ("deep.json", "[" * 5_000 + "]" * 5_000, "1:1", "deeper than 128 levels"),
        ("long.json", '{"seed": ' + "9" * 6_000 + "}", "1:1", "/seed: is an integer of 6000 digits"),
        ("huge.txt", '{"temperature": 1e400}', "1:1", "/temperature: "),
    ],
)
@pytest.mark.parametrize("verb", [("decode",), ("convert", "--to", "openai")])
def test_garbage_empty_and_truncated_payloads_are_exit_3_with_the_place(
    tmp_path: Path, verb: tuple[str, ...], name: str, content: str, place: str, expected: str
) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    result = toolgen(*verb, name, cwd=tmp_path)
    assert result.returncode == 3, result.stdout + result.stderr
    assert result.stdout.startswith(f"{name}:{place}: error payload-invalid "), result.stdout
    assert expected in result.stdout
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("stdin", ["", "   \n", "garbage", '{"messages": [', "data: {\n\n"])
def test_bad_stdin_is_exit_3_for_decode_and_convert(stdin: str) -> None:
    for verb in (("decode", "-"), ("convert", "-", "--to", "anthropic")):
        result = toolgen(*verb, stdin=stdin)
        assert result.returncode == 3, (verb, stdin, result.stdout, result.stderr)
        assert result.stdout.startswith("<stdin>:"), result.stdout
        assert "{" not in result.stdout.split("payload-invalid", 1)[0]  # no body was printed before the error


def test_a_wrong_wire_says_what_the_body_looks_like(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps(ANTHROPIC_RESPONSE), encoding="utf-8")
    wrong = toolgen("decode", "a.json", "--wire", "gemini", cwd=tmp_path)
    assert wrong.returncode == 3, wrong.stdout
    assert "nothing in this body is a gemini response" in wrong.stdout
    assert "--wire anthropic" in wrong.stdout
    converted = toolgen("convert", "a.json", "--from", "gemini", "--to", "openai", cwd=tmp_path)
    assert converted.returncode == 3 and converted.stdout.startswith("a.json:1:1: error payload-invalid")
    right = toolgen("decode", "a.json", "--wire", "anthropic", cwd=tmp_path)
    assert right.returncode == 0, right.stdout + right.stderr
    assert json.loads(right.stdout)["response"]["message"]["content"] == "hi"


@pytest.mark.parametrize(
    ("body", "pointer"),
    [
        ({"request": 5}, "/request"),
        ({"request": {"messages": "hello"}}, "/request/messages"),
        ({"response": []}, "/response"),
        ({"response": {"message": {"role": "assistant", "content": "x"}, "extras": 3}}, "/response/extras"),
        ({"error": "boom"}, "/error"),
        # Messages the canonical schema refuses: the wires' encoders would make up what is missing.
        ([{}], "/0/role"),
        ([{"role": ["user"]}], "/0/role"),
        ({"messages": [{"role": "user", "content": "hi"}, {"role": "nobody"}]}, "/messages/1/role"),
        ([{"role": "user"}], "/0/content"),
        ([{"role": "user", "content": "hi", "contnet": "x"}], "/0/contnet"),
        ({"request": {"messages": [{"role": "tool", "content": "x"}]}}, "/request/messages/0/tool_call_id"),
        (
            [{"role": "assistant", "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f"}}]}],
            "/0/tool_calls/0/function/arguments",
        ),
        ({"response": {"message": {"role": "assistant", "content": 5}}}, "/response/message/content"),
        ({"response": {"message": "hello"}}, "/response/message"),
    ],
)
@pytest.mark.parametrize("wire", ["openai", "anthropic", "gemini"])
def test_encode_of_malformed_canonical_json_is_exit_3_at_its_pointer(
    tmp_path: Path, body: object, pointer: str, wire: str
) -> None:
    (tmp_path / "c.json").write_text(json.dumps(body), encoding="utf-8")
    result = toolgen("encode", "c.json", "--wire", wire, cwd=tmp_path)
    assert result.returncode == 3, result.stdout + result.stderr
    assert f"payload-invalid {pointer}: expected" in result.stdout


def test_encode_of_no_messages_is_exit_3() -> None:
    result = toolgen("encode", "-", "--wire", "anthropic", stdin="[]")
    assert result.returncode == 3, result.stdout + result.stderr
    assert "<stdin>:1:1: error payload-invalid an empty list of messages: nothing to encode" in result.stdout


def test_what_decode_prints_encodes_again(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps(ANTHROPIC_RESPONSE), encoding="utf-8")
    decoded = toolgen("decode", "a.json", cwd=tmp_path)
    (tmp_path / "c.json").write_text(decoded.stdout, encoding="utf-8")
    encoded = toolgen("encode", "c.json", "--wire", "anthropic", cwd=tmp_path)
    assert encoded.returncode == 0, encoded.stdout + encoded.stderr
    assert json.loads(encoded.stdout)["content"] == [{"type": "text", "text": "hi"}]


# --- build: toolgen.yaml -------------------------------------------------------------------------------------

TOOL = """\
name: get_weather
description: The weather in a city.
inputSchema:
  type: object
  properties:
    city: {type: string}
  required: [city]
"""


def config(inputs: list[str], output: str = "generated") -> str:
    lines = "".join(f"  - {pattern}\n" for pattern in inputs)
    return f"version: v1\npackage: sdk\noutput: {output}\ninputs:\n{lines}"


def test_output_naming_a_file_is_exit_3_at_output(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("schemas/weather.yaml", TOOL)
    project.write("toolgen.yaml", config(["schemas/*.yaml"], output="out.txt"))
    project.write("out.txt", "not a folder\n")
    result = toolgen_in(project.root, "build")
    assert result.returncode == 3, result.stdout + result.stderr
    assert result.stdout.startswith("toolgen.yaml:3:9: error config-output output 'out.txt' is a file"), result.stdout
    project.write("toolgen.yaml", config(["schemas/*.yaml"], output="out.txt/deeper"))
    nested = toolgen_in(project.root, "build")
    assert nested.returncode == 3 and "'out.txt' in output 'out.txt/deeper' is a file" in nested.stdout
    assert (project.root / "out.txt").read_bytes() == b"not a folder\n"


def test_inputs_that_match_nothing_are_an_error_at_the_glob(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("schemas/weather.yaml", TOOL)
    project.write("toolgen.yaml", config(["schemaz/*.yaml"]))
    result = toolgen_in(project.root, "build")
    assert result.returncode == 3, result.stdout + result.stderr
    assert result.stdout.startswith("toolgen.yaml:5:5: error input-unmatched input 'schemaz/*.yaml' matches no file")
    assert "the project has no tools" in result.stdout
    assert not (project.root / "generated").exists()


def test_inputs_holding_only_shared_definitions_are_an_error(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("schemas/common.yaml", "$defs:\n  city: {type: string}\n")
    result = toolgen_in(project.root, "build")
    assert result.returncode == 3, result.stdout + result.stderr
    assert result.stdout.startswith("toolgen.yaml:5:5: error no-tools the 1 file(s) the inputs match hold no tool")
    assert not (project.root / "generated").exists()


def test_a_glob_among_others_that_matches_nothing_is_a_warning_at_its_place(
    make_project: Callable[..., Project],
) -> None:
    project = make_project()
    project.write("schemas/weather.yaml", TOOL)
    # a missing folder is a typo; *.json beside *.yaml in the folder that holds the tools is a choice
    project.write("toolgen.yaml", config(["schemas/*.json", "schemas/*.yaml", "shemas/*.yaml"]))
    result = toolgen_in(project.root, "build")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == "toolgen.yaml:7:5: warning input-unmatched input 'shemas/*.yaml' matches no file\n"


# --- build: tool definitions ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "place", "meant"),
    [
        ("name: f\ndescription: d\nparamters:\n  type: object\n", "3:1", "'paramters'; did you mean 'parameters'?"),
        (
            "name: f\ndescription: d\ninputschema:\n  type: object\n",
            "3:1",
            "'inputschema'; did you mean 'inputSchema'?",
        ),
        ("name: f\ninputSchema: {type: object}\ndescrption: d\n", "3:1", "'descrption'; did you mean 'description'?"),
        ("name: f\ninputSchema: {type: object}\noutput_schema: {}\n", "3:1", "did you mean 'outputSchema'?"),
    ],
)
def test_a_misspelled_tool_key_is_an_error_with_a_suggestion(
    make_project: Callable[..., Project], text: str, place: str, meant: str
) -> None:
    project = make_project()
    project.write("schemas/f.yaml", text)
    result = toolgen_in(project.root, "build")
    assert result.returncode == 3, result.stdout + result.stderr
    assert result.stdout.startswith(f"schemas/f.yaml:{place}: error unknown-key unknown tool key "), result.stdout
    assert meant in result.stdout
    assert not (project.root / "generated").exists()


def test_a_misspelled_key_in_a_tool_without_arguments_is_named_too(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("schemas/f.yaml", "name: f\nparamters: {type: object}\n")
    result = toolgen_in(project.root, "build")
    assert result.returncode == 3
    assert "did you mean 'parameters' for 'paramters'?" in result.stdout


@pytest.mark.parametrize(
    ("schema", "place", "meant"),
    [
        ("{type: object, propertys: {city: {type: string}}}", "3:29", "'propertys'; did you mean 'properties'?"),
        ("{type: object, properites: {city: {type: string}}}", "3:29", "'properites'; did you mean 'properties'?"),
        (
            "{type: object, properties: {city: {type: string}}, requird: [city]}",
            "3:65",
            "'requird'; did you mean 'required'?",
        ),
        ("{type: object, properties: {city: {tpye: string}}}", "3:49", "'tpye'; did you mean 'type'?"),
        (
            "{type: object, properties: {city: {type: string, maxLenght: 3}}}",
            "3:63",
            "'maxLenght'; did you mean 'maxLength'?",
        ),
        (
            "{type: object, properties: {tags: {type: array, items: {type: string, min_length: 1}}}}",
            "3:84",
            "'min_length'; did you mean 'minLength'?",
        ),
        ("{type: object, additional_properties: false}", "3:29", "did you mean 'additionalProperties'?"),
    ],
)
def test_a_misspelled_schema_keyword_is_an_error_at_its_key(
    make_project: Callable[..., Project], schema: str, place: str, meant: str
) -> None:
    project = make_project()
    project.write("schemas/f.yaml", f"name: f\ndescription: d\ninputSchema: {schema}\n")
    result = toolgen_in(project.root, "build")
    assert result.returncode == 3, result.stdout + result.stderr
    assert result.stdout.startswith(f"schemas/f.yaml:{place}: error unknown-keyword unknown schema keyword "), (
        result.stdout
    )
    assert meant in result.stdout
    assert not (project.root / "generated").exists()


def test_property_names_and_words_of_ones_own_are_no_misspelled_keywords(make_project: Callable[..., Project]) -> None:
    project = make_project()
    properties = "{propertys: {type: string}, requird: {type: string, example: x, x-typ: 1, enumDescriptions: [a]}}"
    project.write(
        "schemas/f.yaml", f"name: f\ndescription: d\ninputSchema: {{type: object, properties: {properties}}}\n"
    )
    result = toolgen_in(project.root, "build")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "unknown-keyword" not in result.stdout


def test_an_unrelated_unknown_key_stays_a_warning(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("schemas/weather.yaml", TOOL + "x-owner: team-a\n")
    result = toolgen_in(project.root, "build")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "warning unknown-key unknown tool key 'x-owner' is ignored" in result.stdout


def test_the_summary_counts_errors_and_warnings_apart(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("schemas/f.yaml", "name: f\ninputSchema: {type: object}\ndescrption: d\nx-owner: a\n")
    result = toolgen_in(project.root, "build")
    assert result.returncode == 3
    assert result.stdout.count(" error ") == 1 and result.stdout.count(" warning ") == 1, result.stdout
    assert result.stderr.endswith("\ntoolgen: 1 error, 1 warning in the input; nothing was written\n")


# --- build: numbers, surrogates, depth ------------------------------------------------------------------------


def weather(**extra: object) -> dict[str, object]:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    return {"name": "get_weather", "description": "d", "inputSchema": schema, **extra}


def nested(levels: int) -> dict[str, object]:
    schema: dict[str, object] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}, "required": ["a"]}
    return schema


@pytest.mark.parametrize(
    ("name", "text", "place", "expected"),
    [
        (
            "timeout.json",
            '{"name": "f", "timeout": 1e400, "inputSchema": {"type": "object"}}',
            "1:26",
            "number too large",
        ),
        (
            "enum.json",
            '{"name": "f", "inputSchema": {"type": "object", "properties": {"a": {"enum": [1, -1e999]}}}}',
            "1:82",
            "number too large",
        ),
        ("const.yaml", "name: f\ninputSchema:\n  properties:\n    a: {const: 1e400}\n", "4:16", "number too large"),
        (
            "meta.json",
            '{"name": "f", "meta": {"x": 2e308}, "inputSchema": {"type": "object"}}',
            "1:29",
            "number too large",
        ),
        (
            "enum-surrogate.json",
            '{"name": "f", "inputSchema": {"properties": {"a": {"enum": ["ok", "\\ud800"]}}}}',
            "1:67",
            "lone surrogate (U+D800",
        ),
        ("description.json", '{"name": "f", "description": "x\\udfff", "inputSchema": {}}', "1:30", "lone surrogate"),
        (
            "property.json",
            '{"name": "f", "inputSchema": {"properties": {"\\udc00": {"type": "string"}}}}',
            "1:46",
            "key: string holds a lone surrogate",
        ),
        ("name.json", '{"name": "f\\ud83d", "inputSchema": {}}', "1:10", "lone surrogate"),
        # An integer past the float range: most JSON readers (and the generated bounds) take it as infinity.
        (
            "bound.yaml",
            "name: f\ninputSchema:\n  properties:\n    a: {type: number, maximum: 1" + "0" * 400 + "}\n",
            "4:32",
            "number too large",
        ),
        (
            "bound.json",
            '{"name": "f", "inputSchema": {"properties": {"a": {"maximum": -1' + "0" * 400 + "}}}}",
            "1:63",
            "number too large",
        ),
        # Longer than Python's int() reads (4,300 digits): refused at the number, not as a crash or at 1:1.
        (
            "digits.yaml",
            "name: f\ninputSchema:\n  properties:\n    a: {maxLength: " + "9" * 5_000 + "}\n",
            "4:20",
            "number too large",
        ),
        ("digits.json", '{"name": "f", "timeout": ' + "9" * 5_000 + ', "inputSchema": {}}', "1:26", "number too large"),
        ("hex.yaml", "name: f\ntimeout: 0x" + "f" * 300 + "\ninputSchema: {}\n", "2:10", "number too large"),
    ],
)
def test_values_json_cannot_hold_are_exit_3_at_their_place(
    make_project: Callable[..., Project], name: str, text: str, place: str, expected: str
) -> None:
    project = make_project()
    project.write(f"schemas/{name}", text)
    result = toolgen_in(project.root, "build")
    assert result.returncode == 3, result.stdout + result.stderr
    assert result.stdout.startswith(f"schemas/{name}:{place}: error syntax "), result.stdout
    assert expected in result.stdout
    assert not (project.root / "generated").exists()


def test_nesting_past_the_limit_is_refused_where_it_gets_too_deep(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("schemas/deep.json", json.dumps(weather(inputSchema=nested(32))))
    result = toolgen_in(project.root, "build")
    assert result.returncode == 3, result.stdout + result.stderr
    first = result.stdout.splitlines()[0]
    assert first.startswith("schemas/deep.json:1:") and " error too-deep nested deeper than 64 levels" in first
    assert not first.startswith("schemas/deep.json:1:1:")  # the deep value's column, not the file's start
    assert "toolgen.yaml" not in result.stdout


@pytest.mark.parametrize("levels", [5_000, 200_000])
def test_nesting_too_deep_to_parse_is_exit_3_not_an_internal_error(
    make_project: Callable[..., Project], levels: int
) -> None:
    project = make_project()
    project.write("schemas/deep.json", '{"name": "f", "inputSchema": ' + "[" * levels + "]" * levels + "}")
    result = toolgen_in(project.root, "build")
    assert result.returncode == 3, result.stdout + result.stderr
    assert "error too-deep" in result.stdout and "Traceback" not in result.stderr


def test_nesting_at_the_limit_builds_an_sdk_whose_validators_work(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("schemas/deep.json", json.dumps(weather(inputSchema=nested(31))))
    assert (built := toolgen_in(project.root, "build")).returncode == 0, built.stdout + built.stderr
    good: object = "x"
    bad: object = 5
    for _ in range(31):
        good, bad = {"a": good}, {"a": bad}
    script = (
        "import json, sys\n"
        "from sdk import ToolgenValidationError, validate_tool_arguments\n"
        f"validate_tool_arguments('get_weather', json.loads({json.dumps(json.dumps(good))}))\n"
        "try:\n"
        f"    validate_tool_arguments('get_weather', json.loads({json.dumps(json.dumps(bad))}))\n"
        "except ToolgenValidationError:\n"
        "    print('refused')\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script], cwd=project.root / "generated", capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == "refused\n"


# --- validate: nothing to validate ---------------------------------------------------------------------------


def test_validate_of_an_empty_folder_or_empty_input_is_exit_3(project: Project) -> None:
    (project.root / "records").mkdir()
    (project.root / "records" / "notes.md").write_text("no records here\n", encoding="utf-8")
    folder = toolgen_in(project.root, "validate", "--as", "message", "records")
    assert folder.returncode == 3, folder.stdout + folder.stderr
    assert folder.stdout.startswith("records:1:1: error payload-unreadable no .json, .jsonl or .ndjson file")
    assert "nothing to validate" in folder.stdout
    (project.root / "empty.jsonl").write_text("", encoding="utf-8")
    empty = toolgen_in(project.root, "validate", "--as", "message", "empty.jsonl")
    assert empty.returncode == 3 and "nothing to validate: no record in empty.jsonl" in empty.stderr
    stdin = toolgen_in(project.root, "validate", "--as", "message", "-", stdin="")
    assert stdin.returncode == 3 and "nothing to validate: no record in <stdin>" in stdin.stderr


@pytest.mark.parametrize("wire", ["gemini", "google-interactions"])
def test_validate_as_the_wrong_wire_is_a_finding_not_a_pass(project: Project, wire: str) -> None:
    (project.root / "a.json").write_text(json.dumps(ANTHROPIC_RESPONSE), encoding="utf-8")
    wrong = toolgen_in(project.root, "validate", "--as", f"{wire}.response", "a.json")
    assert wrong.returncode == 1, wrong.stdout + wrong.stderr
    assert wrong.stdout.startswith(f"a.json:1:1: error wire-invalid nothing in this body is a {wire} response"), (
        wrong.stdout
    )
    assert "it looks like the anthropic wire's response" in wrong.stdout
    assert toolgen_in(project.root, "validate", "--as", "anthropic.response", "a.json").returncode == 0


# --- Ctrl-C --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("module", "argv"),
    [
        ("click", ["build"]),  # while the command line's own imports load
        ("toolgen.cli.main", ["build"]),
        ("toolgen.output.drift", ["build"]),  # inside the command (toolgen.api loading), once click runs it
        ("toolgen.ir.lower", ["build", "--force"]),  # a stage the command imports as it runs
        ("jinja2", ["build", "--force"]),
        ("toolgen.payloads.codec", ["decode", "-"]),
    ],
)
def test_ctrl_c_while_the_command_line_loads_or_starts_is_one_line_and_exit_130(
    project: Project, module: str, argv: list[str]
) -> None:
    # A real SIGINT, sent by the process to itself the moment it first imports `module`: the early moments of
    # a run, hit deterministically rather than by racing a timer.
    script = (
        "import builtins, os, signal, sys\n"
        "real = builtins.__import__\n"
        "def interrupting(name, *args, **kwargs):\n"
        f"    if name == {module!r} and name not in sys.modules:\n"
        "        os.kill(os.getpid(), signal.SIGINT)\n"
        "    return real(name, *args, **kwargs)\n"
        "builtins.__import__ = interrupting\n"
        f"sys.argv = ['toolgen', *{argv!r}]\n"
        "from toolgen.__main__ import run\n"
        "run()\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=project.root,
        input="",
        capture_output=True,
        text=True,
        check=False,
        preexec_fn=default_sigint,
    )
    assert "Traceback" not in result.stderr
    assert result.returncode == 130, result.stderr
    assert result.stderr.splitlines()[-1] == "toolgen: interrupted; nothing was written"
    assert len(result.stderr.splitlines()) == 1, result.stderr


def test_validate_names_a_link_in_a_loop_or_leading_nowhere_as_unreadable(project: Project) -> None:
    payloads = project.root / "payloads"
    payloads.mkdir()
    (payloads / "ok.json").write_text('{"role": "user", "content": "hi"}', encoding="utf-8")
    (payloads / "loop.json").symlink_to("loop.json")
    (payloads / "gone.jsonl").symlink_to(project.root / "missing.jsonl")
    alone = toolgen_in(project.root, "validate", "payloads/loop.json", "--as", "message")
    assert alone.returncode == 3, alone.stderr
    assert (
        alone.stdout == "payloads/loop.json:1:1: error file-unreadable cannot read: Too many levels of symbolic links\n"
    )
    # Inside a folder they were skipped without a word; each is named as the link, not as what it misses.
    folder = toolgen_in(project.root, "validate", "payloads", "--as", "message")
    assert folder.returncode == 3, folder.stderr
    assert folder.stdout.splitlines() == [
        "payloads/gone.jsonl:1:1: error file-unreadable cannot read: No such file or directory",
        "payloads/loop.json:1:1: error file-unreadable cannot read: Too many levels of symbolic links",
    ]
    assert "1 record(s), 0 invalid, 2 unreadable" in folder.stderr


@pytest.mark.parametrize("verb", [("export", "--format", "openai"), ("breaking", "--export")])
def test_an_output_file_in_a_folder_that_does_not_exist_is_named_not_an_internal_error(
    project: Project, verb: tuple[str, ...]
) -> None:
    result = toolgen_in(project.root, *verb, *(["-o"] if verb[0] == "export" else []), "no/such/folder/out.json")
    assert result.returncode == 4, result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        "toolgen: cannot write no/such/folder/out.json: No such file or directory; its folder does not exist: "
        "create it first"
    )
    assert "internal error" not in result.stderr
    assert not (project.root / "no").exists()


def test_an_output_file_is_whole_and_keeps_its_mode(project: Project, tmp_path: Path) -> None:
    target = project.root / "tools.json"
    target.write_text("old\n", encoding="utf-8")
    target.chmod(0o640)
    result = toolgen_in(project.root, "export", "--format", "openai", "-o", "tools.json")
    assert result.returncode == 0, result.stderr
    assert json.loads(target.read_text(encoding="utf-8"))[0]["type"] == "function"
    assert target.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in project.root.iterdir() if p.name.startswith(".tools.json")) == []


def test_empty_files_a_byte_that_is_no_utf_8_and_a_missing_name_are_said_where_they_are(
    make_project: Callable[..., Project],
) -> None:
    project = make_project()
    project.write("toolgen.yaml", config(["schemas/*.yaml", "schemas/*.json"]))
    project.write("schemas/weather.yaml", TOOL)
    project.write("schemas/blank.yaml", "  \n")
    project.write("schemas/empty.json", "")
    project.write("schemas/unnamed.yaml", "description: x\ninputSchema: {type: object}\n")
    project.write("schemas/listed.yaml", "tools:\n  - name: a\n    inputSchema: {type: object}\n  - inputSchema: {}\n")
    (project.root / "schemas/latin.yaml").write_bytes(b"name: a\n\ndescription: caf\xe9\n")
    before = project.snapshot()
    result = toolgen_in(project.root, "build")
    assert result.returncode == 3, result.stderr
    assert result.stdout.splitlines() == [
        "schemas/blank.yaml:1:1: error tool-shape the file is empty: expected a tool definition (a mapping)",
        "schemas/empty.json:1:1: error syntax the file is empty: expected JSON",
        "schemas/latin.yaml:3:17: error syntax not UTF-8 text: byte 0xe9 starts no UTF-8 character (save the file "
        "as UTF-8)",
        "schemas/listed.yaml:4:5: error tool-shape /tools/1/name: expected a value (it is required), got nothing",
        "schemas/unnamed.yaml:1:1: error tool-shape /name: expected a value (it is required), got nothing",
    ]
    assert project.snapshot() == before


def test_a_config_or_project_that_is_not_there_is_named_as_given(
    make_project: Callable[..., Project], tmp_path: Path
) -> None:
    project = make_project()
    project.write("schemas/weather.yaml", TOOL)
    missing = tmp_path / "elsewhere" / "toolgen.yaml"
    for args, said in [
        (("--config", str(missing)), f"toolgen: the config file {missing} does not exist"),
        (("--config", "sub/other.yaml"), f"toolgen: the config file {project.root / 'sub/other.yaml'} does not exist"),
        (("-C", str(tmp_path / "nowhere")), f"toolgen: the project folder {tmp_path / 'nowhere'} does not exist"),
    ]:
        result = toolgen_in(project.root, "build", *args)
        assert result.returncode == 3, result.stderr
        assert result.stderr.strip() == said


def test_a_tool_defined_twice_names_both_places(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("toolgen.yaml", config(["schemas/*.yaml"]))
    project.write("schemas/a.yaml", TOOL)
    project.write("schemas/b.yaml", TOOL)
    result = toolgen_in(project.root, "build")
    assert result.returncode == 3
    assert result.stdout.splitlines() == [
        "schemas/b.yaml:1:7: error duplicate-tool tool 'get_weather' is defined here and at schemas/a.yaml:1:7; "
        "names must be unique"
    ]
