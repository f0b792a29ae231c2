"""Run settings reach the provider, are mapped, or are refused by name: never dropped in silence.

Every parameter the official `openai` and `anthropic` SDKs' create methods accept (read from the SDKs' own request
types, so this tracks the installed SDK) is set through `run(settings=...)` against a local server that records
the requests: it is in the sent body as given, in the body at the place the mapping table names, or refused
with an UnsupportedSettings naming it and the wire, before any request is sent.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pydantic
import pytest
from support.local_http import Answer, LocalServer, Received
from support.projects import REPO_ROOT

from toolgen.runtime import HTTPModel, Registry, RetryPolicy, RunOptions, ToolSpec, arun, run
from toolgen.runtime.wires.canonical import Request
from toolgen.runtime.wires.codecs import encode_request
from toolgen.runtime.wires.settings import UnsupportedSettings, plan_settings
from toolgen.runtime.wires.settings_table import TABLE, Spelling
from toolgen.runtime.wires.settings_types import SETTINGS_TYPES, reserved, vocabulary

USER = [{"role": "user", "content": "What's the weather in Paris?"}]
OK = {
    "openai-chat": {
        "id": "x",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
    },
    "openai-responses": {
        "id": "r",
        "object": "response",
        "status": "completed",
        "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}],
    },
    "anthropic": {
        "id": "m",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": "ok"}],
        "stop_reason": "end_turn",
    },
    "gemini": {"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}]},
}
PREFIX = {"openai-chat": "/v1", "openai-responses": "/v1", "gemini": "/v1beta", "anthropic": ""}
# Values for parameters whose type the run reads (a portable setting); any other gets a marker object, which a
# setting sent as given carries unchanged.
VALUES: dict[str, Any] = {
    "max_tokens": 77,
    "max_completion_tokens": 77,
    "max_output_tokens": 77,
    "temperature": 0.3,
    "top_p": 0.8,
    "top_k": 5,
    "seed": 7,
    "n": 1,
    "stop": ["END"],
    "stop_sequences": ["END"],
    "user": "user-1",
    "tool_choice": "required",
    "parallel_tool_calls": False,
    "response_format": {"type": "json_object"},
    "reasoning_effort": "high",
    "service_tier": "auto",
    "metadata": {"team": "blue"},
    "prompt_cache_key": "cache-1",
    "stream": True,
}
PER_WIRE: dict[tuple[str, str], Any] = {("anthropic", "metadata"): {"user_id": "user-1"}}


class Place(pydantic.BaseModel):
    location: str


def weather_registry() -> Registry:
    schema = {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}
    registry = Registry({"get_weather": ToolSpec("get_weather", None, "The weather", Place, None, schema, None)})
    registry.entry("get_weather").handler(lambda args, ctx: {"temperature": 18})
    return registry


def sdk_parameters(wire: str) -> list[str]:
    """The parameters the official SDK's create method takes for `wire`, from its request types."""
    if wire == "anthropic":
        messages = pytest.importorskip("anthropic.types.message_create_params")
        beta = pytest.importorskip("anthropic.types.beta.message_create_params")
        # The sampling parameters anthropic 1.0 took out (its MIGRATION.md) are checked too: they must be refused.
        names = {*messages.MessageCreateParamsStreaming.__annotations__, "temperature", "top_p", "top_k"}
        return sorted(names | set(beta.MessageCreateParamsBase.__annotations__))
    if wire == "openai-chat":
        chat = pytest.importorskip("openai.types.chat.completion_create_params")
        return sorted(chat.CompletionCreateParamsStreaming.__annotations__)
    responses = pytest.importorskip("openai.types.responses.response_create_params")
    return sorted(responses.ResponseCreateParamsStreaming.__annotations__)


class Endpoint:
    """A local server answering every POST with the wire's plain answer, and the HTTPModel pointed at it."""

    def __init__(self, wire: str) -> None:
        body = json.dumps(OK[wire]).encode()
        self.server = LocalServer(lambda _: Answer(body))
        retry = RetryPolicy(max_retries=0)
        self.model = HTTPModel(self.server.base + PREFIX[wire], "m", wire=wire, api_key="sk-test", retry=retry)

    def sent(self) -> list[Received]:
        return list(self.server.seen)

    def close(self) -> None:
        self.model.close()
        self.server.close()


@pytest.fixture(params=["openai-chat", "openai-responses", "anthropic", "gemini"])
def endpoint(request: pytest.FixtureRequest) -> Iterator[Endpoint]:
    served = Endpoint(request.param)
    try:
        yield served
    finally:
        served.close()


_MISSING = object()


def at(body: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(body, dict) or part not in body:
            return _MISSING
        body = body[part]
    return body


def outcome(endpoint: Endpoint, wire: str, name: str, value: Any) -> str:
    """`sent` (in the body as given), `mapped` (at the table's place) or `refused` (by name, before a request)."""
    before = len(endpoint.sent())
    try:
        result = run(USER, endpoint.model, weather_registry(), settings={name: value})
    except UnsupportedSettings as error:
        assert len(endpoint.sent()) == before, f"{name}: refused after a request was sent"
        assert name in {problem.setting for problem in error.problems}, str(error)
        assert f"{name}: " in str(error) and wire in str(error) and "on_unsupported='note'" in str(error)
        return "refused"
    assert result.stop_reason == "finished", (name, result.error)
    body = json.loads(endpoint.sent()[-1].body)
    if at(body, name) == value:
        return "sent"
    entry = TABLE.get(name, {}).get(wire)
    assert isinstance(entry, Spelling), f"{name}={value!r} on {wire}: neither sent, mapped nor refused: {body}"
    path, wanted = entry.levels[value] if entry.levels else (entry.path, value)
    found = at(body, path)
    assert found is not _MISSING, f"{name} on {wire}: not at {path}: {body}"
    if isinstance(wanted, (int, float, str)) and not isinstance(wanted, bool) and not entry.encoder:
        assert found == wanted
    return "mapped"


@pytest.mark.parametrize("wire", ["openai-chat", "openai-responses", "anthropic"])
def test_every_parameter_the_official_sdk_accepts_is_sent_mapped_or_refused_by_name(wire: str) -> None:
    served = Endpoint(wire)
    try:
        found = {
            name: outcome(served, wire, name, PER_WIRE.get((wire, name), VALUES.get(name, {"marker": name})))
            for name in sdk_parameters(wire)
        }
    finally:
        served.close()
    assert found, "the SDK listed no parameters"
    # What the run fills itself is refused as a setting, with what to do instead.
    for own in ("model", "stream", "tools"):
        assert found[own] == "refused"
    sent = {name for name, how in found.items() if how == "sent"}
    mapped = {name for name, how in found.items() if how == "mapped"}
    refused = {name for name, how in found.items() if how == "refused"}
    if wire == "openai-chat":
        assert {"frequency_penalty", "presence_penalty", "logprobs", "top_logprobs", "n", "service_tier"} <= sent
        assert {"reasoning_effort", "metadata", "store", "seed", "user", "logit_bias", "prediction"} <= sent
        assert {"modalities", "audio", "web_search_options", "verbosity", "prompt_cache_key"} <= sent
        assert {"safety_identifier", "parallel_tool_calls", "temperature"} <= sent
        assert {"max_tokens", "tool_choice", "response_format"} <= mapped | sent
        assert {"messages", "functions", "stream_options"} <= refused
    elif wire == "openai-responses":
        assert {"reasoning", "store", "truncation", "include", "instructions", "max_output_tokens"} <= sent
        assert {"metadata", "previous_response_id", "service_tier", "text", "top_logprobs"} <= sent
        assert {"prompt_cache_key", "safety_identifier", "background"} <= sent
        assert {"input", "stream_options"} <= refused
    else:
        assert {"thinking", "metadata", "service_tier", "stop_sequences", "container", "output_config"} <= sent
        assert {"cache_control", "inference_geo", "speed", "max_tokens"} <= sent
        assert "tool_choice" in mapped | sent
        # Gone from the SDK's messages.create since anthropic 1.0, and refused by current models.
        assert {"temperature", "top_p", "top_k"} <= refused
        # Headers in the SDK, beta-only parameters, and the conversation itself.
        assert {"workspace_id", "user_profile_id", "mcp_servers", "betas", "messages", "system"} <= refused


def test_a_refused_setting_says_which_wire_and_what_to_do(endpoint: Endpoint) -> None:
    wire = endpoint.model.wire
    with pytest.raises(UnsupportedSettings) as raised:
        run(USER, endpoint.model, weather_registry(), settings={"no_such_setting": 1, "max_tokens": 10})
    assert endpoint.sent() == []
    assert [problem.setting for problem in raised.value.problems] == ["no_such_setting"]
    assert f"no_such_setting: {wire} has no such setting" in str(raised.value)


def test_anthropic_refuses_what_its_sdk_took_out_and_names_where_other_settings_belong() -> None:
    [problem] = plan_settings({"temperature": 0.2}, "anthropic").problems
    assert problem.setting == "temperature" and "anthropic SDK took it out of messages.create in 1.0" in problem.reason
    [problem] = plan_settings({"top_logprobs": 3}, "anthropic").problems
    assert problem.reason.startswith("anthropic has no such setting (it is a setting of openai-chat")
    [problem] = plan_settings({"max_completion_tokens": 3}, "anthropic").problems
    assert problem.reason.endswith("the portable setting is 'max_tokens'")


def test_asking_for_more_reasoning_reaches_each_wire_in_its_own_form(endpoint: Endpoint) -> None:
    wire = endpoint.model.wire
    result = run(USER, endpoint.model, weather_registry(), settings={"reasoning_effort": "high"})
    assert result.stop_reason == "finished", result.error
    body = json.loads(endpoint.sent()[-1].body)
    place = {
        "openai-chat": "reasoning_effort",
        "openai-responses": "reasoning.effort",
        "anthropic": "output_config.effort",
        "gemini": "generationConfig.thinkingConfig.thinkingLevel",
    }[wire]
    assert at(body, place) == "high", body
    if wire == "anthropic":
        assert body["max_tokens"] == 4096  # still the one Anthropic requires


@pytest.mark.parametrize("wire", sorted(SETTINGS_TYPES))
def test_reasoning_settings_are_mapped_on_every_wire_or_refused(wire: str) -> None:
    carried = {
        "openai-chat": {"reasoning_effort": "high"},
        "openai-chat-camel": {"reasoningEffort": "high"},
        "openai-responses": {"reasoning": {"effort": "high"}},
        "anthropic": {"output_config": {"effort": "high"}},
        "gemini": {"generationConfig": {"thinkingConfig": {"thinkingLevel": "high"}}},
        "ollama": {"think": "high"},
        "google-interactions": {"generation_config": {"thinking_level": "high"}},
    }
    plan = plan_settings({"reasoning_effort": "high"}, wire)
    if wire not in carried:
        assert [problem.setting for problem in plan.problems] == ["reasoning_effort"]
        return
    assert not plan.problems, plan.problems
    body = encode_request(Request(USER, [], "m", plan.extras()), wire)
    for key, value in carried[wire].items():
        assert body[key] == value, body
    budget = plan_settings({"reasoning_budget": 2048}, wire)
    if wire in ("anthropic", "gemini"):
        body = encode_request(Request(USER, [], "m", budget.extras()), wire)
        wanted = (
            {"thinking": {"type": "enabled", "budget_tokens": 2048}}
            if wire == "anthropic"
            else {"generationConfig": {"thinkingConfig": {"thinkingBudget": 2048}}}
        )
        assert {key: body[key] for key in wanted} == wanted
    else:
        assert [problem.setting for problem in budget.problems] == ["reasoning_budget"]


def test_the_portable_settings_map_to_each_wires_own_fields() -> None:
    settings = {"service_tier": "priority", "metadata": {"team": "blue"}, "stop": "END", "seed": 3, "top_k": 4}
    chat = plan_settings({key: settings[key] for key in ("service_tier", "metadata", "stop", "seed")}, "openai-chat")
    body = encode_request(Request(USER, [], "m", chat.extras()), "openai-chat")
    assert (body["service_tier"], body["metadata"], body["stop"], body["seed"]) == (
        "priority",
        {"team": "blue"},
        ["END"],
        3,
    )
    bedrock = plan_settings({"service_tier": "flex", "metadata": {"team": "blue"}}, "bedrock-converse")
    body = encode_request(Request(USER, [], "m", bedrock.extras()), "bedrock-converse")
    assert (body["serviceTier"], body["requestMetadata"]) == ({"type": "flex"}, {"team": "blue"})
    gemini = plan_settings({"top_k": 4, "stop": "END", "candidate_count": 2}, "gemini")
    body = encode_request(Request(USER, [], "m", gemini.extras()), "gemini")
    assert body["generationConfig"] == {"stopSequences": ["END"], "topK": 4, "candidateCount": 2}
    cached = plan_settings({"prompt_cache": {"ttl": "1h"}}, "anthropic")
    body = encode_request(Request(USER, [], "m", cached.extras()), "anthropic")
    assert body["cache_control"] == {"type": "ephemeral", "ttl": "1h"} and body["max_tokens"] == 4096
    # A wire that cannot carry a value says so, rather than sending another: Cohere names no single tool.
    named = plan_settings({"tool_choice": {"name": "get_weather"}}, "cohere", weather_registry().definitions())
    assert [problem.setting for problem in named.problems] == ["tool_choice"]
    assert "cohere cannot state" in named.problems[0].reason
    # The same place set twice, as the portable setting and as the wire's own, is refused rather than guessed.
    twice = plan_settings({"max_tokens": 10, "max_completion_tokens": 20}, "openai-chat")
    assert [problem.setting for problem in twice.problems] == ["max_completion_tokens"]


def test_on_unsupported_note_runs_without_the_setting_and_says_so_in_the_events(endpoint: Endpoint) -> None:
    wire = endpoint.model.wire
    events: list[Any] = []
    result = run(
        USER,
        endpoint.model,
        weather_registry(),
        settings={"no_such_setting": 1, "max_tokens": 12},
        on_unsupported="note",
        on_event=events.append,
    )
    assert result.stop_reason == "finished", result.error
    [note] = [event for event in events if event.type == "note"]
    assert note.data["setting"] == "no_such_setting" and note.data["wire"] == wire
    assert "no_such_setting" in note.data["message"]
    assert [event.type for event in events[:2]] == ["run_started", "note"]
    body = json.loads(endpoint.sent()[-1].body)
    assert "no_such_setting" not in json.dumps(body)
    assert 12 in (body.get("max_tokens"), body.get("max_completion_tokens"), body.get("max_output_tokens")) or (
        body["generationConfig"]["maxOutputTokens"] == 12
    )


def test_arun_checks_settings_the_same_way() -> None:
    served = Endpoint("openai-chat")
    try:
        with pytest.raises(UnsupportedSettings, match="thinking: openai-chat has no such setting"):
            asyncio.run(arun(USER, served.model, weather_registry(), settings={"thinking": {"type": "enabled"}}))
        result = asyncio.run(arun(USER, served.model, weather_registry(), settings={"presence_penalty": 0.5}))
        assert result.stop_reason == "finished"
        assert json.loads(served.sent()[-1].body)["presence_penalty"] == 0.5
    finally:
        served.close()


def test_extra_body_is_sent_as_given_on_any_wire_but_not_over_the_runs_own_fields() -> None:
    served = Endpoint("anthropic")
    try:
        result = run(USER, served.model, weather_registry(), settings={"extra_body": {"temperature": 0.2}})
        assert result.stop_reason == "finished"
        assert json.loads(served.sent()[-1].body)["temperature"] == 0.2
        with pytest.raises(UnsupportedSettings, match="extra_body.messages: not a setting"):
            run(USER, served.model, weather_registry(), settings={"extra_body": {"messages": []}})
    finally:
        served.close()


def test_a_client_without_a_wire_gets_the_portable_settings_only() -> None:
    from toolgen.runtime import ScriptedModel

    seen: list[Request] = []

    class Model(ScriptedModel):
        def complete(self, request: Request) -> Any:
            seen.append(request)
            return super().complete(request)

    result = run(USER, Model(["ok"]), Registry({}), settings={"reasoning_effort": "low", "max_tokens": 5})
    assert result.stop_reason == "finished"
    assert seen[0].extras == {"settings": {"reasoning_effort": "low", "max_tokens": 5}}
    with pytest.raises(UnsupportedSettings, match="names no wire"):
        run(USER, Model(["ok"]), Registry({}), settings={"frequency_penalty": 1})


def test_each_wires_vocabulary_and_reserved_fields_do_not_overlap() -> None:
    from toolgen.runtime.wires.anthropic.codec import DEFAULT_MAX_TOKENS
    from toolgen.runtime.wires.settings import ANTHROPIC_DEFAULT_MAX_TOKENS
    from toolgen.runtime.wires.table import WIRES

    assert set(SETTINGS_TYPES) == set(WIRES)
    assert ANTHROPIC_DEFAULT_MAX_TOKENS == DEFAULT_MAX_TOKENS
    for wire in SETTINGS_TYPES:
        assert not set(vocabulary(wire)) & set(reserved(wire)), wire
    for setting, row in TABLE.items():
        assert set(row) <= set(SETTINGS_TYPES), setting


def test_the_docs_table_names_every_portable_setting() -> None:
    page = (REPO_ROOT / "docs" / "agent-loop.md").read_text(encoding="utf-8")
    section = page.split("## Run settings per wire", 1)[1].split("\n#", 1)[0]
    for setting in TABLE:
        assert f"`{setting}`" in section, setting


def test_python_m_package_takes_settings_and_refuses_what_the_wire_cannot_carry(source_build: Path) -> None:
    served = Endpoint("openai-chat")
    base = served.server.base + "/v1"
    common = ["hi", "--base-url", base, "--model", "m", "--api-key-env", "NO_SUCH_KEY"]
    try:
        ran = _package(source_build, *common, "--setting", "reasoning_effort=high", "--setting", "n=1")
        assert ran.returncode == 0, ran.stderr
        body = json.loads(served.sent()[-1].body)
        assert (body["reasoning_effort"], body["n"]) == ("high", 1)
        refused = _package(source_build, *common, "--setting", "thinking={}")
        assert refused.returncode == 2 and "thinking: openai-chat has no such setting" in refused.stderr
        noted = _package(source_build, *common, "--setting", "thinking={}", "--on-unsupported", "note", "--events")
        assert noted.returncode == 0 and "event: note" in noted.stdout
    finally:
        served.close()


def _package(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    from support.projects import SOURCE_PACKAGE

    return subprocess.run(
        [sys.executable, "-m", SOURCE_PACKAGE, *args], cwd=root, capture_output=True, text=True, timeout=120
    )


SERVED = """
import json, sys, time
import pydantic
from toolgen.runtime import DurableRuns, HTTPModel, Registry, RunOptions

model = HTTPModel(sys.argv[1], "m", api_key="sk-test")
options = RunOptions(
    stream=False,
    settings={"reasoning_effort": "high", "frequency_penalty": 0.5, "no_such_setting": 1},
    on_unsupported="note",
)
runs = DurableRuns(Registry({}), model, database_url=f"sqlite:///{sys.argv[2]}", name="settings-test", options=options)
run_id = runs.start([{"role": "user", "content": "hi"}], None)
deadline = time.monotonic() + 60
while runs.store.run(run_id).status not in ("finished", "error", "stopped") and time.monotonic() < deadline:
    time.sleep(0.05)
print(json.dumps([event.type for event in runs.store.events_after(run_id, 0)]))
runs.close()
"""


def test_a_served_run_sends_the_same_settings_as_run(tmp_path: Path) -> None:
    pytest.importorskip("dbos", reason="the durable extra (dbos) is not installed")
    from toolgen.runtime.serve.durable import DurableRuns

    served = Endpoint("openai-chat")
    try:
        with pytest.raises(UnsupportedSettings, match="frequency_penaltyy: openai-chat has no such setting"):
            DurableRuns(
                Registry({}),
                served.model,
                database_url="sqlite:///unused",
                options=RunOptions(settings={"frequency_penaltyy": 1}),
            )
        script = tmp_path / "served.py"
        script.write_text(textwrap.dedent(SERVED), encoding="utf-8")
        done = subprocess.run(
            [sys.executable, str(script), served.server.base + "/v1", str(tmp_path / "runs.sqlite")],
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert done.returncode == 0, done.stderr
        body = json.loads(served.sent()[-1].body)
        assert (body["reasoning_effort"], body["frequency_penalty"]) == ("high", 0.5)
        assert "no_such_setting" not in body
        assert "note" in json.loads(done.stdout.splitlines()[-1])
    finally:
        served.close()
