"""`toolgen validate` on recorded streams (checked as the message they aggregate to) and `--as messages` pairing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.projects import Project, shared_dir

import toolgen
from toolgen.payloads.validation.local import Tally
from toolgen.runtime.streams.aggregator import aggregate
from toolgen.runtime.wires.canonical import Response


def corpus_streams() -> list[Path]:
    return sorted(shared_dir("payloads").glob("*/stream/*"))


def sse(chunks: list[dict[str, object]]) -> str:
    return "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n"


def chat_chunk(delta: dict[str, object], finish: str | None = None) -> dict[str, object]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "gpt-4o",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def weather_stream(arguments: list[str]) -> str:
    call = {"index": 0, "id": "c1", "type": "function", "function": {"name": "get_current_weather", "arguments": ""}}
    chunks = [chat_chunk({"role": "assistant", "tool_calls": [call]})]
    chunks += [chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": part}}]}) for part in arguments]
    return sse([*chunks, chat_chunk({}, "tool_calls")])


def test_every_corpus_stream_is_read_as_a_stream_and_its_message_passes(make_project: object) -> None:
    """A project offering every tool the recorded streams call (any arguments): each file is one valid record."""
    streams = corpus_streams()
    names: set[str] = set()
    for path in streams:
        result = aggregate(path.read_bytes())
        if isinstance(result, Response):
            names.update(call["function"]["name"] for call in result.message.get("tool_calls") or ())
    assert make_project is not None
    project: Project = make_project()  # type: ignore[operator]
    for name in sorted(names):
        project.write(
            f"schemas/{name}.yaml",
            f"name: {name}\ndescription: A tool the recorded streams call.\ninputSchema: {{type: object}}\n",
        )
    assert project.cli("build").returncode == 0
    for path in streams:
        tally = Tally()
        findings = list(
            toolgen.validate([path], kind=f"{path.parent.parent.name}.response", root=project.root, tally=tally)
        )
        assert findings == [], path.name
        assert (tally.records, tally.invalid, tally.unreadable) == (1, 0, 0), path.name


@pytest.mark.parametrize("suffix", [".sse", ".jsonl"])
def test_a_recorded_stream_is_one_record_checked_as_its_aggregated_message(project: Project, suffix: str) -> None:
    good, bad = weather_stream(['{"location"', ': "Paris"}']), weather_stream(['{"location"', ": 5}"])
    if suffix == ".jsonl":
        good, bad = (
            "\n".join(line[6:] for line in text.splitlines() if line.startswith("data: {")) + "\n"
            for text in (good, bad)
        )
    project.write(f"logs/good{suffix}", good)
    project.write(f"logs/bad{suffix}", bad)
    ok = project.cli("validate", f"logs/good{suffix}", "--as", "openai-chat.response")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "1 record(s), 0 invalid" in ok.stderr
    refused = project.cli("validate", f"logs/bad{suffix}", "--as", "openai-chat.response")
    assert refused.returncode == 1
    # At the event that started the call, pointed into its payload (past `data: ` in an SSE file): at its
    # arguments, which hold only a fragment there; the sentence names the value's place.
    col = 255 if suffix == ".sse" else 249
    assert refused.stdout.splitlines() == [
        f"logs/bad{suffix}:1:{col}: error arguments-invalid /choices/0/delta/tool_calls/0/function/arguments: "
        "arguments of 'get_current_weather' at /location: expected a string, got 5"
    ]


def test_a_stream_whose_call_is_cut_is_a_stream_finding(project: Project) -> None:
    call = {"index": 0, "id": "c1", "type": "function", "function": {"name": "get_current_weather", "arguments": "{"}}
    project.write("logs/cut.sse", "".join(f"data: {json.dumps(chat_chunk({'tool_calls': [call]}))}\n\n"))
    result = project.cli("validate", "logs/cut.sse", "--as", "openai-chat.response")
    assert result.returncode == 1
    # Where the stream stops: its last event.
    assert "logs/cut.sse:1:7: error stream-invalid not a valid openai-chat stream: tool call 0" in result.stdout


def test_a_jsonl_log_of_whole_responses_is_still_one_record_a_line(project: Project) -> None:
    response = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "gpt-4o",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
    }
    project.write("logs/responses.jsonl", f"{json.dumps(response)}\n{json.dumps(response)}\n")
    result = project.cli("validate", "logs/responses.jsonl", "--as", "openai-chat.response")
    assert result.returncode == 0 and "2 record(s), 0 invalid" in result.stderr


def test_summary_counts_the_calls_of_a_stream(project: Project) -> None:
    project.write("logs/good.sse", weather_stream(['{"location": "Paris"}']))
    result = project.cli("validate", "logs/good.sse", "--as", "openai-chat.response", "--summary", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert '"get_current_weather"' in result.stdout and '"calls": 1' in result.stdout


CALL = {
    "id": "c1",
    "type": "function",
    "function": {"name": "get_current_weather", "arguments": '{"location": "Paris"}'},
}


def test_messages_pair_every_result_with_a_call_and_every_call_with_a_result(project: Project) -> None:
    paired = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    ]
    unanswered = [{"role": "user", "content": "Weather?"}, {"role": "assistant", "content": None, "toolCalls": [CALL]}]
    stray = [{"role": "user", "content": "Weather?"}, {"role": "tool", "toolCallId": "c9", "content": "sunny"}]
    project.write("logs/talk.jsonl", "\n".join(json.dumps(m) for m in (paired, unanswered, stray)) + "\n")
    result = project.cli("validate", "logs/talk.jsonl", "--as", "messages", "--format", "json")
    assert result.returncode == 1
    found = [(f["line"], f["rule"], f["pointer"]) for f in json.loads(result.stdout)]
    assert found == [(2, "pairing-invalid", "/1/toolCalls/0"), (3, "pairing-invalid", "/1/toolCallId")]
    text = project.cli("validate", "logs/talk.jsonl", "--as", "messages").stdout
    assert "tool call 'c1' has no tool message answering it" in text
    assert "2 invalid" in project.cli("validate", "logs/talk.jsonl", "--as", "messages").stderr


def test_a_folder_of_recordings_includes_its_streams_for_a_provider_response(project: Project) -> None:
    project.write("recordings/a.sse", weather_stream(['{"location": "Oslo"}']))
    project.write("recordings/b.json", '{"role": "user", "content": "hi"}')
    as_wire = project.cli("validate", "recordings", "--as", "openai-chat.response", "--format", "json")
    assert "2 record(s)" in as_wire.stderr
    as_message = project.cli("validate", "recordings", "--as", "message")
    assert as_message.returncode == 0 and "1 record(s), 0 invalid" in as_message.stderr


def test_an_ndjson_log_of_whole_ollama_responses_stays_one_record_a_line(project: Project) -> None:
    done = {"model": "llama3", "message": {"role": "assistant", "content": "hi"}, "done": True, "done_reason": "stop"}
    project.write("logs/ollama.ndjson", f"{json.dumps(done)}\n{json.dumps(done)}\n")
    whole = project.cli("validate", "logs/ollama.ndjson", "--as", "ollama.response")
    assert whole.returncode == 0 and "2 record(s), 0 invalid" in whole.stderr
    chunks = [{"model": "llama3", "message": {"role": "assistant", "content": "h"}, "done": False}, done]
    project.write("logs/stream.ndjson", "".join(f"{json.dumps(chunk)}\n" for chunk in chunks))
    stream = project.cli("validate", "logs/stream.ndjson", "--as", "ollama.response")
    assert stream.returncode == 0 and "1 record(s), 0 invalid" in stream.stderr
