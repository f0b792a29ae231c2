"""JSON nested past Python's recursion limit, from a provider's server, in a body handed to the adapters, or in a
request to the service, ends as the error of its path (ProviderError, ValueError, BodyError) and never as a
RecursionError: `json.loads` and the conversions recurse once a level or so, and a few kilobytes nest a
thousand levels."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from support.body_places import places, with_value
from support.local_http import Answer, LocalServer, queue
from support.projects import TESTS

FIXTURES = TESTS / "fixtures" / "payloads"
LEVELS = 5000
DEEP_TEXT = "[" * LEVELS + "]" * LEVELS


def _deep(levels: int, kind: str) -> Any:
    value: Any = None
    for _ in range(levels):
        value = [value] if kind == "list" else {"a": value}
    return value


@pytest.fixture(scope="module")
def rt(source_package: ModuleType) -> ModuleType:
    return importlib.import_module(f"{source_package.__name__}._runtime")


@pytest.mark.parametrize("status", [200, 500])
def test_a_server_answering_json_nested_too_deeply_is_a_provider_error(rt: ModuleType, status: int) -> None:
    server = LocalServer(queue(*[Answer(DEEP_TEXT.encode(), status=status)] * 2))
    model = rt.HTTPModel(server.base, "m", api_key="sk-test-0123456789abcdef", retry=rt.RetryPolicy(max_retries=0))
    request = rt.Request([{"role": "user", "content": "hi"}])
    try:
        for attempt in (lambda: model.complete(request), lambda: asyncio.run(model.acomplete(request))):
            with pytest.raises(rt.ProviderError) as caught:
                attempt()
            if status == 200:
                assert caught.value.type == "invalid_response"
                assert "too deeply" in str(caught.value)
            else:  # the status says what went wrong; the body is no error object it can read
                assert caught.value.status == 500
    finally:
        model.close()
        server.close()


@pytest.mark.parametrize("kind", ["list", "dict"])
@pytest.mark.parametrize("fixture", sorted(FIXTURES.glob("*/*/*.json")), ids=lambda path: "/".join(path.parts[-3:]))
def test_a_body_nesting_too_deeply_anywhere_is_a_value_error_or_decodes(
    rt: ModuleType, fixture: Path, kind: str
) -> None:
    body = json.loads(fixture.read_text(encoding="utf-8"))
    wire, direction = fixture.parts[-3], fixture.parts[-2]
    deep = _deep(LEVELS, kind)
    for at in list(places(body))[:40]:
        hostile = with_value(body, at, deep)
        try:
            decoded = rt.decode(hostile, wire, direction)
        except ValueError:
            continue
        if isinstance(decoded, rt.ProviderError):
            continue
        for target in ("openai-chat", "anthropic", "gemini", "openai-responses"):
            encode = rt.encode_request if isinstance(decoded, rt.Request) else rt.encode_response
            with contextlib.suppress(ValueError):
                encode(decoded, target)


def test_tool_call_arguments_nested_too_deeply_are_a_value_error_when_converted(rt: ModuleType) -> None:
    body = {
        "id": "x",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": DEEP_TEXT}}],
                },
                "finish_reason": "tool_calls",
            }
        ],
    }
    # Anthropic and Gemini send arguments as an object: the text must be read to convert it.
    for target in ("anthropic", "gemini"):
        with pytest.raises(ValueError, match="nest|JSON"):
            rt.convert(body, target, "openai-chat", "response")


def test_a_service_request_body_nested_too_deeply_is_a_body_error(source_package: ModuleType) -> None:
    bodies = importlib.import_module(f"{source_package.__name__}._runtime.serve.bodies")
    with pytest.raises(bodies.BodyError, match=r"^the value at (/0){128} is an array nested deeper than 128 levels"):
        bodies.parse_json_body(DEEP_TEXT.encode())
    with pytest.raises(
        bodies.BodyError, match=r"^the value at /arguments(/0){128} is an array nested deeper than 128 levels"
    ):
        bodies.approval({"decision": "edit", "arguments": DEEP_TEXT})
