"""Hostile payloads at the command line: decode, encode, convert and validate say exit 3 at the place, never a pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli_in_process import Ran, toolgen_in
from support.projects import Project

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
    # A gemini answer always holds a candidate or why it has none: a shape error, and which wire the body is.
    assert "/candidates: expected at least one candidate" in wrong.stdout
    assert "this body looks like the anthropic wire's response; give --wire anthropic" in wrong.stdout
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
    said = (
        "not a valid gemini response: /candidates" if wire == "gemini" else f"nothing in this body is a {wire} response"
    )
    assert wrong.stdout.startswith(f"a.json:1:1: error wire-invalid {said}"), wrong.stdout
    assert "looks like the anthropic wire's response" in wrong.stdout
    assert toolgen_in(project.root, "validate", "--as", "anthropic.response", "a.json").returncode == 0


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
