"""Azure OpenAI, Vertex AI and the OpenAI-compatible presets over real HTTP on 127.0.0.1: the URL each request
goes to (Azure's `?api-version=` kept at the end), how it is authenticated, and each preset's quirks."""

from __future__ import annotations

import asyncio
import importlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from support.local_http import Answer, LocalServer, queue, serving

USER = [{"role": "user", "content": "hi"}]
CHAT_OK = json.dumps(
    {"id": "x", "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]}
).encode()
GEMINI_OK = json.dumps(
    {"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}]}
).encode()
ANTHROPIC_OK = json.dumps(
    {
        "id": "m",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": "ok"}],
        "stop_reason": "end_turn",
    }
).encode()
SSE_OK = (
    b'data: {"id":"x","choices":[{"index":0,"delta":{"role":"assistant","content":"ok"}}]}\n\n'
    b'data: {"id":"x","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
)


@pytest.fixture(scope="module")
def rt(source_package: ModuleType) -> ModuleType:
    return importlib.import_module(f"{source_package.__name__}._runtime")


@pytest.fixture
def server() -> Iterator[LocalServer]:
    yield from serving(queue(*[Answer(CHAT_OK)] * 4))


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for preset in ("AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT", "OPENAI_API_VERSION", "AZURE_OPENAI_DEPLOYMENT"):
        monkeypatch.delenv(preset, raising=False)
    for name in ("GROQ_API_KEY", "OLLAMA_API_KEY", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_an_azure_deployment_url_keeps_api_version_at_the_end(rt: ModuleType, server: LocalServer) -> None:
    base = f"{server.base}/openai/deployments/gpt4o?api-version=2024-10-21"
    model = rt.HTTPModel(base, "gpt-4o", headers={"api-key": "azure-key-0123456789"})
    assert model.complete(rt.Request(USER)).message["content"] == "ok"
    seen = server.seen[0]
    assert seen.path == "/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21"
    assert seen.headers["api-key"] == "azure-key-0123456789" and "authorization" not in seen.headers


def test_the_azure_preset_fills_endpoint_deployment_and_version_and_sends_api_key(
    rt: ModuleType, server: LocalServer, clean_env: pytest.MonkeyPatch
) -> None:
    clean_env.setenv("AZURE_OPENAI_ENDPOINT", server.base + "/")
    clean_env.setenv("AZURE_OPENAI_API_KEY", "azure-env-key-0123")
    model = rt.preset_model("azure", "gpt-4o-mini", variables={"api_version": "2025-01-01-preview"})
    events = list(model.stream(rt.Request(USER)))
    assert isinstance(events[-1], rt.MessageEnd)
    seen = server.seen[0]
    # The deployment defaults to the model's name; the stream's own fields go in the body, not the query.
    assert seen.path == "/openai/deployments/gpt-4o-mini/chat/completions?api-version=2025-01-01-preview"
    assert seen.headers["api-key"] == "azure-env-key-0123"


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_azure_v1_with_an_entra_token_provider_asked_before_every_attempt(
    rt: ModuleType, clean_env: pytest.MonkeyPatch, mode: str
) -> None:
    tokens = iter(["entra-token-first-0001", "entra-token-second-0002"])
    limited = Answer(b'{"error": {"message": "slow down"}}', 429, headers={"Retry-After": "0"})
    # The server echoes the token it was sent in its error: it must not come back out.
    echo = Answer(b'{"error": {"message": "bad token entra-token-second-0002"}}', 401)
    for server in serving(queue(limited, echo)):
        clean_env.setenv("AZURE_OPENAI_ENDPOINT", server.base)
        model = rt.preset_model("azure-v1", "gpt-4o", token=lambda: next(tokens))
        request = rt.Request(USER)
        with pytest.raises(rt.ProviderError) as failed:
            model.complete(request) if mode == "sync" else asyncio.run(model.acomplete(request))
        first, second = server.seen
        assert first.path == second.path == "/openai/v1/chat/completions"
        assert first.headers["authorization"] == "Bearer entra-token-first-0001"
        assert second.headers["authorization"] == "Bearer entra-token-second-0002"
        assert "api-key" not in first.headers
        assert failed.value.status == 401 and "entra-token" not in failed.value.message
        assert "***" in failed.value.message


def test_a_token_provider_that_fails_is_an_auth_error(rt: ModuleType, server: LocalServer) -> None:
    def broken() -> str:
        raise RuntimeError("the credential cache is locked")

    model = rt.HTTPModel(server.base, "m", token=broken)
    with pytest.raises(rt.ProviderError) as failed:
        model.complete(rt.Request(USER))
    assert failed.value.type == "auth_error" and "credential cache is locked" in failed.value.message
    assert server.seen == []  # nothing was sent, and nothing was retried
    with pytest.raises(rt.ProviderError, match="not a string"):
        rt.HTTPModel(server.base, "m", token=lambda: None).complete(rt.Request(USER))


def test_vertex_with_a_given_token_goes_to_the_project_and_location(
    rt: ModuleType, clean_env: pytest.MonkeyPatch
) -> None:
    for server in serving(queue(Answer(GEMINI_OK))):
        clean_env.setenv("GOOGLE_CLOUD_PROJECT", "my-proj")
        model = rt.preset_model(
            "vertex", "gemini-2.5-flash", token="ya29.vertex-token-0123", base_url=None, variables={"location": "x"}
        )
        assert model.base_url == "https://x-aiplatform.googleapis.com/v1/projects/my-proj/locations/x/publishers/google"
        local = rt.preset_model("vertex", "gemini-2.5-flash", token="ya29.vertex-token-0123", base_url=server.base)
        assert local.complete(rt.Request(USER)).message["content"] == "ok"
        seen = server.seen[0]
        assert seen.path == "/models/gemini-2.5-flash:generateContent"
        assert seen.headers["authorization"] == "Bearer ya29.vertex-token-0123"
        assert "x-goog-api-key" not in seen.headers


def test_vertex_without_a_project_or_google_auth_says_what_to_do(rt: ModuleType, clean_env: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="needs its project: set GOOGLE_CLOUD_PROJECT"):
        rt.preset_model("vertex", "gemini-2.5-flash", token="t0123456789")
    try:
        importlib.import_module("google.auth")
    except ImportError:
        with pytest.raises(ImportError, match=r"toolgen\[vertex\]"):
            rt.preset_model("vertex", "gemini-2.5-flash", variables={"project": "p"})


def test_presets_are_rows_with_a_routed_wire_and_a_base_url(rt: ModuleType) -> None:
    names = [p.name for p in rt.PRESETS]
    assert names == sorted(names) and len(set(names)) == len(names)
    expected = {"azure", "azure-v1", "deepseek", "fireworks", "groq", "lmstudio", "ollama", "openrouter"}
    assert expected | {"together", "vertex", "vllm"} == set(names)
    for row in rt.PRESETS:
        assert rt.wire(row.wire).route is not None, row.name
        assert row.base_url.startswith(("https://", "http://localhost", "{endpoint}")), row.name
        assert row.key_variable is None or row.key_variable.isupper()
    with pytest.raises(ValueError, match="unknown preset 'grok'; one of azure"):
        rt.preset_model("grok", "m")


@pytest.mark.parametrize(
    ("name", "renamed"),
    [("groq", False), ("ollama", True), ("deepseek", True), ("vllm", False), ("openrouter", True)],
)
def test_a_preset_at_a_local_url_applies_its_quirks(
    rt: ModuleType, server: LocalServer, clean_env: pytest.MonkeyPatch, name: str, renamed: bool
) -> None:
    model = rt.preset_model(name, "m", api_key="preset-key-0123", base_url=server.base + "/v1")
    result = rt.run(USER, model, rt.Registry({}), settings={"max_tokens": 32})
    assert result.stop_reason == "finished", result.error
    body = json.loads(server.seen[-1].body)
    assert server.seen[-1].path == "/v1/chat/completions"
    assert body.get("max_tokens" if renamed else "max_completion_tokens") == 32
    assert ("max_completion_tokens" in body) is not renamed
    assert server.seen[-1].headers["authorization"] == "Bearer preset-key-0123"


def test_a_preset_that_needs_a_key_says_which_variable(rt: ModuleType, clean_env: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="the groq preset needs an API key: set GROQ_API_KEY"):
        rt.preset_model("groq", "m")
    assert rt.preset_model("ollama", "m").base_url == "http://localhost:11434/v1"  # local servers need none


def test_urls_join_before_the_query_and_mask_secret_parameters(rt: ModuleType) -> None:
    urls = importlib.import_module(f"{rt.__name__}.clients.urls")
    join = urls.join_url
    assert join("https://r.openai.azure.com/openai/deployments/d?api-version=2024-10-21", "/chat/completions") == (
        "https://r.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21"
    )
    assert join("https://h/v1beta/?x=1", "/models/m:streamGenerateContent?alt=sse") == (
        "https://h/v1beta/models/m:streamGenerateContent?alt=sse&x=1"
    )
    assert join("http://localhost:8000/v1/", "/chat/completions") == "http://localhost:8000/v1/chat/completions"
    redactor = rt.HTTPModel("http://h", "m", api_key="sk-secret-0123456789")._redactor
    masked = urls.masked_url("https://h/p?key=AIzaabc&api-version=1&sig=x&q=sk-secret-0123456789", redactor)
    assert masked == "https://h/p?key=***&api-version=1&sig=***&q=***"


def test_without_botocore_signing_names_the_extra(source_build: Path) -> None:
    """The package imports and keys work without botocore; SigV4 asks for the bedrock extra."""
    code = """
import sys
class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name == "botocore" or name.startswith("botocore."):
            raise ImportError("botocore is not installed")
sys.meta_path.insert(0, Refuse())
from source_sdk import _runtime as rt
rt.HTTPModel("http://127.0.0.1:9", "m", wire="bedrock", api_key="ABSKkey", region="us-east-1")
try:
    rt.HTTPModel("http://127.0.0.1:9", "m", wire="bedrock", region="us-east-1")
except ImportError as error:
    print(error)
"""
    result = subprocess.run([sys.executable, "-c", code], cwd=source_build, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert "pip install 'toolgen[bedrock]'" in result.stdout


@pytest.mark.parametrize("wire", ["openai-chat", "anthropic"])
def test_a_lone_surrogate_in_a_request_is_sent_as_its_json_escape(rt: ModuleType, wire: str) -> None:
    # A model may write "\ud800" in a call id or its arguments; the id must come back as it was, and the run
    # must not end on a UnicodeEncodeError when the conversation is sent again.
    call = {"id": "call_\ud800", "type": "function", "function": {"name": "f", "arguments": '{"a": "\\ud800"}'}}
    messages = [
        {"role": "user", "content": "half \ud800 a pair"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_\ud800", "content": "r"},
    ]
    answer = CHAT_OK if wire == "openai-chat" else ANTHROPIC_OK
    server = LocalServer(queue(Answer(answer), Answer(answer)))
    model = rt.HTTPModel(server.base, "m", wire=wire, api_key="sk-test-0123456789abcdef")
    try:
        request = rt.Request(messages)
        for response in (model.complete(request), asyncio.run(model.acomplete(request))):
            assert response.message["content"] in ("ok", [{"type": "text", "text": "ok"}])
    finally:
        model.close()
        server.close()
    for seen in server.seen:
        assert b"\\ud800" in seen.body
        assert "call_\ud800" in json.dumps(json.loads(seen.body), ensure_ascii=False)
