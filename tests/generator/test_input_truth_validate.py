"""`toolgen validate` reads payload files as the build reads its inputs: a leading UTF-8 byte order mark is
skipped (RFC 8259 section 8.1 lets a parser ignore it) wherever the file goes, with every line:col as without it;
and a key a body lacks is said as missing (`got nothing`), not as a null it does not hold."""

from __future__ import annotations

import gzip
import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.projects import Project

import toolgen

validate_stage = importlib.import_module("toolgen.payloads.validation.local")

BOM = b"\xef\xbb\xbf"
GOOD = '[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]'
BAD = '[{"role": "user", "content": 5}]'
BAD_FINDING = "error payload-invalid /0/content: expected a string or an array, got 5"


@pytest.fixture(autouse=True)
def _package_name_free() -> Iterator[None]:
    """`sdk` free of the packages of that name other tests of this worker imported, as in a `toolgen validate`
    process (see tests/generator/payloads/test_validate.py); what was set aside comes back after."""
    owned = [name for name in sys.modules if name == "sdk" or name.startswith("sdk.")]
    set_aside = {name: sys.modules.pop(name) for name in owned}
    yield
    for name in [name for name in sys.modules if name == "sdk" or name.startswith("sdk.")]:
        del sys.modules[name]
    sys.modules.update(set_aside)


def _findings(project: Project, name: str, data: bytes, kind: str = "messages") -> tuple[int, list[str], str]:
    (project.root / name).write_bytes(data)
    ran = project.cli("validate", name, "--as", kind)
    return ran.returncode, ran.stdout.splitlines(), ran.stderr


def test_a_json_lines_file_with_a_bom_is_read_as_without_it(project: Project) -> None:
    assert _findings(project, "bom.jsonl", BOM + f"{GOOD}\n{GOOD}\n".encode())[:2] == (0, [])
    code, lines, stderr = _findings(project, "bad.jsonl", BOM + f"{BAD}\n{GOOD}\n{BAD}\n".encode())
    assert (code, lines) == (1, [f"bad.jsonl:1:30: {BAD_FINDING}", f"bad.jsonl:3:30: {BAD_FINDING}"])
    assert "3 record(s), 2 invalid, 0 unreadable" in stderr
    assert _findings(project, "plain.jsonl", f"{BAD}\n{GOOD}\n{BAD}\n".encode())[1] == [
        f"plain.jsonl:1:30: {BAD_FINDING}",
        f"plain.jsonl:3:30: {BAD_FINDING}",
    ]


def test_a_json_document_with_a_bom_is_read_as_without_it(project: Project) -> None:
    code, lines, _ = _findings(project, "bom.json", BOM + b'[\n  {"role": "user", "content": 5}\n]\n')
    assert (code, lines) == (1, [f"bom.json:2:31: {BAD_FINDING}"])


def test_a_bom_that_is_not_at_the_start_is_still_refused(project: Project) -> None:
    code, lines, _ = _findings(project, "mid.jsonl", f"{GOOD}\n".encode() + BOM + f"{GOOD}\n".encode())
    assert code == 3 and len(lines) == 1 and lines[0].startswith("mid.jsonl:2:1: error json-invalid ")


def test_a_compressed_log_with_a_bom_is_read_as_without_it(project: Project) -> None:
    data = gzip.compress(BOM + f"{GOOD}\n{BAD}\n".encode())
    assert _findings(project, "bom.jsonl.gz", data)[:2] == (1, [f"bom.jsonl.gz:2:30: {BAD_FINDING}"])


def test_stdin_with_a_bom_is_read_as_without_it(project: Project) -> None:
    from support.cli_in_process import toolgen_in

    ran = toolgen_in(project.root, "validate", "-", "--as", "messages", stdin="\ufeff" + GOOD + "\n")
    assert (ran.returncode, ran.stdout) == (0, "")


def test_a_byte_that_is_no_utf8_after_a_bom_is_placed_as_without_it(project: Project) -> None:
    code, lines, _ = _findings(project, "latin.json", BOM + b'[{"role": "user", "content": "caf\xe9"}]\n')
    assert (code, lines) == (
        3,
        [
            "latin.json:1:34: error file-unreadable cannot read: not UTF-8 text: byte 0xe9 starts no UTF-8 "
            "character (save the file as UTF-8)"
        ],
    )


def test_large_logs_with_a_bom_checked_on_every_core_agree_with_one_process(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = project.root / "big.jsonl"
    log.write_bytes(BOM + "\n".join([BAD, GOOD] * 300).encode() + b"\n")
    monkeypatch.setattr(validate_stage, "PARALLEL_THRESHOLD", 1000)
    monkeypatch.setattr(validate_stage, "BLOCK_BYTES", 4096)
    parallel = list(toolgen.validate([log], kind="messages", root=project.root, workers=2))
    monkeypatch.setattr(validate_stage, "PARALLEL_THRESHOLD", 10**12)
    serial = list(toolgen.validate([log], kind="messages", root=project.root, workers=1))
    assert parallel == serial
    assert [(d.line, d.col, d.rule) for d in serial] == [(line, 30, "payload-invalid") for line in range(1, 600, 2)]


def test_a_key_a_body_lacks_is_got_nothing_at_its_object_and_a_null_it_holds_is_got_null(project: Project) -> None:
    response = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude", "stop_reason": "end_turn"}
    code, lines, _ = _findings(project, "no_content.json", json.dumps(response).encode(), "anthropic.response")
    assert (code, lines) == (
        1,
        [
            "no_content.json:1:1: error wire-invalid not a valid anthropic response: /content: expected `content`, "
            "an array of content blocks, got nothing"
        ],
    )
    code, lines, _ = _findings(project, "null_content.json", b'{"content": null}', "anthropic.response")
    assert lines == [
        "null_content.json:1:13: error wire-invalid not a valid anthropic response: /content: expected `content`, "
        "an array of content blocks, got null"
    ]
    assert _findings(project, "no_messages.json", b'{"model": "gpt-4o"}', "openai-chat.request")[1] == [
        "no_messages.json:1:1: error wire-invalid not a valid openai-chat request: /messages: expected `messages`, "
        "an array of message objects, got nothing"
    ]
    nested = (
        b'{"id": "x", "object": "chat.completion", "model": "m",\n "choices": [{"index": 0, "finish_reason": "stop"}]}'
    )
    assert _findings(project, "no_message.json", nested, "openai-chat.response")[1] == [
        "no_message.json:2:14: error wire-invalid not a valid openai-chat response: /choices/0/message: expected "
        "the assistant message object, got nothing"
    ]
    assert _findings(project, "no_parts.json", b'{"contents": [{"role": "user"}]}', "gemini.request")[1] == [
        "no_parts.json:1:15: error wire-invalid not a valid gemini request: /contents/0/parts: expected `parts`, "
        "an array of part objects, got nothing"
    ]


def test_a_recorded_stream_with_a_bom_has_the_findings_of_the_plain_one(project: Project) -> None:
    from support.projects import REPO_ROOT

    stream = (REPO_ROOT / "tests" / "fixtures" / "streams" / "openai-chat-invalid-args.sse").read_bytes()
    plain = _findings(project, "plain.sse", stream, "openai-chat.response")
    with_bom = _findings(project, "bom.sse", BOM + stream, "openai-chat.response")
    assert with_bom[0] == plain[0] == 1
    assert [line.replace("bom.sse:", "plain.sse:", 1) for line in with_bom[1]] == plain[1]
    assert plain[1][-1] == (
        "plain.sse:5:7: error stream-invalid not a valid openai-chat stream: tool call 0 (search): arguments are "
        "not valid JSON: trailing comma at line 1 column 11"
    )


def test_dask_workers_read_a_file_with_a_bom_from_after_it(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    from toolgen.payloads.validation.cluster_worker import Block, read_range

    path = tmp_path / "bom.jsonl"
    path.write_bytes(BOM + f"{GOOD}\n{BAD}\n".encode())
    first = read_range(Block(str(path), "bom.jsonl", 0, 10, False), {})
    assert first == f"{GOOD}\n".encode()
    whole = read_range(Block(str(path), "bom.jsonl", 0, None, True), {})
    assert whole == f"{GOOD}\n{BAD}\n".encode()
    second = read_range(Block(str(path), "bom.jsonl", 5, 200, False), {})  # the lines that start past byte 5
    assert second == f"{BAD}\n".encode()
