"""Synthetic streamed responses of each wire, framed as its provider frames them (event: lines, CRLF, eventstream).

Every stream says the same thing in its wire's words: text in `text_chunks` deltas, then `calls` tool calls, each
one's arguments in about `fragments` pieces where the wire streams arguments (Gemini and Ollama send a call whole,
Gemini's partialArgs streams it value by value). `Shape.reads` are the network reads (one event each, as a
server flushing per token sends them); `Shape.payloads` the JSON text of each event, what a parser alone reads.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Any

WORDS = (
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "a",
    "lazy",
    "dog",
    "while",
    "seven",
    "wizards",
    "quietly",
    "hex",
    "jolly",
    "kings",
)


@dataclass(frozen=True)
class Shape:
    """One wire's stream: its reads, the JSON payload of each event, and the calls it must aggregate to."""

    wire: str
    framing: str
    reads: list[bytes]
    payloads: list[bytes]
    calls: list[tuple[str, dict[str, Any]]]


def _compact(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def arguments_of(call: int, fragments: int) -> dict[str, Any]:
    words = [WORDS[(call * 7 + i) % len(WORDS)] for i in range(fragments)]
    return {"query": " ".join(words[: fragments // 2]), "notes": words[fragments // 2 :], "call": call}


def pieces(text: str, fragments: int) -> list[str]:
    """`text` in about `fragments` pieces of a few characters, like model tokens."""
    size = max(1, len(text) // fragments)
    return [text[i : i + size] for i in range(0, len(text), size)]


def _sse(events: list[tuple[str | None, Any]], line_end: bytes = b"\n") -> tuple[list[bytes], list[bytes]]:
    reads, payloads = [], []
    for name, value in events:
        data = _compact(value)
        head = b"" if name is None else b"event: " + name.encode() + line_end
        reads.append(head + b"data: " + data + line_end + line_end)
        payloads.append(data)
    return reads, payloads


def anthropic(calls: int, fragments: int, text_chunks: int) -> Shape:
    events: list[tuple[str | None, Any]] = []

    def add(value: dict[str, Any]) -> None:
        events.append((value["type"], value))

    message: dict[str, Any] = {"id": "msg_01E3Wn1NynZw9FALZ68znj9S", "type": "message", "role": "assistant"}
    message |= {"model": "claude-sonnet-4-5", "content": [], "stop_reason": None, "stop_sequence": None}
    message["usage"] = {"input_tokens": 900, "cache_read_input_tokens": 0, "output_tokens": 1}
    add({"type": "message_start", "message": message})
    add({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
    add({"type": "ping"})
    for i in range(text_chunks):
        add({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": " " + WORDS[i % 16]}})
    add({"type": "content_block_stop", "index": 0})
    expected = []
    for call in range(calls):
        index, arguments = call + 1, arguments_of(call, fragments)
        block = {"type": "tool_use", "id": f"toolu_{call:024d}", "name": f"tool_{call}", "input": {}}
        add({"type": "content_block_start", "index": index, "content_block": block})
        for piece in pieces(json.dumps(arguments), fragments):
            delta = {"type": "input_json_delta", "partial_json": piece}
            add({"type": "content_block_delta", "index": index, "delta": delta})
        add({"type": "content_block_stop", "index": index})
        expected.append((f"tool_{call}", arguments))
    stop = {"stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None}
    add({"type": "message_delta", "delta": stop, "usage": {"output_tokens": 4000}})
    add({"type": "message_stop"})
    return Shape("anthropic", "sse", *_sse(events), expected)


def responses(calls: int, fragments: int, text_chunks: int) -> Shape:
    events: list[tuple[str | None, Any]] = []

    def add(value: dict[str, Any]) -> None:
        # OpenAI's key order: the type, then the sequence number, then the event's own keys.
        events.append((value["type"], {"type": value.pop("type"), "sequence_number": len(events), **value}))

    head = {"id": "resp_04041325ab8ae30400698c519fb7fc8197", "object": "response", "created_at": 1770803615}
    head |= {"model": "gpt-5.1", "status": "in_progress", "output": []}
    add({"type": "response.created", "response": head})
    add({"type": "response.in_progress", "response": head})
    text = {"id": "msg_0001", "type": "message", "role": "assistant", "status": "in_progress", "content": []}
    add({"type": "response.output_item.added", "output_index": 0, "item": text})
    part = {"type": "output_text", "text": "", "annotations": []}
    add(
        {
            "type": "response.content_part.added",
            "item_id": "msg_0001",
            "output_index": 0,
            "content_index": 0,
            "part": part,
        }
    )
    words = [" " + WORDS[i % 16] for i in range(text_chunks)]
    for word in words:
        delta = {"item_id": "msg_0001", "output_index": 0, "content_index": 0, "delta": word}
        add({"type": "response.output_text.delta", **delta})
    done_text = {**text, "status": "completed", "content": [{**part, "text": "".join(words)}]}
    add({"type": "response.output_item.done", "output_index": 0, "item": done_text})
    output: list[Any] = [done_text]
    expected = []
    for call in range(calls):
        index, arguments = call + 1, arguments_of(call, fragments)
        item = {"id": f"fc_{call:04d}", "type": "function_call", "status": "in_progress", "arguments": ""}
        item |= {"call_id": f"call_{call:024d}", "name": f"tool_{call}"}
        add({"type": "response.output_item.added", "output_index": index, "item": item})
        text_of = json.dumps(arguments)
        for piece in pieces(text_of, fragments):
            add(
                {
                    "type": "response.function_call_arguments.delta",
                    "item_id": item["id"],
                    "output_index": index,
                    "delta": piece,
                }
            )
        add(
            {
                "type": "response.function_call_arguments.done",
                "item_id": item["id"],
                "output_index": index,
                "arguments": text_of,
            }
        )
        done = {**item, "status": "completed", "arguments": text_of}
        add({"type": "response.output_item.done", "output_index": index, "item": done})
        output.append(done)
        expected.append((f"tool_{call}", arguments))
    usage = {"input_tokens": 900, "output_tokens": 4000, "total_tokens": 4900}
    add({"type": "response.completed", "response": {**head, "status": "completed", "output": output, "usage": usage}})
    return Shape("openai-responses", "sse", *_sse(events), expected)


def _gemini_chunk(parts: list[dict[str, Any]], finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    chunk: dict[str, Any] = {"candidates": [candidate], "modelVersion": "gemini-2.5-flash"}
    chunk["usageMetadata"] = {"promptTokenCount": 900, "candidatesTokenCount": 40, "totalTokenCount": 940}
    chunk["responseId"] = "dqHOab6xGLzWodAPkPuViA4"
    return chunk


def gemini(calls: int, fragments: int, text_chunks: int) -> Shape:
    """Gemini's SSE (`alt=sse`), CRLF line ends as Google sends them; each call arrives whole in one part."""
    chunks = [_gemini_chunk([{"text": " " + WORDS[i % 16]}]) for i in range(text_chunks)]
    expected = []
    for call in range(calls):
        arguments = arguments_of(call, fragments)
        chunks.append(_gemini_chunk([{"functionCall": {"name": f"tool_{call}", "args": arguments}}]))
        expected.append((f"tool_{call}", arguments))
    chunks.append(_gemini_chunk([{"text": ""}], "STOP"))
    return Shape("gemini", "sse", *_sse([(None, chunk) for chunk in chunks], b"\r\n"), expected)


def gemini_partial_args(calls: int, fragments: int, text_chunks: int) -> Shape:
    """Gemini 3 streaming a call's arguments (`streamFunctionCallArguments`): partialArgs entries, value by value."""
    chunks = [_gemini_chunk([{"text": " " + WORDS[i % 16]}]) for i in range(text_chunks)]
    expected = []
    for call in range(calls):
        arguments = arguments_of(call, fragments)
        chunks.append(_gemini_chunk([{"functionCall": {"name": f"tool_{call}", "willContinue": True}}]))
        query = pieces(arguments["query"], fragments // 2)
        entries: list[dict[str, Any]] = [
            {"jsonPath": "$.query", "stringValue": piece, "willContinue": i < len(query) - 1}
            for i, piece in enumerate(query)
        ]
        entries += [{"jsonPath": f"$.notes[{i}]", "stringValue": note} for i, note in enumerate(arguments["notes"])]
        entries.append({"jsonPath": "$.call", "numberValue": call})
        for entry in entries:
            chunks.append(_gemini_chunk([{"functionCall": {"partialArgs": [entry], "willContinue": True}}]))
        chunks.append(_gemini_chunk([{"functionCall": {}}]))
        expected.append((f"tool_{call}", arguments))
    chunks.append(_gemini_chunk([{"text": ""}], "STOP"))
    return Shape("gemini", "sse", *_sse([(None, chunk) for chunk in chunks], b"\r\n"), expected)


def _eventstream_message(event: str, payload: bytes) -> bytes:
    headers = b""
    for name, value in ((":event-type", event), (":content-type", "application/json"), (":message-type", "event")):
        headers += bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(value)) + value.encode()
    total = 12 + len(headers) + len(payload) + 4
    prelude = struct.pack(">II", total, len(headers))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + headers + payload
    return message + struct.pack(">I", zlib.crc32(message))


def bedrock(calls: int, fragments: int, text_chunks: int) -> Shape:
    """Bedrock ConverseStream: AWS eventstream messages, each event's name in its `:event-type` header."""
    events: list[tuple[str, dict[str, Any]]] = [("messageStart", {"role": "assistant", "p": "abcdefgh"})]
    for i in range(text_chunks):
        events.append(
            ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": " " + WORDS[i % 16]}, "p": "abcd"})
        )
    events.append(("contentBlockStop", {"contentBlockIndex": 0, "p": "abcdef"}))
    expected = []
    for call in range(calls):
        index, arguments = call + 1, arguments_of(call, fragments)
        start = {"toolUse": {"toolUseId": f"tooluse_{call:022d}", "name": f"tool_{call}"}}
        events.append(("contentBlockStart", {"contentBlockIndex": index, "start": start, "p": "abc"}))
        for piece in pieces(json.dumps(arguments), fragments):
            events.append(
                ("contentBlockDelta", {"contentBlockIndex": index, "delta": {"toolUse": {"input": piece}}, "p": "ab"})
            )
        events.append(("contentBlockStop", {"contentBlockIndex": index, "p": "abcdef"}))
        expected.append((f"tool_{call}", arguments))
    events.append(("messageStop", {"stopReason": "tool_use" if calls else "end_turn", "p": "abcdefghij"}))
    usage = {"inputTokens": 900, "outputTokens": 4000, "totalTokens": 4900}
    events.append(("metadata", {"usage": usage, "metrics": {"latencyMs": 1234}, "p": "abc"}))
    payloads = [_compact(value) for _, value in events]
    reads = [_eventstream_message(name, payload) for (name, _), payload in zip(events, payloads, strict=True)]
    return Shape("bedrock-converse", "eventstream", reads, payloads, expected)


def _stamp(line: int) -> str:
    """A line's `created_at` as Ollama writes it: a new one on every line, about 5 ms apart, to the microsecond."""
    moment = datetime(2025, 8, 20, 13, 48, 24, 316155) + timedelta(microseconds=4998 * line)
    return moment.isoformat(timespec="microseconds") + "Z"


def ollama(calls: int, fragments: int, text_chunks: int) -> Shape:
    """Ollama's NDJSON: one JSON object a line, each with its own `created_at` (as in the recorded streams); a tool
    call arrives whole, its arguments an object."""
    chunks = [
        {
            "model": "qwen3:8b",
            "created_at": _stamp(i),
            "message": {"role": "assistant", "content": " " + WORDS[i % 16]},
            "done": False,
        }
        for i in range(text_chunks)
    ]
    expected = []
    for call in range(calls):
        arguments = arguments_of(call, fragments)
        message = {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": f"tool_{call}", "arguments": arguments}}],
        }
        chunks.append({"model": "qwen3:8b", "created_at": _stamp(len(chunks)), "message": message, "done": False})
        expected.append((f"tool_{call}", arguments))
    head = {"model": "qwen3:8b", "created_at": _stamp(len(chunks))}
    done = {**head, "message": {"role": "assistant", "content": ""}, "done_reason": "stop", "done": True}
    chunks.append(done | {"total_duration": 171946792, "prompt_eval_count": 900, "eval_count": 4000})
    payloads = [_compact(chunk) for chunk in chunks]
    return Shape("ollama", "jsonl", [payload + b"\n" for payload in payloads], payloads, expected)


# name -> (builder, text chunks): wires that send calls whole get a longer text, so every stream has ~1,500 events.
SHAPES: MappingProxyType[str, tuple[Callable[[int, int, int], Shape], int]] = MappingProxyType(
    {
        "anthropic (event: lines)": (anthropic, 40),
        "openai-responses (event: lines)": (responses, 40),
        "gemini (CRLF)": (gemini, 1_500),
        "gemini partialArgs (CRLF)": (gemini_partial_args, 40),
        "bedrock-converse (eventstream)": (bedrock, 40),
        "ollama (NDJSON)": (ollama, 1_500),
    }
)
