"""`toolgen validate`: payload records checked with the generated SDK, each problem at file:line:col with its pointer."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cli_in_process import Ran, toolgen_in
from support.projects import Project

import toolgen
from toolgen.payloads.validation.local import Tally

# The stage module; `toolgen.validate` is the verb that runs it.
validate_stage = importlib.import_module("toolgen.payloads.validation.local")

CALL = '{"id": "c1", "type": "function", "function": {"name": "get_current_weather", "arguments": "%s"}}'
RECORDS = [
    '{"role": "user", "content": "Weather in Paris?"}',
    '{"role": "assistant", "content": null, "tool_calls": [%s]}' % (CALL % '{\\"location\\": \\"Paris\\"}'),
    "",
    '{"role": "assistant", "content": null, "tool_calls": [%s]}' % (CALL % '{\\"location\\": 5}'),
    '{"role": "tool", "content": "sunny"}',
    '{"role": "wizard", "content": "x"}',
    '{"role": "assistant", "tool_calls": [{"id": "c2", "type": "function", "function": {"name": "nope", "arguments": "{}"}}]}',
    '{"role": "tool", "tool_call_id": "c1", "content": "21 C"}',
]


@pytest.fixture(autouse=True)
def _package_name_free() -> Iterator[None]:
    """`sdk` free of the packages of that name other tests of this worker imported from their own projects, as in
    a `toolgen validate` process: with one set aside, load_sdk imports the package anew on every call (and each
    worker process of a large file, forked with it, on every block), which gives the same findings many times
    slower. The modules set aside come back after the test."""
    owned = [name for name in sys.modules if name == "sdk" or name.startswith("sdk.")]
    set_aside = {name: sys.modules.pop(name) for name in owned}
    yield
    for name in [name for name in sys.modules if name == "sdk" or name.startswith("sdk.")]:
        del sys.modules[name]
    sys.modules.update(set_aside)


def test_jsonl_findings_have_exact_lines_pointers_and_exit_1(project: Project) -> None:
    project.write("logs/chat.jsonl", "\n".join(RECORDS) + "\n")
    result = project.cli("validate", "logs/chat.jsonl", "--as", "message")
    assert result.returncode == 1, result.stderr
    assert result.stdout.splitlines() == [
        "logs/chat.jsonl:4:161: error arguments-invalid arguments of 'get_current_weather' at /location: expected a string, got 5",
        "logs/chat.jsonl:5:1: error payload-invalid /tool_call_id: expected a value (it is required), got nothing",
        "logs/chat.jsonl:6:10: error payload-invalid /role: expected one of 'system', 'user', 'assistant', 'tool', got \"wizard\"",
        "logs/chat.jsonl:7:92: error unknown-tool there is no tool named 'nope' (the tools: get_current_weather)",
    ]
    assert "7 record(s), 4 invalid, 0 unreadable" in result.stderr
    as_json = json.loads(project.cli("validate", "logs/chat.jsonl", "--as", "message", "--format", "json").stdout)
    assert [(f["line"], f["pointer"]) for f in as_json] == [
        (4, "/tool_calls/0/function/arguments/location"),
        (5, "/tool_call_id"),
        (6, "/role"),
        (7, "/tool_calls/0/function/name"),
    ]
    github = project.cli("validate", "logs/chat.jsonl", "--as", "message", "--format", "github").stdout
    assert "::error file=logs/chat.jsonl,line=6,col=10,title=payload-invalid::/role: expected one of" in github


def test_a_record_that_is_not_json_is_exit_3_and_the_rest_is_still_checked(project: Project) -> None:
    project.write("logs/bad.jsonl", '{"role": "user", "content": [1\n{"role": "wizard", "content": "x"}\n')
    result = project.cli("validate", "logs/bad.jsonl", "--as", "message")
    assert result.returncode == 3
    assert result.stdout.splitlines() == [
        "logs/bad.jsonl:1:31: error json-invalid not valid JSON: Expecting ',' delimiter",
        "logs/bad.jsonl:2:10: error payload-invalid /role: expected one of 'system', 'user', 'assistant', 'tool', got \"wizard\"",
    ]
    missing = project.cli("validate", "logs/none.jsonl", "--as", "message")
    assert missing.returncode == 3 and "file-unreadable cannot read: No such file or directory" in missing.stdout
    for constant in ("NaN", "Infinity"):
        # Readable text with a value strict JSON refuses: a finding at the value, like any invalid value.
        project.write("logs/nan.jsonl", f'{{"role": "user", "content": {constant}}}\n')
        refused = project.cli("validate", "logs/nan.jsonl", "--as", "message")
        assert refused.returncode == 1
        assert f"logs/nan.jsonl:1:29: error json-refused /content: is {constant}," in refused.stdout


def test_a_record_nested_thousands_deep_is_refused_at_its_line_and_the_next_one_still_checked(project: Project) -> None:
    # Its findings were placed through a table of whole pointers, the square of the depth in memory (20,000
    # levels took 2 GB; 100,000 had the process killed).
    deep = "[" * 20_000 + "]" * 20_000
    project.write(
        "logs/deep.jsonl", f'{{"role": "user", "content": "hi"}}\n{deep}\n{{"role": "wizard", "content": "x"}}\n'
    )
    result = project.cli("validate", "logs/deep.jsonl", "--as", "message")
    assert result.returncode == 1, result.stderr
    assert result.stdout.splitlines() == [
        "logs/deep.jsonl:2:129: error json-refused "
        + "/0" * 128
        + ": is an array nested deeper than 128 levels of arrays and objects (at level 129); at most 128 levels are accepted",
        "logs/deep.jsonl:3:10: error payload-invalid /role: expected one of 'system', 'user', 'assistant', 'tool', got \"wizard\"",
    ]


def test_a_json_document_is_one_record_placed_by_line_and_column(project: Project) -> None:
    conversation = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "", "type": "function", "function": {"name": "get_current_weather", "arguments": "{}"}}
            ],
        },
    ]
    project.write("payloads/conversation.json", json.dumps(conversation, indent=2))
    result = project.cli("validate", "payloads", "--as", "messages")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert (
        'payloads/conversation.json:11:15: error payload-invalid /1/tool_calls/0/id: expected a string of at least 1 character, got ""'
        in lines
    )
    assert (
        "payloads/conversation.json:15:25: error arguments-invalid arguments of 'get_current_weather' at /location: expected a value (it is required), got nothing"
        in lines
    )
    assert "1 record(s), 1 invalid" in result.stderr


def test_stdin_as_json_lines_or_as_one_document(project: Project) -> None:
    def run(text: str) -> Ran:
        return toolgen_in(project.root, "validate", "-", "--as", "message", stdin=text)

    lines = run('{"role": "user", "content": "a"}\n{"role": "user"}\n')
    assert lines.returncode == 1 and lines.stdout.startswith("<stdin>:2:1: error payload-invalid /content")
    document = run('{\n  "role": "user",\n  "content": 7\n}\n')
    assert document.returncode == 1 and document.stdout.startswith("<stdin>:3:14: error payload-invalid /content")


def test_valid_payloads_exit_0_and_tool_calls_alone_are_checked(project: Project) -> None:
    project.write("calls.jsonl", (CALL % '{\\"location\\": \\"Oslo\\"}') + "\n" + (CALL % "{}") + "\n")
    result = project.cli("validate", "calls.jsonl", "--as", "tool-call")
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "calls.jsonl:2:92: error arguments-invalid arguments of 'get_current_weather' at /location: expected a value (it is required), got nothing"
    ]
    project.write("ok.jsonl", "\n".join(RECORDS[:2]) + "\n")
    assert project.cli("validate", "ok.jsonl", "--as", "message").returncode == 0


def test_an_unbuilt_project_is_exit_3(make_project: object) -> None:
    fresh = make_project()  # type: ignore[operator]
    fresh.write("logs/a.jsonl", RECORDS[0] + "\n")
    result = fresh.cli("validate", "logs/a.jsonl", "--as", "message")
    assert result.returncode == 3 and "run `toolgen build` first" in result.stderr


def test_large_files_use_every_core_and_agree_with_one_process(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = project.write("big.jsonl", "\n".join(RECORDS * 700) + "\n")
    monkeypatch.setattr(validate_stage, "PARALLEL_THRESHOLD", 1000)
    monkeypatch.setattr(validate_stage, "BLOCK_BYTES", 4096)
    parallel_tally, serial_tally = Tally(), Tally()
    parallel = list(toolgen.validate([log], kind="message", root=project.root, workers=2, tally=parallel_tally))
    monkeypatch.setattr(validate_stage, "PARALLEL_THRESHOLD", 10**12)
    serial = list(toolgen.validate([log], kind="message", root=project.root, workers=1, tally=serial_tally))
    assert parallel == serial and len(serial) == 4 * 700
    assert [d.line for d in serial] == sorted(d.line for d in serial)
    assert parallel_tally == serial_tally == Tally(records=7 * 700, invalid=4 * 700, unreadable=0)
    assert serial[-1].line == 8 * 699 + 7  # line numbers count the blank lines too


def test_two_projects_with_the_same_package_name_validate_in_one_process(make_project: object, tmp_path: Path) -> None:
    first, second = make_project(), make_project()  # type: ignore[operator]
    for project, tool in ((first, "alpha"), (second, "beta")):
        project.write("schemas/t.yaml", f"tools:\n  - name: {tool}\n    inputSchema: {{type: object}}\n")
        assert project.cli("build").returncode == 0
    record = tmp_path / "call.jsonl"
    record.write_text('{"id": "c", "type": "function", "function": {"name": "beta", "arguments": "{}"}}\n')
    assert [d.rule for d in toolgen.validate([record], kind="tool-call", root=first.root)] == ["unknown-tool"]
    assert list(toolgen.validate([record], kind="tool-call", root=second.root)) == []


def test_provider_bodies_are_decoded_then_checked(project: Project) -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "get_current_weather", "arguments": '{"location": 5}'}}
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "tool_calls": [call]}]}
    error = {"error": {"message": "rate limited", "type": "requests", "code": "429"}}
    project.write("wire.jsonl", "\n".join(json.dumps(b) for b in (body, {"messages": 3})) + "\n")
    result = project.cli("validate", "wire.jsonl", "--as", "openai-chat.request")
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "wire.jsonl:1:101: error pairing-invalid /messages/1/tool_calls/0: tool call 'c1' has no tool message answering it",
        "wire.jsonl:1:207: error arguments-invalid /messages/1/tool_calls/0/function/arguments/location: arguments of 'get_current_weather' at /location: expected a string, got 5",
        "wire.jsonl:2:14: error wire-invalid not a valid openai-chat request: /messages: expected `messages`, an array of message objects, got 3",
    ]
    project.write("error.json", json.dumps(error))
    assert project.cli("validate", "error.json", "--as", "openai-chat.response").returncode == 0


def test_json_output_of_an_unbuilt_project_is_not_half_written(make_project: object) -> None:
    fresh = make_project()  # type: ignore[operator]
    fresh.write("logs/a.jsonl", RECORDS[0] + "\n")
    result = fresh.cli("validate", "logs/a.jsonl", "--as", "message", "--format", "json")
    assert result.returncode == 3 and result.stdout == "" and "run `toolgen build` first" in result.stderr


def test_two_projects_sharing_a_package_name_both_validate_nested_models(make_project: object, tmp_path: Path) -> None:
    schema = "tools:\n  - name: {name}\n    inputSchema: {{type: object, properties: {{where: {{$ref: '#/$defs/P'}}}}, $defs: {{P: {{type: object, properties: {{x: {{type: integer}}}}}}}}}}\n"
    roots = []
    for name in ("alpha", "beta"):
        project = make_project()  # type: ignore[operator]
        project.write("schemas/t.yaml", schema.format(name=name))
        assert project.cli("build").returncode == 0
        roots.append(project.root)
    record = tmp_path / "calls.jsonl"
    record.write_text(
        '{"id": "c", "type": "function", "function": {"name": "beta", "arguments": "{\\"where\\": {\\"x\\": \\"no\\"}}"}}\n'
    )
    assert [d.rule for d in toolgen.validate([record], kind="tool-call", root=roots[0])] == ["unknown-tool"]
    assert [d.rule for d in toolgen.validate([record], kind="tool-call", root=roots[1])] == ["arguments-invalid"]


def test_parallel_blocks_keep_line_numbers_with_crlf_and_no_final_newline(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "\r\n".join(RECORDS * 50)  # no line break after the last record
    log = project.root / "crlf.jsonl"
    log.write_bytes(text.encode("utf-8"))
    monkeypatch.setattr(validate_stage, "PARALLEL_THRESHOLD", 100)
    monkeypatch.setattr(validate_stage, "BLOCK_BYTES", 777)
    parallel = list(toolgen.validate([log], kind="message", root=project.root, workers=2))
    monkeypatch.setattr(validate_stage, "PARALLEL_THRESHOLD", 10**12)
    serial = list(toolgen.validate([log], kind="message", root=project.root, workers=1))
    assert parallel == serial and len(serial) == 4 * 50 and serial[-1].line == 8 * 49 + 7


def test_a_call_valid_for_the_schema_that_the_handler_model_cannot_hold_is_a_warning(make_project: object) -> None:
    project: Project = make_project()  # type: ignore[operator]
    project.write(
        "schemas/tools.yaml",
        "tools:\n  - name: lookup\n    inputSchema:\n      properties: {city: {type: string}}\n",
    )
    assert project.cli("build").returncode == 0
    call = '{"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "%s"}}'
    project.write("calls.jsonl", (call % "12") + "\n" + (call % '{\\"city\\": \\"Oslo\\"}') + "\n")
    result = project.cli("validate", "calls.jsonl", "--as", "tool-call")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == [
        "calls.jsonl:1:78: warning arguments-unholdable arguments of 'lookup' fit its input schema, but not "
        "LookupArgs, which its handler takes: dispatch refuses this call"
    ]
    assert "2 record(s), 0 invalid" in result.stderr
    github = project.cli("validate", "calls.jsonl", "--as", "tool-call", "--format", "github")
    assert github.stdout.startswith("::warning file=calls.jsonl,line=1,col=78,title=arguments-unholdable::")


def test_a_byte_that_is_no_utf_8_is_placed_at_its_line_and_an_empty_document_says_so(project: Project) -> None:
    (project.root / "logs").mkdir()
    (project.root / "logs/latin.jsonl").write_bytes(
        b'{"role": "user", "content": "ok"}\n{"role": "user", "content": "caf\xe9"}\n'
    )
    (project.root / "logs/empty.json").write_bytes(b"")
    result = project.cli("validate", "logs", "--as", "message")
    assert result.returncode == 3, result.stderr
    assert result.stdout.splitlines() == [
        "logs/empty.json:1:1: error json-invalid the file is empty: expected a JSON record",
        "logs/latin.jsonl:2:33: error file-unreadable cannot read: not UTF-8 text: byte 0xe9 starts no UTF-8 "
        "character (save the file as UTF-8)",
    ]
