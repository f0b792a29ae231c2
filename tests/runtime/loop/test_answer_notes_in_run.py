"""What an answer held that was not read as sent reaches the run as `note` events, over real HTTP on 127.0.0.1:
a finish value no table knows and a usage count left out as unreadable, noted by the decoder in the response's
extras, are events of the run, not only fields of a response no caller of run() sees."""

from __future__ import annotations

import asyncio
import importlib
import json
from collections.abc import Iterator
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from support.local_http import Answer, LocalServer, queue, serving

USER = [{"role": "user", "content": "Summarize the report."}]
MODES = ["sync", "async"]


@pytest.fixture(scope="module")
def sdk(source_package: ModuleType) -> SimpleNamespace:
    name = source_package.__name__
    return SimpleNamespace(package=source_package, runtime=importlib.import_module(f"{name}._runtime"))


def _completion(finish: str, usage: dict[str, Any]) -> Answer:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Done."}, "finish_reason": finish}],
        "usage": usage,
    }
    return Answer(json.dumps(body).encode())


@pytest.fixture
def server() -> Iterator[LocalServer]:
    usage = {"prompt_tokens": "5", "completion_tokens": 3, "total_tokens": 8}
    yield from serving(queue(_completion("model_context_window_exceeded", usage)))


def _drive(sdk: SimpleNamespace, mode: str, model: Any, events: list[Any]) -> Any:
    tools = sdk.package.Tools()
    if mode == "sync":
        return sdk.runtime.run(USER, model, tools, stream=False, on_event=events.append)
    return asyncio.run(sdk.runtime.arun(USER, model, tools, stream=False, on_event=events.append))


@pytest.mark.parametrize("mode", MODES)
def test_an_unknown_finish_and_an_unreadable_count_are_notes_of_the_run(
    sdk: SimpleNamespace, server: LocalServer, mode: str
) -> None:
    model = sdk.runtime.HTTPModel(server.base + "/v1", "m", wire="openai-chat", api_key="sk-test")
    events: list[Any] = []
    try:
        result = _drive(sdk, mode, model, events)
    finally:
        model.close()
    assert result.text == "Done."
    notes = [e.data["message"] for e in events if e.type == "note"]
    assert notes == [
        "openai-chat sent finish_reason 'model_context_window_exceeded', a value toolgen does not know: read as 'stop'",
        'openai-chat sent usage.prompt_tokens "5", not a number: it is left out of the usage',
    ]
    # Each note follows the model call it belongs to, before that call's end.
    order = [e.type for e in events]
    assert order.index("note") < order.index("model_call_finished")
