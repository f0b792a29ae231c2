"""Hostile and careless input at the command line: every bad input is exit 3 with its place, never a made-up pass."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ANTHROPIC_RESPONSE = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude",
    "content": [{"type": "text", "text": "hi"}],
    "stop_reason": "end_turn",
    "usage": {"input_tokens": 1, "output_tokens": 1},
}


def toolgen(*args: str, stdin: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolgen", *args], cwd=cwd, input=stdin, capture_output=True, text=True, check=False
    )


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
    ],
)
def test_encode_of_malformed_canonical_json_is_exit_3_at_its_pointer(
    tmp_path: Path, body: object, pointer: str
) -> None:
    (tmp_path / "c.json").write_text(json.dumps(body), encoding="utf-8")
    result = toolgen("encode", "c.json", "--wire", "openai", cwd=tmp_path)
    assert result.returncode == 3, result.stdout + result.stderr
    assert f"payload-invalid {pointer}: expected" in result.stdout
