"""Decode a recorded body, encode it to the wire it came from: the same body, key order included.

Compared as ordered JSON (objects as lists of key/value pairs), so a key that moves is a failure just as a value
that changes is; only whitespace is free. Bodies whose keys were sorted when recorded (the pydantic-ai cassettes)
come back sorted, since that is the order in the file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.projects import SHARED, Project, shared_dir

from toolgen.payloads import codec as payloads
from toolgen.runtime.wires.key_order import in_order, key_order

FOLDERS = ("request", "response")


def _recorded() -> list[Path]:
    base = SHARED / "payloads"
    if not base.is_dir():
        return []
    return sorted(path for kind in FOLDERS for path in base.glob(f"*/{kind}/*") if path.is_file())


def _ordered(text: str) -> Any:
    return json.loads(text, object_pairs_hook=list)


def _id(path: Path) -> str:
    return "/".join(path.parts[-3:])


@pytest.mark.parametrize("path", _recorded() or [None], ids=lambda p: _id(p) if p else "no-shared-payloads")
def test_recorded_body_comes_back_as_recorded(path: Path | None) -> None:
    if path is None:
        shared_dir("payloads")  # skips, saying where it looked
        pytest.skip("../shared/payloads holds no request or response bodies")
    raw = path.read_bytes()
    decoded = payloads.decode_payload(payloads.read_payload(raw, path.suffix))
    # Through JSON text, as `toolgen decode` then `toolgen encode` would pass it.
    canonical = json.loads(json.dumps(decoded))
    encoded = payloads.encode_noted(canonical, decoded["wire"])
    assert _ordered(json.dumps(encoded.body)) == _ordered(raw.decode("utf-8"))
    assert encoded.notes == ()


def test_every_recorded_folder_is_covered() -> None:
    base = shared_dir("payloads")
    files = _recorded()
    assert {path.parts[-3] for path in files} == {
        folder.parent.name for kind in FOLDERS for folder in base.glob(f"*/{kind}") if any(folder.iterdir())
    }


def test_cli_decode_then_encode_keeps_order_and_error_fields(make_project: Any) -> None:
    project: Project = make_project()
    body = (
        '{"error": {"message": "Unsupported parameter: \'max_tokens\'", "type": "invalid_request_error", '
        '"param": "max_tokens", "code": "unsupported_parameter"}}'
    )
    response = (
        '{"usage": {"output_tokens": 3, "input_tokens": 5}, "type": "message", "stop_reason": "end_turn", '
        '"role": "assistant", "model": "claude-x", "id": "msg_1", "content": [{"text": "hi", "type": "text"}], '
        '"stop_sequence": null}'
    )
    for name, text, wire in (("error.json", body, "openai-chat"), ("response.json", response, "anthropic")):
        project.write(name, text)
        decoded = project.cli("decode", name, "--wire", wire, "-o", f"{name}.canonical.json")
        assert decoded.returncode == 0, decoded.stderr
        encoded = project.cli("encode", f"{name}.canonical.json", "--wire", wire, "--strict")
        assert encoded.returncode == 0, encoded.stderr
        assert _ordered(encoded.stdout) == _ordered(text)


def test_an_edited_error_is_encoded_from_its_fields() -> None:
    raw = {"error": {"message": "old", "type": "invalid_request_error", "param": "x", "code": "bad"}}
    decoded = payloads.decode_payload(payloads.read_payload(json.dumps(raw).encode(), ".json"), "openai-chat")
    assert decoded["error"]["raw"] == raw
    decoded["error"]["message"] = "new"
    body = payloads.encode(decoded, "openai-chat")
    assert body["error"]["message"] == "new"


def test_key_order_record_and_apply() -> None:
    body = {"b": 1, "a": {"y": [{"q": 1, "p": 2}], "x": 2}, "a/b": {"2": 0, "1": 0}}
    order = key_order(body)
    assert order["/a/y/0"] == ["q", "p"] and order["/a~1b"] == ["2", "1"]
    shuffled = {"a": {"x": 2, "y": [{"p": 2, "q": 1}]}, "a/b": {"1": 0, "2": 0}, "b": 1, "new": 3}
    again = in_order(shuffled, order)
    assert list(again) == ["b", "a", "a/b", "new"]
    assert json.dumps(again) == json.dumps({**body, "new": 3})
    assert in_order(shuffled, "not an order") is shuffled
    assert in_order(shuffled, {"": 5}) == shuffled
